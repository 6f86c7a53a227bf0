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
import { partitionParam } from './topics.js';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function int(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) throw new MqError('INVALID_REQUEST', `${what} must be an integer >= 0`);
  return v;
}

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
  router.add('GET', '/reassignments', async () => {
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
  });

  router.add('POST', '/reassignments', async (req) => {
    const body = await req.json();
    if (!isObject(body) || !Array.isArray(body.partitions) || body.partitions.length === 0) {
      throw new MqError('INVALID_REQUEST', 'the body must be {partitions: [{topic, partition, replicas}], allow_replication_factor_change?}');
    }
    const partitions = body.partitions.map((p: unknown) => {
      if (!isObject(p) || typeof p.topic !== 'string') throw new MqError('INVALID_REQUEST', 'each entry of partitions needs a topic, a partition and replicas (an array of broker ids, or null to cancel)');
      if (p.replicas !== null && !Array.isArray(p.replicas)) throw new MqError('INVALID_REQUEST', `${p.topic}: replicas must be an array of broker ids, or null to cancel`);
      return { topic: p.topic, partition: int(p.partition, 'partition'), replicas: p.replicas === null ? null : (p.replicas as unknown[]).map((x) => int(x, 'a replica')) };
    });
    return { status: 200, body: { results: await alter(backend, partitions, body.allow_replication_factor_change === true) } };
  });

  router.add('DELETE', '/topics/{topic}/partitions/{partition}/reassignment', async (req) => {
    const [r] = await alter(backend, [{ topic: req.params.topic!, partition: partitionParam(req.params.partition), replicas: null }], false);
    if (r?.error) throw new MqError(r.error.code, r.error.message, r.error.code === 'UNKNOWN_TOPIC_OR_PARTITION' ? { retriable: false } : {});
    return { status: 200, body: { topic: req.params.topic!, partition: r?.partition ?? 0, cancelled: true } };
  });

  router.add('POST', '/elect-leaders', async (req) => {
    const body = (await req.json().catch(() => ({}))) ?? {};
    if (!isObject(body)) throw new MqError('INVALID_REQUEST', 'the body must be {topics?: [{topic, partitions?}]}');
    const topics = body.topics === undefined ? [] : body.topics;
    if (!Array.isArray(topics)) throw new MqError('INVALID_REQUEST', '"topics" must be an array of {topic, partitions?}');
    const wire = topics.map((t: unknown) => {
      if (!isObject(t) || typeof t.topic !== 'string') throw new MqError('INVALID_REQUEST', 'each entry of topics needs a topic');
      const ps = t.partitions === undefined ? [] : t.partitions;
      if (!Array.isArray(ps)) throw new MqError('INVALID_REQUEST', `${t.topic}: partitions must be an array`);
      return { name: t.topic, partitions: ps.map((p) => int(p, 'partition')) };
    });
    const r = await backend.request(backend.brokerId, 'electLeaders', { topics: wire, timeoutMs: 30_000 });
    return { status: 200, body: { moved: r.moved ?? 0, results: results(r.results) } };
  });

  router.add('POST', '/brokers/{broker}/decommission', async (req) => {
    const raw = req.params.broker!;
    if (!/^\d{1,9}$/.test(raw)) throw new MqError('INVALID_REQUEST', `"${raw}" is not a broker id`);
    const body = (await req.json().catch(() => ({}))) ?? {};
    const cancel = isObject(body) && body.cancel === true;
    const r = await backend.request(backend.brokerId, 'decommissionBroker', { brokerId: Number(raw), cancel, timeoutMs: 30_000 });
    return { status: 200, body: { broker: Number(raw), cancelled: cancel, remaining_replicas: r.remainingReplicas ?? 0, moves: results(r.moves) } };
  });
}
