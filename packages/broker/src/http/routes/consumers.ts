/**
 * HTTP consumer groups, in the Confluent REST proxy's shape: create an instance in a group, subscribe it, poll
 * records (long-polled), commit, delete. For languages with no mq client; the instances are real group members
 * (http/consumers/consumer-instances.ts), so they share partitions with every other member of their group.
 * With authentication an instance is its creator's: it acts with that principal's ACLs and quotas.
 */
import { MqError } from '@mq/protocol/errors';
import type { BrokerContext } from '../../context.js';
import { httpSessions } from '../../security/http-auth.js';
import type { ConsumerInstances } from '../consumers/consumer-instances.js';
import { recordJson, type Encoding } from '../record-encoding.js';
import { ERROR_CODE } from '../route-spec.js';
import type { Router } from '../router.js';
import { encodingQuery, groupParam, ReadRecord, TopicName } from '../schemas.js';

/** An instance that cannot exist is as unknown as one that does not (404 UNKNOWN_MEMBER_ID). */
const instanceParam = { schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,128}$', [ERROR_CODE]: 'UNKNOWN_MEMBER_ID' } };
const instanceParams = { group: groupParam, instance: instanceParam };

/** The authenticated caller of this request ("" without authentication): an instance is its creator's only. */
const principalOf = (): string => httpSessions.getStore()?.principal ?? '';

export function registerConsumerRoutes(router: Router, ctx: BrokerContext, instances: ConsumerInstances): void {
  const base = (group: string, id: string) => `/consumers/${encodeURIComponent(group)}/instances/${encodeURIComponent(id)}`;

  router.add(
    'POST',
    '/consumers/{group}',
    {
      operationId: 'createConsumerInstance',
      summary: 'Create a consumer instance in a group (a real group member inside the broker)',
      description: 'The body may be left out. Instances not used for http.consumer.instance.timeout.ms are closed and leave the group.',
      params: { group: groupParam },
      body: {
        required: false,
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            name: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,128}$', description: 'Default: a random id' },
            auto_offset_reset: { type: 'string', enum: ['earliest', 'latest'], default: 'latest' },
            auto_commit: { type: 'boolean', default: false, description: 'Commit what polls returned in the background (otherwise POST .../offsets)' },
          },
        },
      },
      responses: { 200: { description: 'The instance', schema: { type: 'object', required: ['instance_id', 'base_uri'], properties: { instance_id: { type: 'string' }, base_uri: { type: 'string' } } } } },
      errors: [429],
    },
    async (req) => {
      const group = req.params.group!;
      const b = req.input.body as { name?: string; auto_offset_reset: 'earliest' | 'latest'; auto_commit: boolean };
      const instance = await instances.create(group, { ...(b.name !== undefined ? { name: b.name } : {}), autoOffsetReset: b.auto_offset_reset, autoCommit: b.auto_commit }, principalOf());
      return { status: 200, body: { instance_id: instance.id, base_uri: base(group, instance.id) } };
    },
  );

  router.add(
    'POST',
    '/consumers/{group}/instances/{instance}/subscription',
    {
      operationId: 'subscribeConsumerInstance',
      summary: 'Subscribe the instance to topics (replaces an earlier subscription); the group assigns it partitions',
      params: instanceParams,
      body: { required: true, schema: { type: 'object', required: ['topics'], additionalProperties: false, properties: { topics: { type: 'array', minItems: 1, items: TopicName } } } },
      responses: { 204: { description: 'Subscribed' } },
      errors: [404],
    },
    async (req) => {
      const instance = instances.get(req.params.group!, req.params.instance!, principalOf());
      instance.consumer.subscribe((req.input.body as { topics: string[] }).topics);
      return { status: 204 };
    },
  );

  router.add(
    'GET',
    '/consumers/{group}/instances/{instance}/assignments',
    {
      operationId: 'consumerInstanceAssignments',
      summary: 'The partitions the group assigned to the instance',
      params: instanceParams,
      responses: {
        200: {
          description: 'Assigned partitions',
          schema: {
            type: 'object',
            required: ['partitions'],
            properties: { partitions: { type: 'array', items: { type: 'object', required: ['topic', 'partition'], properties: { topic: { type: 'string' }, partition: { type: 'integer' } } } } },
          },
        },
      },
      errors: [404],
    },
    async (req) => {
      const instance = instances.get(req.params.group!, req.params.instance!, principalOf());
      return { status: 200, body: { partitions: instance.consumer.assignment().map((tp) => ({ topic: tp.topic, partition: tp.partition })) } };
    },
  );

  router.add(
    'GET',
    '/consumers/{group}/instances/{instance}/records',
    {
      operationId: 'pollConsumerInstance',
      summary: 'Poll records from the assigned partitions (a long poll)',
      params: instanceParams,
      query: {
        timeout_ms: { schema: { type: 'integer', minimum: 0, default: 1000 }, description: 'Wait up to this long for records (at most fetch.max.wait.ms)' },
        max_records: { schema: { type: 'integer', minimum: 1, maximum: 10_000, default: 500 } },
        encoding: encodingQuery,
      },
      responses: {
        200: {
          description: 'Records, in order within each partition',
          schema: {
            type: 'array',
            items: { allOf: [ReadRecord], type: 'object', required: ['topic', 'partition'], properties: { topic: { type: 'string' }, partition: { type: 'integer' } } },
          },
        },
      },
      errors: [404],
    },
    async (req) => {
      const instance = instances.get(req.params.group!, req.params.instance!, principalOf());
      const q = req.input.query as { timeout_ms: number; max_records: number; encoding: Encoding };
      const maxWait = ctx.config.int('fetch.max.wait.ms');
      if (q.timeout_ms > maxWait) throw new MqError('INVALID_REQUEST', `timeout_ms must be between 0 and ${maxWait} (fetch.max.wait.ms), got ${q.timeout_ms}`);
      const records = await instances.exclusive(instance, () => instance.consumer.poll(q.timeout_ms, { maxRecords: q.max_records, signal: req.signal }));
      return { status: 200, body: records.map((r) => ({ topic: r.topic, partition: r.partition, ...recordJson(r, q.encoding) })) };
    },
  );

  router.add(
    'POST',
    '/consumers/{group}/instances/{instance}/offsets',
    {
      operationId: 'commitConsumerInstance',
      summary: 'Commit offsets: the given ones (offset = the next record to read), or, with no body or no offsets, everything polls returned',
      params: instanceParams,
      body: {
        required: false,
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            offsets: {
              type: 'array',
              items: {
                type: 'object',
                required: ['topic', 'partition', 'offset'],
                additionalProperties: false,
                properties: { topic: TopicName, partition: { type: 'integer', minimum: 0 }, offset: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } },
              },
            },
          },
        },
      },
      responses: { 204: { description: 'Committed' } },
      errors: [404, 503],
    },
    async (req) => {
      const instance = instances.get(req.params.group!, req.params.instance!, principalOf());
      const offsets = (req.input.body as { offsets?: Array<{ topic: string; partition: number; offset: number }> }).offsets;
      // No offsets: everything the instance's polls returned so far.
      await instances.exclusive(instance, () => instance.consumer.commit(offsets, { signal: req.signal }));
      return { status: 204 };
    },
  );

  router.add(
    'DELETE',
    '/consumers/{group}/instances/{instance}',
    {
      operationId: 'deleteConsumerInstance',
      summary: 'Close the instance: it leaves its group (committing only with auto_commit)',
      params: instanceParams,
      responses: { 204: { description: 'Closed' } },
      errors: [404],
    },
    async (req) => {
      await instances.remove(req.params.group!, req.params.instance!, principalOf());
      return { status: 204 };
    },
  );
}
