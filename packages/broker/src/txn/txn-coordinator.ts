/**
 * The transaction coordinator (Kafka's KIP-98 TransactionCoordinator): the
 * state of every transactional id whose `__transaction_state` partition this
 * broker leads, one record per state change (key: the transactional id,
 * value: its state as JSON; the topic is compacted, so the last one wins).
 *
 * Two-phase completion: EndTxn (or a timeout, or a new instance fencing an
 * open transaction) first persists PrepareCommit / PrepareAbort, then writes
 * a marker to every partition of the transaction through its leader, then
 * persists CompleteCommit / CompleteAbort. A coordinator that takes over a
 * partition (failover) finds a Prepare* state when it loads and finishes the
 * markers: the outcome, once prepared, never changes, and no transaction
 * ends half committed.
 *
 * Every request about one transactional id runs alone (a chain per id), so
 * the state read, written and answered is never interleaved.
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { sleep, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import type { OffsetsLog } from '../group/offsets-log.js';
import { partitionForGroup } from '../group/offsets-schema.js';

export const TXN_STATE_TOPIC = '__transaction_state';
/** Producer epochs are int16: at this one the coordinator hands out a new producer id instead. */
const MAX_EPOCH = 32_766;
const STATE_VERSION = 1;

export type TxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface TxnMeta {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  state: TxnState;
  /** The partitions of the open (or completing) transaction. */
  partitions: TopicPartition[];
  /** When the open transaction started (its first AddPartitionsToTxn), for the timeout. */
  startedAt: number;
  updatedAt: number;
}

export interface TxnMarker {
  producerId: number;
  producerEpoch: number;
  committed: boolean;
  partitions: TopicPartition[];
}

/**
 * Writes one marker to each partition through its leader; resolves with the
 * partitions still to write (a leader moved or unavailable: retried later).
 * A partition that no longer exists counts as written.
 */
export type TxnMarkerWriter = (marker: TxnMarker) => Promise<TopicPartition[]>;

export interface TxnCoordinatorOptions {
  /** Partitions of `__transaction_state`. */
  partitionCount: number;
  /** transaction.max.timeout.ms */
  maxTimeoutMs: number;
  /** transaction.abort.timed.out.transaction.cleanup.interval.ms */
  abortCheckIntervalMs: number;
  /** transactional.id.expiration.ms: an id with no transaction open and no request for this long is forgotten. Default 7 days. */
  expirationMs?: number;
  /** Partitions of `__consumer_offsets` (AddOffsetsToTxn adds the group's). */
  offsetsPartitionCount: () => number | undefined;
  loadBufferBytes?: number;
}

export interface TxnCoordinatorDeps {
  log: OffsetsLog;
  allocateProducerId: () => Promise<number>;
  writeMarkers: TxnMarkerWriter;
  /** Why a partition cannot be in a transaction (no such topic or partition), or undefined. */
  partitionProblem: (topic: string, partition: number) => MqError | undefined;
  clock: () => number;
  timers: Timers;
  logger: Logger;
}

export interface TxnRequest {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
}

type PartitionStatus = { status: 'loading' | 'loaded'; generation: number; metas: Map<string, TxnMeta> };

export function partitionForTransactionalId(transactionalId: string, partitionCount: number): number {
  return partitionForGroup(transactionalId, partitionCount);
}

export class TxnCoordinator {
  private readonly parts = new Map<number, PartitionStatus>();
  private readonly chains = new Map<string, Promise<unknown>>();
  private generation = 0;
  private closed = false;
  private sweepTimer: TimerHandle | undefined;

  constructor(
    private readonly options: TxnCoordinatorOptions,
    private readonly deps: TxnCoordinatorDeps,
  ) {
    this.scheduleSweep();
  }

  get partitionCount(): number {
    return this.options.partitionCount;
  }

  partitionFor(transactionalId: string): number {
    return partitionForTransactionalId(transactionalId, this.options.partitionCount);
  }

  isLoaded(partition: number): boolean {
    return this.parts.get(partition)?.status === 'loaded';
  }

  /** The state of a transactional id coordinated here (for tests and describe). */
  describe(transactionalId: string): TxnMeta | undefined {
    const m = this.parts.get(this.partitionFor(transactionalId))?.metas.get(transactionalId);
    return m ? { ...m, partitions: [...m.partitions] } : undefined;
  }

  // ------------------------------------------------------------------ loading

  async loadPartition(partition: number): Promise<void> {
    if (this.closed || this.parts.has(partition)) return;
    const generation = ++this.generation;
    const st: PartitionStatus = { status: 'loading', generation, metas: new Map() };
    this.parts.set(partition, st);
    const stale = () => this.closed || this.parts.get(partition) !== st;
    try {
      await this.deps.log.awaitLoadable?.(partition);
      if (stale()) return;
      let position = this.deps.log.startOffset(partition);
      const end = this.deps.log.endOffset(partition);
      while (position < end) {
        const { records, nextOffset } = await this.deps.log.read(partition, position, this.options.loadBufferBytes ?? 1 << 20);
        if (stale()) return;
        if (records.length === 0 || nextOffset <= position) break;
        for (const span of iterateBatches(records)) {
          for (const record of decodeBatchSync(records, span.position).records) {
            if (record.offset < position || !record.key) continue;
            const id = record.key.toString('utf8');
            if (!record.value) st.metas.delete(id);
            else st.metas.set(id, decodeMeta(id, record.value));
          }
        }
        position = nextOffset;
      }
      if (stale()) return;
      st.status = 'loaded';
      const pending = [...st.metas.values()].filter((m) => m.state === 'PrepareCommit' || m.state === 'PrepareAbort');
      this.deps.logger.info({ partition, transactionalIds: st.metas.size, completing: pending.length }, `${TXN_STATE_TOPIC}-${partition} loaded`);
      // A failover in the middle of a commit or abort: this coordinator writes the remaining markers.
      for (const m of pending) {
        void this.locked(m.transactionalId, () => this.complete(partition, st, m.transactionalId)).catch((err: unknown) => {
          if (!stale()) this.deps.logger.warn({ transactionalId: m.transactionalId, err: (err as Error).message }, 'completing a prepared transaction failed');
        });
      }
    } catch (err) {
      if (!stale()) this.parts.delete(partition);
      throw err;
    }
  }

  unloadPartition(partition: number): void {
    this.parts.delete(partition);
  }

  // ---------------------------------------------------------------- requests

  /**
   * InitProducerId with a transactional id: the id's producer id (allocated
   * on first use) with its epoch bumped, which fences the previous instance.
   * An open transaction of the previous instance is aborted first, its
   * markers written with the bumped epoch (so the old epoch's writes are
   * refused on those partitions too).
   */
  initProducerId(transactionalId: string, timeoutMs: number): Promise<{ producerId: number; producerEpoch: number }> {
    if (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > this.options.maxTimeoutMs) {
      return Promise.reject(
        new MqError('INVALID_TRANSACTION_TIMEOUT', `transaction timeout ${timeoutMs} ms is outside 1..${this.options.maxTimeoutMs} ms (transaction.max.timeout.ms)`),
      );
    }
    return this.locked(transactionalId, async () => {
      const { partition, st } = this.coordinated(transactionalId);
      let meta = st.metas.get(transactionalId);
      const now = this.deps.clock();
      if (!meta) {
        const producerId = await this.deps.allocateProducerId();
        const fresh: TxnMeta = { transactionalId, producerId, producerEpoch: 0, timeoutMs, state: 'Empty', partitions: [], startedAt: -1, updatedAt: now };
        await this.persist(partition, st, fresh);
        return { producerId, producerEpoch: 0 };
      }
      if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') {
        await this.complete(partition, st, transactionalId);
        meta = st.metas.get(transactionalId)!;
      }
      if (meta.state === 'Ongoing') {
        // The previous instance left a transaction open: abort it, fencing that instance.
        await this.prepareAndComplete(partition, st, meta, false, true);
        meta = st.metas.get(transactionalId)!;
      }
      let { producerId, producerEpoch } = meta;
      if (producerEpoch >= MAX_EPOCH) {
        producerId = await this.deps.allocateProducerId();
        producerEpoch = 0;
      } else {
        producerEpoch += 1;
      }
      await this.persist(partition, st, { ...meta, producerId, producerEpoch, timeoutMs, state: 'Empty', partitions: [], startedAt: -1, updatedAt: now });
      this.deps.logger.debug({ transactionalId, producerId, producerEpoch }, 'transactional producer initialised');
      return { producerId, producerEpoch };
    });
  }

  /** AddPartitionsToTxn: all of them join the transaction (starting it), or none (the error says why). */
  addPartitions(req: TxnRequest, partitions: TopicPartition[]): Promise<void> {
    return this.locked(req.transactionalId, async () => {
      const { partition, st } = this.coordinated(req.transactionalId);
      const meta = this.checkProducer(st, req);
      if (meta.state === 'PrepareCommit' || meta.state === 'PrepareAbort') {
        throw new MqError('CONCURRENT_TRANSACTIONS', `the previous transaction of "${req.transactionalId}" is still completing; retry`);
      }
      if (partitions.length === 0) throw new MqError('INVALID_REQUEST', 'AddPartitionsToTxn names no partition');
      for (const tp of partitions) {
        const problem = this.deps.partitionProblem(tp.topic, tp.partition);
        if (problem) throw problem;
      }
      const ongoing = meta.state === 'Ongoing';
      const have = new Set((ongoing ? meta.partitions : []).map(key));
      const added = partitions.filter((tp) => !have.has(key(tp)));
      if (ongoing && added.length === 0) return;
      const merged = ongoing ? [...meta.partitions] : [];
      for (const tp of added) {
        if (!merged.some((m) => key(m) === key(tp))) merged.push({ topic: tp.topic, partition: tp.partition });
      }
      const now = this.deps.clock();
      await this.persist(partition, st, { ...meta, state: 'Ongoing', partitions: merged, startedAt: ongoing ? meta.startedAt : now, updatedAt: now });
    });
  }

  /** AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction. */
  addOffsets(req: TxnRequest, groupId: string): Promise<void> {
    const count = this.options.offsetsPartitionCount();
    if (count === undefined) return Promise.reject(new MqError('COORDINATOR_NOT_AVAILABLE', '__consumer_offsets does not exist yet; retry'));
    if (groupId === '') return Promise.reject(new MqError('INVALID_GROUP_ID', 'group id must not be empty'));
    return this.addPartitions(req, [{ topic: '__consumer_offsets', partition: partitionForGroup(groupId, count) }]);
  }

  /**
   * EndTxn: commit or abort the open transaction. Answers once the decision
   * is persisted and (normally) the markers are written; a retry of a
   * completed EndTxn with the same outcome succeeds; a commit or abort with
   * nothing open is INVALID_TXN_STATE.
   */
  endTxn(req: TxnRequest, commit: boolean, waitMs = 10_000): Promise<void> {
    let completion: Promise<void> | undefined;
    const decided = this.locked(req.transactionalId, async () => {
      const { partition, st } = this.coordinated(req.transactionalId);
      const meta = this.checkProducer(st, req);
      const want = commit ? 'Commit' : 'Abort';
      switch (meta.state) {
        case 'Ongoing':
          await this.prepare(partition, st, meta, commit, false);
          // The markers are written after this request's turn: answered once they are, or after waitMs (the outcome is decided either way).
          completion = this.locked(req.transactionalId, () => this.complete(partition, st, req.transactionalId));
          return;
        case 'CompleteCommit':
        case 'CompleteAbort':
          if (meta.state === `Complete${want}`) return; // a retry of what already happened
          throw new MqError('INVALID_TXN_STATE', `transaction of "${req.transactionalId}" already ended with ${meta.state}; cannot ${commit ? 'commit' : 'abort'} it`);
        case 'PrepareCommit':
        case 'PrepareAbort':
          if (meta.state === `Prepare${want}`) throw new MqError('CONCURRENT_TRANSACTIONS', `transaction of "${req.transactionalId}" is completing; retry`);
          throw new MqError('INVALID_TXN_STATE', `transaction of "${req.transactionalId}" is completing with ${meta.state}; cannot ${commit ? 'commit' : 'abort'} it`);
        default:
          throw new MqError('INVALID_TXN_STATE', `"${req.transactionalId}" has no open transaction to ${commit ? 'commit' : 'abort'} (begin one and send or add offsets first)`);
      }
    });
    return decided.then(async () => {
      if (!completion) return;
      let timer: TimerHandle | undefined;
      await Promise.race([
        completion.catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = this.deps.timers.setTimeout(resolve, waitMs);
        }),
      ]);
      if (timer !== undefined) this.deps.timers.clearTimeout(timer);
    });
  }

  /** TxnOffsetCommit's check: the producer is the current one of the id and its transaction includes the group's partition. */
  checkOffsetsInTxn(req: TxnRequest): void {
    const { st } = this.coordinated(req.transactionalId);
    const meta = this.checkProducer(st, req);
    if (meta.state !== 'Ongoing') throw new MqError('INVALID_TXN_STATE', `"${req.transactionalId}" has no open transaction (AddOffsetsToTxn first)`);
  }

  close(): void {
    this.closed = true;
    if (this.sweepTimer !== undefined) this.deps.timers.clearTimeout(this.sweepTimer);
    this.parts.clear();
  }

  // ---------------------------------------------------------------- internals

  /** This broker's loaded partition for the id, or NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS. */
  private coordinated(transactionalId: string): { partition: number; st: PartitionStatus } {
    if (transactionalId === '') throw new MqError('INVALID_REQUEST', 'transactional id must not be empty');
    const partition = this.partitionFor(transactionalId);
    const st = this.parts.get(partition);
    if (!st) throw new MqError('NOT_COORDINATOR', `this broker does not coordinate transactional id "${transactionalId}" (ask FindCoordinator with key type 1)`);
    if (st.status !== 'loaded') throw new MqError('COORDINATOR_LOAD_IN_PROGRESS', `${TXN_STATE_TOPIC}-${partition} is loading; retry`);
    return { partition, st };
  }

  private checkProducer(st: PartitionStatus, req: TxnRequest): TxnMeta {
    const meta = st.metas.get(req.transactionalId);
    if (!meta || meta.producerId !== req.producerId) {
      throw new MqError('INVALID_PRODUCER_ID_MAPPING', `producer id ${req.producerId} is not the producer id of transactional id "${req.transactionalId}" (InitProducerId first)`);
    }
    if (req.producerEpoch < meta.producerEpoch) {
      throw new MqError('PRODUCER_FENCED', `producer epoch ${req.producerEpoch} of "${req.transactionalId}" is fenced: a newer instance (epoch ${meta.producerEpoch}) took over, or the transaction timed out`, {
        producerId: meta.producerId,
        epoch: req.producerEpoch,
        currentEpoch: meta.producerEpoch,
      });
    }
    if (req.producerEpoch > meta.producerEpoch) {
      throw new MqError('INVALID_PRODUCER_EPOCH', `producer epoch ${req.producerEpoch} of "${req.transactionalId}" is newer than the coordinator's ${meta.producerEpoch}`);
    }
    return meta;
  }

  /** Persists Prepare*; `bumpEpoch` fences the producer (a timeout or a new instance), the markers then carry the new epoch. */
  private async prepare(partition: number, st: PartitionStatus, meta: TxnMeta, commit: boolean, bumpEpoch: boolean): Promise<void> {
    const producerEpoch = bumpEpoch ? meta.producerEpoch + 1 : meta.producerEpoch;
    await this.persist(partition, st, { ...meta, producerEpoch, state: commit ? 'PrepareCommit' : 'PrepareAbort', updatedAt: this.deps.clock() });
  }

  private async prepareAndComplete(partition: number, st: PartitionStatus, meta: TxnMeta, commit: boolean, bumpEpoch: boolean): Promise<void> {
    await this.prepare(partition, st, meta, commit, bumpEpoch);
    await this.complete(partition, st, meta.transactionalId);
  }

  /** Writes the markers of a prepared transaction until every partition has its own, then persists Complete*. */
  private async complete(partition: number, st: PartitionStatus, transactionalId: string): Promise<void> {
    let meta = st.metas.get(transactionalId);
    if (!meta || (meta.state !== 'PrepareCommit' && meta.state !== 'PrepareAbort')) return;
    const committed = meta.state === 'PrepareCommit';
    let remaining = meta.partitions;
    let backoff = 50;
    while (remaining.length > 0) {
      if (this.closed || this.parts.get(partition) !== st) {
        throw new MqError('NOT_COORDINATOR', `this broker stopped coordinating "${transactionalId}" while writing its markers (the new coordinator finishes them)`);
      }
      try {
        remaining = await this.deps.writeMarkers({ producerId: meta.producerId, producerEpoch: meta.producerEpoch, committed, partitions: remaining });
      } catch (err) {
        this.deps.logger.warn({ transactionalId, err: (err as Error).message }, 'writing transaction markers failed; retrying');
      }
      if (remaining.length > 0) {
        await sleep(this.deps.timers, backoff);
        backoff = Math.min(backoff * 2, 1000);
      }
    }
    meta = st.metas.get(transactionalId)!;
    await this.persist(partition, st, { ...meta, state: committed ? 'CompleteCommit' : 'CompleteAbort', partitions: [], startedAt: -1, updatedAt: this.deps.clock() });
    this.deps.logger.debug({ transactionalId, producerId: meta.producerId, committed }, 'transaction completed');
  }

  /** Appends the new state (acks=all through the partition's leader) and only then makes it current. */
  private async persist(partition: number, st: PartitionStatus, meta: TxnMeta): Promise<void> {
    if (this.parts.get(partition) !== st) throw new MqError('NOT_COORDINATOR', `this broker stopped coordinating ${TXN_STATE_TOPIC}-${partition}`);
    const batch = encodeBatchSync([{ key: meta.transactionalId, value: encodeMeta(meta) }], { now: this.deps.clock() });
    await this.deps.log.append(partition, batch);
    st.metas.set(meta.transactionalId, meta);
  }

  /** Runs `fn` after every earlier request about the same transactional id. */
  private locked<T>(transactionalId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(transactionalId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.chains.set(transactionalId, tail);
    void tail.then(() => {
      if (this.chains.get(transactionalId) === tail) this.chains.delete(transactionalId);
    });
    return run;
  }

  /** Aborts transactions open longer than their timeout (fencing their producer), every abortCheckIntervalMs. */
  private scheduleSweep(): void {
    if (this.closed) return;
    this.sweepTimer = this.deps.timers.setTimeout(() => {
      this.sweep();
      this.scheduleSweep();
    }, this.options.abortCheckIntervalMs);
  }

  /** No transaction open or completing, and no request for transactional.id.expiration.ms (Kafka's rule). */
  private expired(m: TxnMeta, now: number): boolean {
    const idle = m.state === 'Empty' || m.state === 'CompleteCommit' || m.state === 'CompleteAbort';
    return idle && now - m.updatedAt > (this.options.expirationMs ?? DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS);
  }

  /**
   * Forgets an expired transactional id: a tombstone in `__transaction_state`
   * (compaction removes its records), then out of memory. Its next
   * InitProducerId starts afresh with a new producer id.
   */
  private expire(partition: number, st: PartitionStatus, id: string): void {
    void this.locked(id, async () => {
      const m = st.metas.get(id);
      if (this.parts.get(partition) !== st || !m || !this.expired(m, this.deps.clock())) return;
      await this.deps.log.append(partition, encodeBatchSync([{ key: id, value: null }], { now: this.deps.clock() }));
      if (st.metas.get(id) === m) st.metas.delete(id);
      this.deps.logger.info({ transactionalId: id, producerId: m.producerId, idleMs: this.deps.clock() - m.updatedAt }, 'transactional id expired');
    }).catch((err: unknown) => {
      if (!isMqError(err, 'NOT_COORDINATOR')) this.deps.logger.warn({ transactionalId: id, err: (err as Error).message }, 'expiring a transactional id failed');
    });
  }

  private sweep(): void {
    const now = this.deps.clock();
    for (const [partition, st] of this.parts) {
      if (st.status !== 'loaded') continue;
      for (const meta of st.metas.values()) {
        if (this.expired(meta, now)) {
          this.expire(partition, st, meta.transactionalId);
          continue;
        }
        if (meta.state !== 'Ongoing' || now - meta.startedAt <= meta.timeoutMs) continue;
        const id = meta.transactionalId;
        void this.locked(id, async () => {
          const m = st.metas.get(id);
          if (this.parts.get(partition) !== st || !m || m.state !== 'Ongoing' || this.deps.clock() - m.startedAt <= m.timeoutMs) return;
          this.deps.logger.info({ transactionalId: id, producerId: m.producerId, timeoutMs: m.timeoutMs }, 'aborting a transaction open past its timeout');
          await this.prepareAndComplete(partition, st, m, false, true);
        }).catch((err: unknown) => {
          if (!isMqError(err, 'NOT_COORDINATOR')) this.deps.logger.warn({ transactionalId: id, err: (err as Error).message }, 'aborting a timed-out transaction failed');
        });
      }
    }
  }
}

export const DEFAULT_TRANSACTIONAL_ID_EXPIRATION_MS = 7 * 24 * 3600_000;

function key(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

function encodeMeta(m: TxnMeta): Buffer {
  return Buffer.from(
    JSON.stringify({
      v: STATE_VERSION,
      producerId: m.producerId,
      producerEpoch: m.producerEpoch,
      timeoutMs: m.timeoutMs,
      state: m.state,
      partitions: m.partitions.map((p) => [p.topic, p.partition]),
      startedAt: m.startedAt,
      updatedAt: m.updatedAt,
    }),
  );
}

const STATES: readonly TxnState[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort'];

function decodeMeta(transactionalId: string, value: Buffer): TxnMeta {
  const bad = (why: string) => new MqError('CORRUPT_MESSAGE', `${TXN_STATE_TOPIC} record of "${transactionalId}" is damaged: ${why}`);
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(value.toString('utf8')) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (v.v !== STATE_VERSION) throw bad(`version ${String(v.v)}`);
  const ints = ['producerId', 'producerEpoch', 'timeoutMs', 'startedAt', 'updatedAt'];
  for (const k of ints) if (!Number.isSafeInteger(v[k])) throw bad(k);
  if (!STATES.includes(v.state as TxnState)) throw bad(`state ${String(v.state)}`);
  if (!Array.isArray(v.partitions)) throw bad('partitions');
  const partitions = (v.partitions as unknown[]).map((p) => {
    if (!Array.isArray(p) || typeof p[0] !== 'string' || !Number.isInteger(p[1])) throw bad('a partition');
    return { topic: p[0], partition: p[1] as number };
  });
  return {
    transactionalId,
    producerId: v.producerId as number,
    producerEpoch: v.producerEpoch as number,
    timeoutMs: v.timeoutMs as number,
    state: v.state as TxnState,
    partitions,
    startedAt: v.startedAt as number,
    updatedAt: v.updatedAt as number,
  };
}
