/**
 * Serves a whole Fetch request (consumers and followers alike) over the
 * partition leaders of this broker: reads at once, and when fewer than
 * minBytes are there, parks the request until enough data arrives, a
 * follower's high watermark moves, or maxWaitMs passes (Kafka's
 * DelayedFetch). Parking only registers listeners and a timer: nothing else
 * waits for it.
 */
import { MqError } from '@mq/protocol/errors';
import type { PartitionLeader } from './partition-leader.js';
import { CONSUMER_REPLICA_ID, UNDEFINED, type FetchPartitionResponse, type FetchRequest, type FetchResponse, type ReadPool } from './types.js';
import type { Timers } from '@mq/protocol/components';
import type { ThrottleBucket } from './throttle-bucket.js';

/** Finds this broker's leader of a partition; undefined when it does not lead it. */
export type LeaderLookup = (topic: string, partition: number) => PartitionLeader | undefined;

export interface HandleFetchComponents {
  timers: Timers;
  leaders: LeaderLookup;
  /** Whether this broker hosts the partition at all (UNKNOWN_TOPIC_OR_PARTITION vs NOT_LEADER). Default: yes. */
  hosts?: (topic: string, partition: number) => boolean;
  /**
   * Records are read into buffers of this pool; the caller releases the
   * response's records once it is written (a response discarded here, when
   * a long-poll reads again, is released here). Default: ordinary buffers.
   */
  pool?: ReadPool;
  /** Counts the requests parked here (the fetch purgatory), for metrics. */
  parked?: ParkedFetches;
  /**
   * The leader's side of the replication throttle (Kafka's
   * leader.replication.throttled.rate): a follower's fetch of a partition
   * `throttled` names (a replica being added) takes what it is sent from
   * `bucket`; while the bucket is in debt such a partition is answered with
   * no records (its fetch position is still recorded) and does not count
   * towards waking a parked fetch. Consumers are never throttled.
   */
  leaderThrottle?: { bucket: ThrottleBucket; throttled(topic: string, partition: number, replicaId: number): boolean };
  /**
   * Gives the event loop back between partition reads once a slice of work
   * has run (the broker's Slicer): a fetch naming thousands of partitions
   * started every read in one step. Absent: no yield.
   */
  slicer?: StepSlicer;
}

/** What `handleFetch` needs of a slicer: whether the current slice has run out, and a yield that starts the next. */
export interface StepSlicer {
  readonly due: boolean;
  maybeYield(): Promise<void>;
}

/** How many fetch requests are parked waiting for data (Kafka's fetch purgatory size), consumers and followers apart. */
export class ParkedFetches {
  consumers = 0;
  followers = 0;
}

const EMPTY = Buffer.alloc(0);

export async function handleFetch(
  request: FetchRequest,
  components: HandleFetchComponents,
  signal?: AbortSignal,
): Promise<FetchResponse> {
  if (request.maxBytes <= 0) throw new MqError('INVALID_FETCH_SIZE', `fetch maxBytes must be positive, got ${request.maxBytes}`);
  let response = await readAll(request, components);
  const bytes = response.partitions.reduce((n, p) => n + p.records.length, 0);
  const mustAnswer = response.partitions.some((p) => p.errorCode !== 'NONE' || p.divergingEpoch !== undefined);
  if (mustAnswer || bytes >= request.minBytes || request.maxWaitMs <= 0 || signal?.aborted) return response;
  const parked = components.parked;
  const follower = request.replicaId !== CONSUMER_REPLICA_ID;
  if (parked && follower) parked.followers++;
  else if (parked) parked.consumers++;
  let waited: boolean;
  try {
    waited = await waitForData(request, components, response, signal);
  } finally {
    if (parked && follower) parked.followers--;
    else if (parked) parked.consumers--;
  }
  if (waited) {
    release(response, components.pool);
    response = await readAll(request, components);
  }
  return response;
}

function release(response: FetchResponse, pool: ReadPool | undefined): void {
  if (pool) for (const p of response.partitions) pool.release(p.records);
}

/**
 * Reads every partition once. When the partitions' limits together fit in
 * maxBytes, they are read in parallel (no budget to share); otherwise one
 * after another, each getting what is left of maxBytes.
 */
async function readAll(request: FetchRequest, components: HandleFetchComponents): Promise<FetchResponse> {
  let wanted = 0;
  for (const p of request.partitions) wanted += p.partitionMaxBytes;
  if (wanted <= request.maxBytes) {
    const reads: Array<Promise<PromiseSettledResult<FetchPartitionResponse>>> = [];
    const slicer = components.slicer;
    for (const p of request.partitions) {
      // Settled at once: a read failing while this loop yields is not an unhandled rejection.
      reads.push(
        readOne(p, p.partitionMaxBytes, request, components).then(
          (value) => ({ status: 'fulfilled', value }),
          (reason: unknown) => ({ status: 'rejected', reason }),
        ),
      );
      if (slicer?.due) await slicer.maybeYield();
    }
    const settled = await Promise.all(reads);
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      // Nothing is answered: give back what the other reads took.
      for (const r of settled) if (r.status === 'fulfilled') components.pool?.release(r.value.records);
      throw failed.reason;
    }
    return { partitions: settled.map((r) => (r as PromiseFulfilledResult<FetchPartitionResponse>).value) };
  }
  let budget = request.maxBytes;
  const partitions: FetchPartitionResponse[] = [];
  try {
    for (const p of request.partitions) {
      // Each partition gets what is left of maxBytes (the log still returns at least one
      // whole batch, so a large batch is never stuck). Out of budget: no records, but a
      // follower's position is still recorded.
      const r = await readOne(p, Math.min(p.partitionMaxBytes, budget), request, components);
      budget -= r.records.length;
      partitions.push(r);
      if (components.slicer?.due) await components.slicer.maybeYield();
    }
  } catch (err) {
    release({ partitions }, components.pool);
    throw err;
  }
  return { partitions };
}

async function readOne(
  p: FetchRequest['partitions'][number],
  max: number,
  request: FetchRequest,
  components: HandleFetchComponents,
): Promise<FetchPartitionResponse> {
  const leader = components.leaders(p.topic, p.partition);
  if (!leader) {
    const hosted = components.hosts?.(p.topic, p.partition) ?? true;
    return {
      topic: p.topic,
      topicId: p.topicId ?? '',
      partition: p.partition,
      errorCode: hosted ? 'NOT_LEADER' : 'UNKNOWN_TOPIC_OR_PARTITION',
      errorMessage: hosted
        ? `this broker does not lead ${p.topic}-${p.partition}; refresh metadata`
        : `this broker does not host ${p.topic}-${p.partition}`,
      highWatermark: UNDEFINED,
      logStartOffset: UNDEFINED,
      logEndOffset: UNDEFINED,
      records: EMPTY,
      currentLeaderId: UNDEFINED,
      currentLeaderEpoch: UNDEFINED,
    };
  }
  const throttled = heldBack(p, request, components);
  const limit = throttled === 'held' ? 0 : max;
  const r = await leader.fetch({ ...p, partitionMaxBytes: Math.max(0, limit) }, request.replicaId, {
    skipRead: limit <= 0,
    pool: components.pool,
    readCommitted: request.isolationLevel === 1,
  });
  if (throttled === 'sent') components.leaderThrottle!.bucket.take(r.records.length);
  return r;
}

/** Whether a follower's fetch of `p` is under the leader's throttle: 'held' (in debt: no records now), 'sent' (count it), or no. */
function heldBack(p: FetchRequest['partitions'][number], request: FetchRequest, components: HandleFetchComponents): 'held' | 'sent' | undefined {
  const t = components.leaderThrottle;
  if (!t || request.replicaId === CONSUMER_REPLICA_ID || t.bucket.rate <= 0 || !t.throttled(p.topic, p.partition, request.replicaId)) return undefined;
  return t.bucket.waitMs() > 0 ? 'held' : 'sent';
}

/** Resolves true when data arrived (read again), false on timeout or abort. */
function waitForData(
  request: FetchRequest,
  components: HandleFetchComponents,
  first: FetchResponse,
  signal?: AbortSignal,
): Promise<boolean> {
  const isReplica = request.replicaId !== CONSUMER_REPLICA_ID;
  const watched: { leader: PartitionLeader; index: number; hw: number }[] = [];
  request.partitions.forEach((p, index) => {
    const leader = components.leaders(p.topic, p.partition);
    if (leader) watched.push({ leader, index, hw: first.partitions[index]!.highWatermark });
  });
  return new Promise<boolean>((resolve) => {
    const unsubscribe: (() => void)[] = [];
    let done = false;
    const finish = (value: boolean): void => {
      if (done) return;
      done = true;
      components.timers.clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      for (const u of unsubscribe) u();
      resolve(value);
    };
    const check = (): void => {
      let bytes = 0;
      for (const w of watched) {
        const p = request.partitions[w.index]!;
        // Followers also want a moved high watermark promptly (their own HW, their consumers).
        if (w.leader.closed || (isReplica && w.leader.highWatermark !== w.hw)) return finish(true);
        if (isReplica && heldBack(p, request, components) === 'held') continue; // nothing would be sent for it yet
        bytes += w.leader.fetchableBytes(p, request.replicaId, request.isolationLevel === 1);
      }
      if (bytes >= Math.max(1, request.minBytes)) finish(true);
    };
    const onAbort = (): void => finish(false);
    const timer = components.timers.setTimeout(() => finish(false), request.maxWaitMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (const w of watched) unsubscribe.push(w.leader.watch(check));
    } catch {
      // Too many parked fetches: answer with what we have.
      finish(false);
      return;
    }
    check();
  });
}
