/**
 * HTTP routes of scale-out, answering what the wire API answers (the one
 * request path: this broker's own handlers): partition reassignments (list
 * with progress, start, cancel), preferred-leader election and broker
 * decommission.
 */
import { MqError, errorCodeFromNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import type { Router } from '../router.js';
import type { TopicBackend } from '../backends/types.js';
import { partitionParam, topicParam, TopicName } from '../schemas.js';

const brokerId = { type: 'integer', minimum: 0, maximum: 2147483647 };
const brokerList = { type: 'array', items: brokerId };
const partitionNumber = { type: 'integer', minimum: 0, maximum: 2147483647 };
const partitionError = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } };
const partitionResults = {
  type: 'array',
  items: { type: 'object', required: ['topic', 'partition'], properties: { topic: { type: 'string' }, partition: { type: 'integer' }, error: partitionError } },
};
const reassignmentList = {
  type: 'object',
  required: ['reassignments'],
  properties: {
    reassignments: {
      type: 'array',
      items: {
        type: 'object',
        required: ['topic', 'partition', 'replicas', 'target_replicas', 'adding_replicas', 'removing_replicas', 'leader', 'isr'],
        properties: {
          topic: { type: 'string' },
          partition: { type: 'integer' },
          replicas: brokerList,
          target_replicas: brokerList,
          adding_replicas: brokerList,
          removing_replicas: brokerList,
          leader: { type: 'integer' },
          isr: brokerList,
          progress: {
            type: 'object',
            properties: {
              leader_log_end_offset: { type: 'integer' },
              leader_log_bytes: { type: 'integer' },
              adding: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { broker: { type: 'integer' }, log_end_offset: { type: 'integer' }, offset_lag: { type: 'integer' }, bytes_behind: { type: 'integer' }, in_isr: { type: 'boolean' } },
                },
              },
            },
          },
        },
      },
    },
  },
};

function results(list: readonly mq.IPartitionResult[] | null | undefined) {
  return (list ?? []).map((r) => {
    const code = errorCodeFromNumber(r.errorCode ?? 0);
    return { topic: r.topic ?? '', partition: r.partition ?? 0, ...(code !== 'NONE' ? { error: { code, message: r.errorMessage ?? '' } } : {}) };
  });
}

function reassignment(r: mq.IOngoingReassignment) {
  return {
    topic: r.topic ?? '',
    partition: r.partition ?? 0,
    replicas: r.replicas ?? [],
    target_replicas: r.targetReplicas ?? [],
    adding_replicas: r.addingReplicas ?? [],
    removing_replicas: r.removingReplicas ?? [],
    leader: r.leader ?? -1,
    isr: r.isr ?? [],
    ...(r.progressKnown
      ? {
          progress: {
            leader_log_end_offset: Number(r.leaderLogEndOffset ?? 0),
            leader_log_bytes: Number(r.leaderLogBytes ?? 0),
            adding: (r.addingProgress ?? []).map((a) => ({ broker: a.brokerId ?? 0, log_end_offset: Number(a.logEndOffset ?? -1), offset_lag: Number(a.offsetLag ?? 0), bytes_behind: Number(a.bytesBehind ?? 0), in_isr: a.inIsr ?? false })),
          },
        }
      : {}),
  };
}

async function alter(backend: TopicBackend, partitions: { topic: string; partition: number; replicas: number[] | null }[], allow: boolean) {
  const byTopic = new Map<string, mq.IReassignablePartition[]>();
  for (const p of partitions) {
    let l = byTopic.get(p.topic);
    if (!l) byTopic.set(p.topic, (l = []));
    l.push({ partition: p.partition, replicas: p.replicas ?? [], cancel: p.replicas === null });
  }
  const r = await backend.request(backend.brokerId, 'alterPartitionReassignments', { topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps })), timeoutMs: 30_000, allowReplicationFactorChange: allow });
  return results(r.results);
}

export function registerScaleoutRoutes(router: Router, backend: TopicBackend): void {
  router.add(
    'GET',
    '/reassignments',
    {
      operationId: 'listReassignments',
      summary: "Partition reassignments in progress, with each move's progress from its partition's leader",
      responses: { 200: { description: 'The moves in progress', schema: reassignmentList } },
      errors: [503],
    },
    async () => {
      const me = backend.brokerId;
      const r = await backend.request(me, 'listPartitionReassignments', { topics: [] });
      const out = (r.reassignments ?? []).map((x) => ({ ...x }));
      // The progress of a move is known to its partition's leader: ask each other leader once (best effort).
      const leaders = [...new Set(out.filter((x) => !x.progressKnown && (x.leader ?? -1) >= 0 && x.leader !== me).map((x) => x.leader!))];
      await Promise.all(
        leaders.map(async (id) => {
          const remote = await backend.request(id, 'listPartitionReassignments', { topics: [] }).catch(() => undefined);
          for (const e of remote?.reassignments ?? []) {
            const i = out.findIndex((x) => x.topic === e.topic && x.partition === e.partition && !x.progressKnown);
            if (i >= 0 && e.progressKnown) out[i] = e;
          }
        }),
      );
      return { status: 200, body: { reassignments: out.map(reassignment) } };
    },
  );

  router.add(
    'POST',
    '/reassignments',
    {
      operationId: 'alterReassignments',
      summary: 'Start (replicas: broker ids, preferred leader first) or cancel (replicas: null) partition reassignments',
      description:
        'New replicas follow the leader outside the ISR until they have caught up, then join it; the removed ones are dropped ' +
        'and a removed leader hands over to the new set. Each partition is answered on its own (error: INVALID_REPLICA_ASSIGNMENT, ' +
        'INVALID_REPLICATION_FACTOR unless allow_replication_factor_change, REASSIGNMENT_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION, ...).',
      body: {
        required: true,
        schema: {
          type: 'object',
          required: ['partitions'],
          additionalProperties: false,
          properties: {
            partitions: {
              type: 'array',
              minItems: 1,
              items: {
                type: 'object',
                required: ['topic', 'partition', 'replicas'],
                additionalProperties: false,
                properties: { topic: TopicName, partition: partitionNumber, replicas: { type: ['array', 'null'], items: brokerId, description: 'Broker ids, preferred leader first; null cancels' } },
              },
            },
            allow_replication_factor_change: { type: 'boolean', default: false },
          },
        },
      },
      responses: { 200: { description: 'One result per partition', schema: { type: 'object', required: ['results'], properties: { results: partitionResults } } } },
      errors: [503],
    },
    async (req) => {
      const body = req.input.body as { partitions: Array<{ topic: string; partition: number; replicas: number[] | null }>; allow_replication_factor_change: boolean };
      return { status: 200, body: { results: await alter(backend, body.partitions, body.allow_replication_factor_change) } };
    },
  );

  router.add(
    'DELETE',
    '/topics/{topic}/partitions/{partition}/reassignment',
    {
      operationId: 'cancelReassignment',
      summary: "Cancel a partition's reassignment: its original replicas are restored",
      params: { topic: topicParam, partition: partitionParam },
      responses: {
        200: {
          description: 'Cancelled',
          schema: { type: 'object', required: ['topic', 'partition', 'cancelled'], properties: { topic: { type: 'string' }, partition: { type: 'integer' }, cancelled: { const: true } } },
        },
      },
      errors: [404, 503],
    },
    async (req) => {
      const [r] = await alter(backend, [{ topic: req.params.topic!, partition: req.input.params.partition as number, replicas: null }], false);
      if (r?.error) throw new MqError(r.error.code, r.error.message, r.error.code === 'UNKNOWN_TOPIC_OR_PARTITION' ? { retriable: false } : {});
      return { status: 200, body: { topic: req.params.topic!, partition: r?.partition ?? 0, cancelled: true } };
    },
  );

  router.add(
    'POST',
    '/elect-leaders',
    {
      operationId: 'electLeaders',
      summary: 'Preferred-leader election (every partition, or those named): leadership moves to the first replica where it is alive and in sync',
      body: {
        required: false,
        schema: {
          type: 'object',
          additionalProperties: false,
          properties: {
            topics: {
              type: 'array',
              items: { type: 'object', required: ['topic'], additionalProperties: false, properties: { topic: TopicName, partitions: { type: 'array', items: partitionNumber, description: 'Default: every partition' } } },
              description: 'Default: every topic',
            },
          },
        },
      },
      responses: { 200: { description: 'Leaders moved', schema: { type: 'object', required: ['moved', 'results'], properties: { moved: { type: 'integer' }, results: partitionResults } } } },
      errors: [503],
    },
    async (req) => {
      const topics = (req.input.body as { topics?: Array<{ topic: string; partitions?: number[] }> }).topics ?? [];
      const wire = topics.map((t) => ({ name: t.topic, partitions: t.partitions ?? [] }));
      const r = await backend.request(backend.brokerId, 'electLeaders', { topics: wire, timeoutMs: 30_000 });
      return { status: 200, body: { moved: r.moved ?? 0, results: results(r.results) } };
    },
  );

  router.add(
    'POST',
    '/brokers/{broker}/decommission',
    {
      operationId: 'decommissionBroker',
      summary: 'Move every replica off a broker (then it can be stopped); {cancel: true} undoes the mark',
      description: "Refused (400 INVALID_REPLICATION_FACTOR, nothing changed) when the other live brokers cannot hold a partition's replication factor. Call again until remaining_replicas is 0.",
      params: { broker: { schema: brokerId } },
      body: { required: false, schema: { type: 'object', additionalProperties: false, properties: { cancel: { type: 'boolean', default: false } } } },
      responses: {
        200: {
          description: 'Moves started',
          schema: {
            type: 'object',
            required: ['broker', 'cancelled', 'remaining_replicas', 'moves'],
            properties: { broker: { type: 'integer' }, cancelled: { type: 'boolean' }, remaining_replicas: { type: 'integer' }, moves: partitionResults },
          },
        },
      },
      errors: [503],
    },
    async (req) => {
      const broker = req.input.params.broker as number;
      const cancel = (req.input.body as { cancel: boolean }).cancel;
      const r = await backend.request(backend.brokerId, 'decommissionBroker', { brokerId: broker, cancel, timeoutMs: 30_000 });
      return { status: 200, body: { broker, cancelled: cancel, remaining_replicas: r.remainingReplicas ?? 0, moves: results(r.moves) } };
    },
  );
}
