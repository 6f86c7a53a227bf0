/** HTTP topic routes: create, list, describe, delete, watermarks. */
import { MqError } from '@mq/protocol/errors';
import type { BrokerContext } from '../../context.js';
import type { Topic } from '../../topics/topic-manager.js';
import type { Router } from '../router.js';
import { refuseInternal } from '../../topics/topic-name.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function optionalInt(body: Record<string, unknown>, key: string): number | undefined {
  const v = body[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new MqError('INVALID_REQUEST', `"${key}" must be an integer`);
  return v;
}

export function topicSummary(t: Topic) {
  return { name: t.name, partition_count: t.partitions.length, replication_factor: t.replicationFactor };
}

export function topicDetail(t: Topic) {
  return {
    name: t.name,
    topic_id: t.topicId,
    partition_count: t.partitions.length,
    replication_factor: t.replicationFactor,
    configs: Object.fromEntries(t.config.entries().map((e) => [e.name, e.value])),
    partitions: t.partitions.map((p) => ({
      partition: p.index,
      leader: p.leaderId,
      leader_epoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      low: p.logStartOffset,
      high: p.highWatermark,
      ...(p.offline ? { offline: true, error: p.offline.error().message } : {}),
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

export function registerTopicRoutes(router: Router, ctx: BrokerContext): void {
  const topics = ctx.topics;

  router.add('POST', '/topics', async (req) => {
    const body = await req.json();
    if (!isObject(body)) throw new MqError('INVALID_REQUEST', 'the body must be an object {name, partition_count, replication_factor, configs}');
    if (typeof body.name !== 'string') throw new MqError('INVALID_TOPIC', '"name" must be a string');
    refuseInternal(body.name, 'create');
    const configs = body.configs ?? {};
    if (!isObject(configs)) throw new MqError('INVALID_CONFIG', '"configs" must be an object of string values');
    const r = await topics.create({
      name: body.name,
      numPartitions: optionalInt(body, 'partition_count'),
      replicationFactor: optionalInt(body, 'replication_factor'),
      configs,
    });
    const t = topics.require(r.name);
    return { status: 201, body: { ...topicDetail(t), ...(r.warning ? { warning: r.warning } : {}) } };
  });

  router.add('GET', '/topics', async (req) => {
    const all = req.query.get('include_internal') === 'true';
    return { status: 200, body: topics.list().filter((t) => all || !t.internal).map(topicSummary) };
  });

  router.add('GET', '/topics/{topic}', async (req) => ({ status: 200, body: topicDetail(topics.require(req.params.topic!)) }));

  router.add('DELETE', '/topics/{topic}', async (req) => {
    refuseInternal(req.params.topic!, 'delete');
    const r = await topics.delete(req.params.topic!);
    return { status: 200, body: { name: r.name, deleted: true, partition_count: r.numPartitions } };
  });

  router.add('GET', '/topics/{topic}/partitions/{partition}/watermarks', async (req) => {
    const p = topics.partition(req.params.topic!, partitionParam(req.params.partition));
    return { status: 200, body: { low: p.logStartOffset, high: p.highWatermark } };
  });
}
