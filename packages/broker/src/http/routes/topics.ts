/** HTTP topic routes: create, list, describe, delete, watermarks, over a TopicBackend. */
import { MqError } from '@mq/protocol/errors';
import type { BrokerContext } from '../../context.js';
import type { Router } from '../router.js';
import type { TopicBackend, TopicSummaryView, TopicView } from '../backends/types.js';
import { refuseInternal } from '@mq/protocol/topic-name';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * A count that may be left out (the broker's default); when given, at least 1 (0 is not "the default" here):
 * a non-integer is INVALID_REQUEST, one below 1 is `tooSmall` (INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR).
 */
function optionalCount(body: Record<string, unknown>, key: string, tooSmall: 'INVALID_PARTITIONS' | 'INVALID_REPLICATION_FACTOR'): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new MqError('INVALID_REQUEST', `"${key}" must be an integer`);
  if (v < 1) throw new MqError(tooSmall, `"${key}" must be at least 1 (leave it out for the broker's default), got ${v}`);
  return v;
}

export function topicSummary(t: TopicSummaryView) {
  return { name: t.name, partition_count: t.partitionCount, replication_factor: t.replicationFactor };
}

export function topicDetail(t: TopicView) {
  return {
    name: t.name,
    topic_id: t.topicId,
    partition_count: t.partitionCount,
    replication_factor: t.replicationFactor,
    configs: t.configs,
    partitions: t.partitions.map((p) => ({
      partition: p.partition,
      leader: p.leader,
      leader_epoch: p.leaderEpoch,
      replicas: p.replicas,
      isr: p.isr,
      ...(p.low !== undefined ? { low: p.low } : {}),
      ...(p.high !== undefined ? { high: p.high } : {}),
      ...(p.offline ? { offline: true } : {}),
      ...(p.error !== undefined ? { error: p.error } : {}),
    })),
  };
}

/** Parses the `{partition}` path parameter. */
export function partitionParam(raw: string | undefined): number {
  if (raw === undefined || !/^\d{1,9}$/.test(raw)) {
    throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `partition "${raw}" is not a partition number`, { retriable: false });
  }
  return Number(raw);
}

export function registerTopicRoutes(router: Router, _ctx: BrokerContext, backend: TopicBackend): void {
  router.add('POST', '/topics', async (req) => {
    const body = await req.json();
    if (!isObject(body)) throw new MqError('INVALID_REQUEST', 'the body must be an object {name, partition_count, replication_factor, configs}');
    if (typeof body.name !== 'string') throw new MqError('INVALID_TOPIC', '"name" must be a string');
    refuseInternal(body.name, 'create');
    const configs = body.configs ?? {};
    if (!isObject(configs)) throw new MqError('INVALID_CONFIG', '"configs" must be an object of string values');
    const r = await backend.createTopic({
      name: body.name,
      numPartitions: optionalCount(body, 'partition_count', 'INVALID_PARTITIONS'),
      replicationFactor: optionalCount(body, 'replication_factor', 'INVALID_REPLICATION_FACTOR'),
      configs,
    });
    return { status: 201, body: { ...topicDetail(r.topic), ...(r.warning ? { warning: r.warning } : {}) } };
  });

  router.add('GET', '/topics', async (req) => {
    const all = req.query.get('include_internal') === 'true';
    return { status: 200, body: (await backend.listTopics()).filter((t) => all || !t.internal).map(topicSummary) };
  });

  router.add('GET', '/topics/{topic}', async (req) => ({ status: 200, body: topicDetail(await backend.describeTopic(req.params.topic!)) }));

  router.add('DELETE', '/topics/{topic}', async (req) => {
    refuseInternal(req.params.topic!, 'delete');
    const r = await backend.deleteTopic(req.params.topic!);
    return { status: 200, body: { name: r.name, deleted: true, partition_count: r.partitionCount } };
  });

  router.add('GET', '/topics/{topic}/partitions/{partition}/watermarks', async (req) => {
    const w = await backend.watermarks(req.params.topic!, partitionParam(req.params.partition), req.signal);
    return { status: 200, body: { low: w.low, high: w.high } };
  });
}
