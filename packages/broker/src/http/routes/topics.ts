/** HTTP topic routes: create, list, describe, delete, watermarks, over a TopicBackend; each declares its schemas (route-spec.ts). */
import type { BrokerContext } from '../../context.js';
import { ERROR_CODE } from '../route-spec.js';
import type { Router } from '../router.js';
import { partitionParam, TopicDetail, TopicName, topicParam, TopicSummary } from '../schemas.js';
import type { TopicBackend, TopicSummaryView, TopicView } from '../backends/types.js';
import { refuseInternal } from '@mq/protocol/topic-name';

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

const createTopicBody = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: TopicName,
    partition_count: { type: 'integer', minimum: 1, description: "Default: the broker's num.partitions", [ERROR_CODE]: 'INVALID_PARTITIONS' },
    replication_factor: { type: 'integer', minimum: 1, description: 'Default: default.replication.factor; at most the number of brokers', [ERROR_CODE]: 'INVALID_REPLICATION_FACTOR' },
    configs: {
      type: 'object',
      additionalProperties: { type: 'string' },
      description:
        'retention.ms, retention.bytes, segment.bytes, segment.ms, index.interval.bytes, cleanup.policy, max.message.bytes, ' +
        'flush.policy (always|interval|os), flush.interval.ms, flush.interval.bytes, min.insync.replicas, message.timestamp.type',
    },
  },
};

export function registerTopicRoutes(router: Router, _ctx: BrokerContext, backend: TopicBackend): void {
  router.add(
    'POST',
    '/topics',
    {
      operationId: 'createTopic',
      summary: 'Create a topic',
      body: { required: true, schema: createTopicBody },
      responses: { 201: { description: 'The topic was created', schema: TopicDetail } },
      errors: [409, 503],
    },
    async (req) => {
      const body = req.input.body as { name: string; partition_count?: number; replication_factor?: number; configs?: Record<string, string> };
      refuseInternal(body.name, 'create');
      const r = await backend.createTopic({ name: body.name, numPartitions: body.partition_count, replicationFactor: body.replication_factor, configs: body.configs ?? {} });
      return { status: 201, body: { ...topicDetail(r.topic), ...(r.warning ? { warning: r.warning } : {}) } };
    },
  );

  router.add(
    'GET',
    '/topics',
    {
      operationId: 'listTopics',
      summary: 'List topics (internal ones such as __consumer_offsets only with include_internal=true)',
      query: { include_internal: { schema: { type: 'boolean', default: false } } },
      responses: { 200: { description: 'Every topic', schema: { type: 'array', items: TopicSummary } } },
    },
    async (req) => {
      const all = req.input.query.include_internal === true;
      return { status: 200, body: (await backend.listTopics()).filter((t) => all || !t.internal).map(topicSummary) };
    },
  );

  router.add(
    'GET',
    '/topics/{topic}',
    {
      operationId: 'describeTopic',
      summary: 'Describe a topic: configs, partitions, leaders, replicas, ISR, watermarks',
      params: { topic: topicParam },
      responses: { 200: { description: 'The topic', schema: TopicDetail } },
      errors: [404, 503],
    },
    async (req) => ({ status: 200, body: topicDetail(await backend.describeTopic(req.params.topic!)) }),
  );

  router.add(
    'DELETE',
    '/topics/{topic}',
    {
      operationId: 'deleteTopic',
      summary: 'Delete a topic and its data (not an internal topic: 400 INVALID_TOPIC)',
      params: { topic: topicParam },
      responses: {
        200: {
          description: 'The topic was deleted',
          schema: { type: 'object', required: ['name', 'deleted', 'partition_count'], properties: { name: { type: 'string' }, deleted: { const: true }, partition_count: { type: 'integer' } } },
        },
      },
      errors: [404, 503],
    },
    async (req) => {
      refuseInternal(req.params.topic!, 'delete');
      const r = await backend.deleteTopic(req.params.topic!);
      return { status: 200, body: { name: r.name, deleted: true, partition_count: r.partitionCount } };
    },
  );

  router.add(
    'GET',
    '/topics/{topic}/partitions/{partition}/watermarks',
    {
      operationId: 'watermarks',
      summary: 'Low (log start) and high (high watermark) offsets of a partition',
      params: { topic: topicParam, partition: partitionParam },
      responses: { 200: { description: 'Watermarks', schema: { type: 'object', required: ['low', 'high'], properties: { low: { type: 'integer' }, high: { type: 'integer' } } } } },
      errors: [404, 503],
    },
    async (req) => {
      const w = await backend.watermarks(req.params.topic!, req.input.params.partition as number, req.signal);
      return { status: 200, body: { low: w.low, high: w.high } };
    },
  );
}
