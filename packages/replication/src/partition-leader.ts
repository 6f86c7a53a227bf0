/**
 * The leader side of one partition: it appends produces with its leader
 * epoch, tracks each follower's log end offset from the follower's fetches,
 * advances the high watermark to the lowest log end offset in the ISR (never
 * backwards, checkpointed), answers acks=all produces once the high watermark
 * passes them, and proposes ISR shrinks and expansions to the controller.
 */
import { parseAcks, type Acks } from '@mq/protocol/acks';
import { silentLogger, type Clock, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import { MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { endOffsetForEpoch, latestEpoch } from './epoch-cache.js';
import { parsePartitionLeaderOptions, type ParsedPartitionLeaderOptions, type PartitionLeaderOptions } from './options.js';
import { CheckpointWriter, startingHighWatermark } from './checkpoint-writer.js';
import { ProducePurgatory } from './produce-purgatory.js';
import {
  CONSUMER_REPLICA_ID,
  UNDEFINED,
  type AlterPartitionFn,
  type AlterPartitionRequest,
  type EpochEndOffset,
  type EpochEntry,
  type FetchPartitionRequest,
  type FetchPartitionResponse,
  type HighWatermarkCheckpoint,
  type PartitionState,
  type ReadPool,
  type ReplicaLog,
} from './types.js';

export interface PartitionLeaderComponents {
  log: ReplicaLog;
  clock: Clock;
  timers: Timers;
  checkpoint: HighWatermarkCheckpoint;
  alterPartition: AlterPartitionFn;
  logger?: Logger;
}

export interface LeaderAppendOptions {
  acks: Acks;
  /** acks=all only: how long to wait for the ISR (REQUEST_TIMED_OUT after). Default 30 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Stamp the batches LogAppendTime (the topic's message.timestamp.type); the log does it after validating them. */
  logAppendTime?: boolean;
  /** The topic's current max.message.bytes; default the log's own limit. */
  maxBatchBytes?: number;
  /** A coordinator's append: transaction markers, transactional offset commits (see @mq/log-store's AppendOptions.coordinator). */
  coordinator?: boolean;
  /** The produce request named its transactional id: transactional batches are accepted (AppendOptions.transactional). */
  transactional?: boolean;
}

export interface LeaderAppendResult {
  baseOffset: number;
  lastOffset: number;
  /** Each batch's base offset when they do not lie back to back from `baseOffset` (see @mq/log-store's AppendResult). */
  batchBaseOffsets?: number[];
  logAppendTime: number;
  logStartOffset: number;
}

/** What the leader knows of one replica, for describe and metrics. */
export interface ReplicaStatus {
  brokerId: number;
  /** -1 until the follower's first fetch in this leader epoch. */
  logEndOffset: number;
  logStartOffset: number;
  lastFetchTimeMs: number;
  lastCaughtUpTimeMs: number;
  inIsr: boolean;
}

interface FollowerState {
  logEndOffset: number;
  logStartOffset: number;
  lastFetchTimeMs: number;
  lastCaughtUpTimeMs: number;
  /** The leader's log end offset when this follower last fetched. */
  lastFetchLeaderLogEndOffset: number;
  /** It fetched below the HW while in the ISR: out at the next check, whatever its lag. */
  lostRecords: boolean;
}

const EMPTY = Buffer.alloc(0);
const RECENT_APPENDS = 1024;
const DEFAULT_PRODUCE_TIMEOUT_MS = 30_000;


/**
 * Becomes leader of a partition: records the new leader epoch at the log end
 * offset, loads the checkpointed high watermark, and starts the ISR check.
 */
export async function createPartitionLeader(
  options: PartitionLeaderOptions,
  components: PartitionLeaderComponents,
  /**
   * The high watermark this broker already knows for the partition in this run (its replica's last role's: learned
   * as a follower, or its own as an earlier leader): records below it were committed. The HW checkpoint is written
   * only now and then, so without it a replica taking over could start below what consumers have already seen.
   */
  knownHighWatermark = 0,
): Promise<PartitionLeader> {
  const parsed = parsePartitionLeaderOptions(options);
  const { log, checkpoint } = components;
  const latest = latestEpoch(log.leaderEpochs.entries);
  if (latest > parsed.leaderEpoch) {
    throw new MqError(
      'FENCED_LEADER_EPOCH',
      `${parsed.topic}-${parsed.partition}: asked to lead in epoch ${parsed.leaderEpoch} but the log already holds epoch ${latest}`,
      { leaderEpoch: parsed.leaderEpoch, logEpoch: latest },
    );
  }
  if (latest < parsed.leaderEpoch) await log.assignLeaderEpoch?.(parsed.leaderEpoch, log.logEndOffset);
  const stored = await checkpoint.load();
  return new PartitionLeader(parsed, components, startingHighWatermark(stored, knownHighWatermark, log), stored);
}

/** Log refusals of a produce's producer state that a newer leader might not give (PartitionLeader.#sequenceRefusal). */
const SEQUENCE_REFUSALS: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['OUT_OF_ORDER_SEQUENCE_NUMBER', 'UNKNOWN_PRODUCER_ID']);

export class PartitionLeader {
  readonly topic: string;
  /** The incarnation of the topic this leader's log belongs to ('' when not given). */
  readonly topicId: string;
  readonly partition: number;
  readonly brokerId: number;
  readonly #options: ParsedPartitionLeaderOptions;
  readonly #log: ReplicaLog;
  readonly #clock: Clock;
  readonly #timers: Timers;
  readonly #checkpoint: HighWatermarkCheckpoint;
  readonly #alterPartition: AlterPartitionFn;
  readonly #logger: Logger;
  readonly #name: string;

  #leaderEpoch: number;
  #partitionEpoch: number;
  #replicas: readonly number[];
  #isr: readonly number[];
  /** The ISR proposed to the controller and not yet answered. */
  #pendingIsr: readonly number[] | null = null;
  #alterSeq = 0;
  /** After a rejected proposal: no new one until the controller's state arrives, or this time passes. */
  #noProposalsUntil = 0;
  #highWatermark: number;
  /** Where this leader's epoch starts: its log end offset when it became leader. */
  #epochStartOffset: number;
  readonly #followers = new Map<number, FollowerState>();
  readonly #purgatory: ProducePurgatory;
  readonly #watchers = new Set<() => void>();
  /** Waiting for the next fetch of an ISR follower, or for this leader's end (#confirmLeadership). */
  readonly #confirmWaiters = new Set<() => void>();
  /** Appends handed to the log and not yet done: resign waits for them to settle. */
  readonly #appending = new Set<Promise<unknown>>();
  #isrTimer: TimerHandle | undefined;
  #closedWith: ErrorCode | null = null;
  /** Recent appends (last offset, cumulative bytes), to estimate bytes past an offset for fetch minBytes. */
  readonly #recent: { lastOffset: number; cumBytes: number }[] = [];
  #recentStartOffset: number;
  #recentBytes = 0;
  readonly #checkpointWriter: CheckpointWriter;

  /** `checkpointed`: what the checkpoint holds now (undefined: nothing yet); a start above it is written within the interval. */
  constructor(options: ParsedPartitionLeaderOptions, components: PartitionLeaderComponents, highWatermark: number, checkpointed: number | undefined) {
    this.#options = options;
    this.topic = options.topic;
    this.topicId = options.topicId;
    this.partition = options.partition;
    this.brokerId = options.brokerId;
    this.#name = `${options.topic}-${options.partition}`;
    this.#log = components.log;
    this.#clock = components.clock;
    this.#timers = components.timers;
    this.#checkpoint = components.checkpoint;
    this.#alterPartition = components.alterPartition;
    this.#logger = components.logger ?? silentLogger;
    this.#leaderEpoch = options.leaderEpoch;
    this.#partitionEpoch = options.partitionEpoch;
    this.#replicas = options.replicas;
    this.#isr = options.isr;
    this.#highWatermark = highWatermark;
    this.#log.onHighWatermarkUpdated?.(highWatermark);
    this.#recentStartOffset = this.#log.logEndOffset;
    this.#epochStartOffset = this.#log.logEndOffset;
    this.#checkpointWriter = new CheckpointWriter(
      this.#checkpoint,
      { timers: this.#timers, logger: this.#logger, fields: { topic: this.topic, partition: this.partition } },
      options.highWatermarkCheckpointIntervalMs,
      highWatermark,
      checkpointed,
    );
    this.#purgatory = new ProducePurgatory({ maxWaiters: options.maxPendingProduces, name: this.#name }, this.#timers);
    const now = this.#clock();
    for (const id of this.#replicas) if (id !== this.brokerId) this.#followers.set(id, this.#newFollower(now));
    this.#scheduleIsrCheck();
    this.#maybeAdvanceHighWatermark();
    this.#logger.info(
      { topic: this.topic, partition: this.partition, leaderEpoch: this.#leaderEpoch, isr: this.#isr, highWatermark },
      'became leader',
    );
  }

  get leaderEpoch(): number {
    return this.#leaderEpoch;
  }
  get partitionEpoch(): number {
    return this.#partitionEpoch;
  }
  get replicas(): readonly number[] {
    return this.#replicas;
  }
  /** The committed ISR (what min.insync.replicas is checked against). */
  get isr(): readonly number[] {
    return this.#isr;
  }
  /** The ISR change waiting for the controller, if any. */
  get pendingIsr(): readonly number[] | null {
    return this.#pendingIsr;
  }
  get highWatermark(): number {
    return this.#highWatermark;
  }
  get logEndOffset(): number {
    return this.#log.logEndOffset;
  }
  /** The last stable offset: read_committed consumers see nothing at or above it (the HW, or the oldest open transaction's first offset below it). */
  get lastStableOffset(): number {
    const first = this.#log.firstUnstableOffset;
    return first === undefined ? this.#highWatermark : Math.min(first, this.#highWatermark);
  }
  get logStartOffset(): number {
    return this.#log.logStartOffset;
  }
  /** acks=all produces waiting for replication. */
  get pendingProduces(): number {
    return this.#purgatory.size;
  }
  get closed(): boolean {
    return this.#closedWith !== null;
  }
  get underReplicated(): boolean {
    return this.#isr.length < this.#replicas.length;
  }

  replicaStatus(): ReplicaStatus[] {
    const out: ReplicaStatus[] = [];
    for (const id of this.#replicas) {
      const f = this.#followers.get(id);
      out.push(
        f === undefined
          ? {
              brokerId: id,
              logEndOffset: this.#log.logEndOffset,
              logStartOffset: this.#log.logStartOffset,
              lastFetchTimeMs: this.#clock(),
              lastCaughtUpTimeMs: this.#clock(),
              inIsr: true,
            }
          : {
              brokerId: id,
              logEndOffset: f.logEndOffset,
              logStartOffset: f.logStartOffset,
              lastFetchTimeMs: f.lastFetchTimeMs,
              lastCaughtUpTimeMs: f.lastCaughtUpTimeMs,
              inIsr: this.#isr.includes(id),
            },
      );
    }
    return out;
  }

  /**
   * Appends a produce. acks 0 and 1 resolve after the leader's append; acks=all
   * (-1) first checks min.insync.replicas (NOT_ENOUGH_REPLICAS, nothing
   * appended), then waits until the high watermark passes the last offset
   * (REQUEST_TIMED_OUT at the deadline, NOT_ENOUGH_REPLICAS_AFTER_APPEND if the
   * ISR shrank below min.insync.replicas meanwhile, NOT_LEADER if leadership
   * was lost). The log append is issued before this returns its promise, so
   * calls made in arrival order keep per-partition order.
   */
  async append(records: Buffer, options: LeaderAppendOptions): Promise<LeaderAppendResult> {
    this.#ensureLeader();
    const acks = parseAcks(options.acks);
    if (acks === -1) {
      this.#checkMinIsr('NOT_ENOUGH_REPLICAS');
      if (this.#purgatory.full) {
        throw new MqError(
          'REQUEST_TIMED_OUT',
          `${this.#name}: ${this.#purgatory.size} acks=all produces already wait for replication (the limit); nothing was appended, retry later`,
          { retriable: true },
        );
      }
    }
    const appendOptions: NonNullable<Parameters<ReplicaLog['append']>[1]> = { assignOffsets: true, leaderEpoch: this.#leaderEpoch };
    if (options.logAppendTime) appendOptions.logAppendTime = true;
    if (options.maxBatchBytes !== undefined) appendOptions.maxBatchBytes = options.maxBatchBytes;
    if (options.coordinator) appendOptions.coordinator = true;
    if (options.transactional) appendOptions.transactional = true;
    const appending = this.#log.append(records, appendOptions);
    this.#appending.add(appending);
    let result;
    try {
      result = await appending;
    } catch (err) {
      if (isMqError(err) && SEQUENCE_REFUSALS.has(err.code)) throw await this.#sequenceRefusal(err, options);
      throw err;
    } finally {
      this.#appending.delete(appending);
    }
    if (!result.duplicate) {
      // A duplicate (an idempotent producer's retry) wrote nothing: it only waits, like the original, for the high watermark to pass it.
      this.#recordAppend(result.lastOffset, result.bytes);
      this.#notify();
    }
    this.#maybeAdvanceHighWatermark();
    const out: LeaderAppendResult = {
      baseOffset: result.baseOffset,
      lastOffset: result.lastOffset,
      logAppendTime: result.logAppendTime,
      logStartOffset: this.#log.logStartOffset,
    };
    if (result.batchBaseOffsets) out.batchBaseOffsets = result.batchBaseOffsets;
    if (acks !== -1) return out;
    this.#ensureLeader();
    if (this.#highWatermark > result.lastOffset) {
      this.#checkMinIsr('NOT_ENOUGH_REPLICAS_AFTER_APPEND');
      return out;
    }
    await this.#purgatory.wait(result.lastOffset, options.timeoutMs ?? DEFAULT_PRODUCE_TIMEOUT_MS, options.signal);
    return out;
  }

  /**
   * Serves one partition of a Fetch at once (no waiting: see handleFetch).
   * Consumers (replicaId -1) see nothing at or above the high watermark.
   * Follower fetches are checked (replica set, leader epoch, KIP-320
   * divergence) and record the follower's log end offset, which may move the
   * high watermark and the ISR.
   */
  async fetch(
    request: FetchPartitionRequest,
    replicaId: number,
    options: { skipRead?: boolean; pool?: ReadPool; readCommitted?: boolean } = {},
  ): Promise<FetchPartitionResponse> {
    const refused = this.#validateFetch(request, replicaId);
    if (refused) return refused;
    const isReplica = replicaId !== CONSUMER_REPLICA_ID;
    if (isReplica) {
      const diverging = this.#divergence(request);
      if (diverging) return this.#response(request, 'NONE', { divergingEpoch: diverging });
    }
    const { fetchOffset } = request;
    if (fetchOffset < this.#log.logStartOffset || fetchOffset > this.#log.logEndOffset) {
      return this.#response(request, 'OFFSET_OUT_OF_RANGE', {
        errorMessage: `offset ${fetchOffset} is outside [${this.#log.logStartOffset}, ${this.#log.logEndOffset}] of ${this.#name}`,
      });
    }
    if (isReplica) this.#updateFollower(replicaId, request);
    const readCommitted = !isReplica && options.readCommitted === true;
    const limit = isReplica ? this.#log.logEndOffset : readCommitted ? this.lastStableOffset : this.#highWatermark;
    if (fetchOffset >= limit || options.skipRead) return this.#response(request, 'NONE');
    try {
      const { records, nextOffset } = await this.#log.read(
        fetchOffset,
        Math.max(1, request.partitionMaxBytes),
        isReplica ? { pool: options.pool } : { maxOffset: limit, pool: options.pool },
      );
      if (readCommitted) {
        // The aborted transactions with records in what is returned (from the log's index; the records are not read).
        const aborted = this.#log.abortedTransactions?.(fetchOffset, Math.min(limit, nextOffset)) ?? [];
        return this.#response(request, 'NONE', { records, abortedTransactions: aborted.map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset })) });
      }
      return this.#response(request, 'NONE', { records });
    } catch (err) {
      if (isMqError(err)) return this.#response(request, err.code, { errorMessage: err.message });
      throw err;
    }
  }

  /**
   * Bytes a fetch at `fetchOffset` could read now (an estimate), or
   * `Infinity` when the fetch must be answered at once (an error, a
   * divergence). handleFetch parks fetches on this.
   */
  fetchableBytes(request: FetchPartitionRequest, replicaId: number, readCommitted = false): number {
    if (this.#validateFetch(request, replicaId)) return Infinity;
    const isReplica = replicaId !== CONSUMER_REPLICA_ID;
    if (isReplica && this.#divergence(request)) return Infinity;
    const { fetchOffset } = request;
    if (fetchOffset < this.#log.logStartOffset || fetchOffset > this.#log.logEndOffset) return Infinity;
    const limit = isReplica ? this.#log.logEndOffset : readCommitted ? this.lastStableOffset : this.#highWatermark;
    if (fetchOffset >= limit) return 0;
    if (fetchOffset < this.#recentStartOffset) return Number.MAX_SAFE_INTEGER;
    return this.#cumBytesBefore(limit) - this.#cumBytesBefore(fetchOffset) || 1;
  }

  /**
   * Calls `listener` whenever the log end offset or high watermark moves or
   * leadership ends. Returns the unsubscribe function. Bounded by
   * maxPendingFetches.
   */
  watch(listener: () => void): () => void {
    if (this.#watchers.size >= this.#options.maxPendingFetches) {
      throw new MqError('REQUEST_TIMED_OUT', `${this.#name}: too many fetches are waiting for data; retry later`, {
        retriable: true,
      });
    }
    this.#watchers.add(listener);
    return () => this.#watchers.delete(listener);
  }

  /** OffsetForLeaderEpoch: where `leaderEpoch` ended in this leader's log. */
  offsetForLeaderEpoch(currentLeaderEpoch: number, leaderEpoch: number, topicId?: string): { errorCode: ErrorCode } & EpochEndOffset {
    if (this.#closedWith) return { errorCode: this.#closedWith, epoch: UNDEFINED, endOffset: UNDEFINED };
    // Another incarnation's epochs say nothing about this log.
    if (this.#otherIncarnation(topicId)) return { errorCode: 'INCONSISTENT_TOPIC_ID', epoch: UNDEFINED, endOffset: UNDEFINED };
    const code = this.#epochError(currentLeaderEpoch);
    if (code) return { errorCode: code, epoch: UNDEFINED, endOffset: UNDEFINED };
    return { errorCode: 'NONE', ...endOffsetForEpoch(this.#epochEntries(), leaderEpoch, this.#log.logEndOffset) };
  }

  /**
   * The controller's committed state for this partition, as seen in the
   * metadata log. A newer leader epoch with this broker still leader records
   * the epoch; a newer partition epoch replaces the ISR and replica set and
   * answers any pending proposal.
   */
  async applyPartitionState(state: PartitionState): Promise<void> {
    if (this.#closedWith) return;
    if (state.leaderEpoch < this.#leaderEpoch) return;
    if (state.leaderEpoch > this.#leaderEpoch) {
      const latest = latestEpoch(this.#log.leaderEpochs.entries);
      if (latest < state.leaderEpoch) await this.#log.assignLeaderEpoch?.(state.leaderEpoch, this.#log.logEndOffset);
      this.#leaderEpoch = state.leaderEpoch;
      this.#epochStartOffset = this.#log.logEndOffset;
      this.#alterSeq++;
      this.#pendingIsr = null;
      const now = this.#clock();
      for (const f of this.#followers.values()) {
        f.logEndOffset = UNDEFINED;
        f.lastCaughtUpTimeMs = now;
      }
    }
    if (state.partitionEpoch < this.#partitionEpoch) return;
    this.#commitState(state);
  }

  /**
   * Stops leading (a new leader was elected, or the partition moved): fails
   * waiting produces with `code` (NOT_LEADER by default), wakes parked
   * fetches, waits for appends already handed to the log, and checkpoints the
   * high watermark. Await it before the log gets a new leader or follower.
   */
  async resign(code: ErrorCode = 'NOT_LEADER'): Promise<void> {
    if (this.#closedWith) return;
    this.#closedWith = code;
    if (this.#isrTimer !== undefined) this.#timers.clearTimeout(this.#isrTimer);
    this.#alterSeq++;
    this.#purgatory.failAll(
      () => new MqError(code, `${this.#name}: this broker is no longer the leader (epoch ${this.#leaderEpoch}); ask metadata for the new one`),
    );
    this.#notify();
    for (const w of [...this.#confirmWaiters]) w();
    // Appends already handed to the log finish in this epoch before anyone
    // leads the log in the next one (Kafka's leaderIsrUpdateLock).
    await Promise.allSettled([...this.#appending]);
    this.#logger.info({ topic: this.topic, partition: this.partition, leaderEpoch: this.#leaderEpoch }, 'resigned leadership');
    await this.#checkpointWriter.flush();
  }

  /** {@link resign} with LOG_CLOSED. */
  close(): Promise<void> {
    return this.resign('LOG_CLOSED');
  }

  // ------------------------------------------------------------------ inner

  #newFollower(now: number): FollowerState {
    return { logEndOffset: UNDEFINED, logStartOffset: UNDEFINED, lastFetchTimeMs: 0, lastCaughtUpTimeMs: now, lastFetchLeaderLogEndOffset: UNDEFINED, lostRecords: false };
  }

  /**
   * The answer to a produce the log refused for its producer sequence or id
   * (a gap, an unknown producer id). A leader that was paused or cut off may
   * have been replaced without knowing it yet, and the producer then wrote
   * the missing batches to the new leader: the refusal is final only from a
   * leader that still leads. So, with other ISR members, it first waits for
   * the next fetch of one of them at this epoch (it follows this leader:
   * the refusal stands), and answers NOT_LEADER (retriable: the producer
   * asks for metadata and sends to the new leader) if it resigns or none
   * fetches within the produce's timeout. Alone in the ISR, no one else can
   * lead: the refusal stands at once.
   */
  async #sequenceRefusal(err: MqError, options: LeaderAppendOptions): Promise<MqError> {
    if (this.#closedWith) return this.#maybeDeposed(err);
    if (!this.#isr.some((id) => id !== this.brokerId)) return err;
    if (options.signal?.aborted) return this.#maybeDeposed(err);
    const confirmed = await new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        this.#confirmWaiters.delete(wake);
        this.#timers.clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const wake = () => done(!this.#closedWith);
      const onAbort = () => done(false);
      const timer = this.#timers.setTimeout(() => done(false), options.timeoutMs ?? DEFAULT_PRODUCE_TIMEOUT_MS);
      this.#confirmWaiters.add(wake);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
    return confirmed ? err : this.#maybeDeposed(err);
  }

  #maybeDeposed(err: MqError): MqError {
    return new MqError(
      'NOT_LEADER',
      `${this.#name}: refused the batch (${err.message}), but broker ${this.brokerId} could not confirm it still leads epoch ${this.#leaderEpoch} (no in-sync follower fetched from it): ask metadata for the leader and retry`,
      { cause: err, leaderEpoch: this.#leaderEpoch },
    );
  }

  #ensureLeader(): void {
    if (this.#closedWith) {
      throw new MqError(this.#closedWith, `${this.#name}: this broker is no longer the leader; ask metadata for the new one`);
    }
  }

  #checkMinIsr(code: 'NOT_ENOUGH_REPLICAS' | 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'): void {
    if (this.#isr.length < this.#options.minInsyncReplicas) throw this.#minIsrError(code);
  }

  #minIsrError(code: 'NOT_ENOUGH_REPLICAS' | 'NOT_ENOUGH_REPLICAS_AFTER_APPEND'): MqError {
    const min = this.#options.minInsyncReplicas;
    const what = code === 'NOT_ENOUGH_REPLICAS' ? 'nothing was appended' : 'the records were appended but are not safe';
    return new MqError(
      code,
      `${this.#name}: the ISR [${this.#isr.join(', ')}] has ${this.#isr.length} replicas, below min.insync.replicas ${min}; ${what} ` +
        '(bring the lagging replicas back, or lower min.insync.replicas)',
      { isr: [...this.#isr], minInsyncReplicas: min },
    );
  }

  #epochError(currentLeaderEpoch: number): ErrorCode | null {
    if (currentLeaderEpoch === UNDEFINED) return null;
    if (currentLeaderEpoch < this.#leaderEpoch) return 'FENCED_LEADER_EPOCH';
    if (currentLeaderEpoch > this.#leaderEpoch) return 'UNKNOWN_LEADER_EPOCH';
    return null;
  }

  /** A request naming a topic id other than this log's: it was meant for another incarnation of the topic. */
  #otherIncarnation(topicId: string | undefined): boolean {
    return topicId !== undefined && topicId !== '' && topicId !== this.topicId;
  }

  #validateFetch(request: FetchPartitionRequest, replicaId: number): FetchPartitionResponse | null {
    if (this.#closedWith) {
      return this.#response(request, this.#closedWith === 'LOG_CLOSED' ? 'NOT_LEADER' : this.#closedWith, {
        errorMessage: `broker ${this.brokerId} no longer leads ${this.#name}`,
      });
    }
    if (this.#otherIncarnation(request.topicId)) {
      // Nothing of it is counted (no follower position, no high watermark) and nothing is read.
      return this.#response(request, 'INCONSISTENT_TOPIC_ID', {
        errorMessage: `fetch for ${this.#name} with topic id ${request.topicId}; broker ${this.brokerId} leads the incarnation with topic id ${this.topicId || '(none)'}`,
      });
    }
    const code = this.#epochError(request.currentLeaderEpoch);
    if (code) {
      return this.#response(request, code, {
        errorMessage: `fetch for ${this.#name} in leader epoch ${request.currentLeaderEpoch}; the leader is in epoch ${this.#leaderEpoch}`,
      });
    }
    if (replicaId !== CONSUMER_REPLICA_ID && (replicaId === this.brokerId || !this.#replicas.includes(replicaId))) {
      this.#logger.warn({ topic: this.topic, partition: this.partition, replicaId, replicas: this.#replicas }, 'refused replica fetch');
      return this.#response(request, 'REPLICA_NOT_AVAILABLE', {
        errorMessage: `broker ${replicaId} is not a follower of ${this.#name} (replicas [${this.#replicas.join(', ')}])`,
      });
    }
    return null;
  }

  /**
   * The log's epoch cache, plus this leader's epoch at the offset where it
   * took over when the log has not recorded it yet (a log without
   * assignLeaderEpoch records it with the first append): OffsetForLeaderEpoch
   * then answers as if it had been recorded on becoming leader, as Kafka does.
   */
  #epochEntries(): readonly EpochEntry[] {
    const entries = this.#log.leaderEpochs.entries;
    if (latestEpoch(entries) >= this.#leaderEpoch) return entries;
    return [...entries.filter((e) => e.startOffset < this.#epochStartOffset), { epoch: this.#leaderEpoch, startOffset: this.#epochStartOffset }];
  }

  #divergence(request: FetchPartitionRequest): EpochEndOffset | null {
    const last = request.lastFetchedEpoch ?? UNDEFINED;
    if (last === UNDEFINED) return null;
    const eo = endOffsetForEpoch(this.#epochEntries(), last, this.#log.logEndOffset);
    if (eo.epoch < last || eo.endOffset < request.fetchOffset) return eo;
    return null;
  }

  #response(
    request: FetchPartitionRequest,
    errorCode: ErrorCode,
    extra: { records?: Buffer; errorMessage?: string; divergingEpoch?: EpochEndOffset; abortedTransactions?: Array<{ producerId: number; firstOffset: number }> } = {},
  ): FetchPartitionResponse {
    const out: FetchPartitionResponse = {
      topic: request.topic,
      // The incarnation asked about (a request naming another is refused before anything is read), else this log's.
      topicId: request.topicId || this.topicId,
      partition: request.partition,
      errorCode,
      highWatermark: this.#highWatermark,
      logStartOffset: this.#log.logStartOffset,
      logEndOffset: this.#log.logEndOffset,
      lastStableOffset: this.lastStableOffset,
      records: extra.records ?? EMPTY,
      currentLeaderId: this.#closedWith ? UNDEFINED : this.brokerId,
      currentLeaderEpoch: this.#leaderEpoch,
    };
    if (extra.errorMessage !== undefined) out.errorMessage = extra.errorMessage;
    if (extra.divergingEpoch !== undefined) out.divergingEpoch = extra.divergingEpoch;
    if (extra.abortedTransactions !== undefined && extra.abortedTransactions.length > 0) out.abortedTransactions = extra.abortedTransactions;
    return out;
  }

  #updateFollower(replicaId: number, request: FetchPartitionRequest): void {
    const now = this.#clock();
    let f = this.#followers.get(replicaId);
    if (!f) {
      f = this.#newFollower(0);
      this.#followers.set(replicaId, f);
    }
    const leo = this.#log.logEndOffset;
    if (request.fetchOffset < this.#highWatermark && this.#isr.includes(replicaId)) {
      // An ISR member never truncates below the HW, so it lost committed records
      // (an empty or damaged disk, a restart with a shorter log): it must not
      // stay eligible for leadership while it refetches them.
      if (!f.lostRecords) {
        this.#logger.error(
          { topic: this.topic, partition: this.partition, replicaId, fetchOffset: request.fetchOffset, highWatermark: this.#highWatermark },
          'ISR member fetches below the high watermark: it lost committed records; removing it from the ISR',
        );
      }
      f.lostRecords = true;
      f.logEndOffset = request.fetchOffset;
      f.lastFetchLeaderLogEndOffset = leo;
      f.lastFetchTimeMs = now;
      this.#maybeShrinkIsr();
      return;
    }
    if (request.fetchOffset >= this.#highWatermark) f.lostRecords = false;
    if (request.fetchOffset >= leo) f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, now);
    else if (request.fetchOffset >= f.lastFetchLeaderLogEndOffset && f.lastFetchLeaderLogEndOffset !== UNDEFINED) {
      f.lastCaughtUpTimeMs = Math.max(f.lastCaughtUpTimeMs, f.lastFetchTimeMs);
    }
    f.logEndOffset = request.fetchOffset;
    f.logStartOffset = request.logStartOffset ?? UNDEFINED;
    f.lastFetchLeaderLogEndOffset = leo;
    f.lastFetchTimeMs = now;
    if (this.#confirmWaiters.size > 0 && this.#isr.includes(replicaId)) for (const w of [...this.#confirmWaiters]) w();
    this.#maybeExpandIsr(replicaId, f);
    this.#maybeAdvanceHighWatermark();
  }

  /** The committed ISR plus any member a pending expansion adds: the HW waits for all of them. */
  #maximalIsr(): readonly number[] {
    if (!this.#pendingIsr) return this.#isr;
    const out = [...this.#isr];
    for (const id of this.#pendingIsr) if (!out.includes(id)) out.push(id);
    return out;
  }

  #maybeAdvanceHighWatermark(): void {
    if (this.#closedWith) return;
    let min = this.#log.logEndOffset;
    for (const id of this.#maximalIsr()) {
      if (id === this.brokerId) continue;
      const f = this.#followers.get(id);
      const leo = f ? f.logEndOffset : UNDEFINED;
      if (leo === UNDEFINED) return; // a member we have not heard from in this epoch holds the HW
      min = Math.min(min, leo);
    }
    if (min <= this.#highWatermark) return;
    this.#highWatermark = min;
    this.#log.onHighWatermarkUpdated?.(min);
    const tooSmall = this.#isr.length < this.#options.minInsyncReplicas;
    this.#purgatory.complete(min, tooSmall ? () => this.#minIsrError('NOT_ENOUGH_REPLICAS_AFTER_APPEND') : undefined);
    this.#notify();
    this.#checkpointWriter.set(min);
  }

  #maybeExpandIsr(replicaId: number, f: FollowerState): void {
    if (this.#isr.includes(replicaId) || this.#pendingIsr || !this.#mayPropose()) return;
    // Caught up: at the high watermark and into this leader's epoch.
    if (f.logEndOffset >= this.#highWatermark && f.logEndOffset >= this.#epochStartOffset) {
      this.#propose([...this.#isr, replicaId], 'expand', [replicaId]);
    }
  }

  #mayPropose(): boolean {
    return !this.#closedWith && this.#clock() >= this.#noProposalsUntil;
  }

  #scheduleIsrCheck(): void {
    this.#isrTimer = this.#timers.setTimeout(() => {
      if (this.#closedWith) return;
      this.#maybeShrinkIsr();
      this.#scheduleIsrCheck();
    }, this.#options.isrCheckIntervalMs);
  }

  #maybeShrinkIsr(): void {
    if (this.#pendingIsr || !this.#mayPropose()) return;
    const now = this.#clock();
    const lagging = this.#isr.filter((id) => {
      if (id === this.brokerId) return false;
      const f = this.#followers.get(id);
      return !f || f.lostRecords || now - f.lastCaughtUpTimeMs > this.#options.replicaLagTimeMaxMs;
    });
    if (lagging.length === 0) return;
    this.#propose(
      this.#isr.filter((id) => !lagging.includes(id)),
      'shrink',
      lagging,
    );
  }

  #propose(isr: number[], kind: 'shrink' | 'expand', changed: number[]): void {
    const seq = ++this.#alterSeq;
    this.#pendingIsr = isr;
    const request: AlterPartitionRequest = {
      topic: this.topic,
      ...(this.topicId ? { topicId: this.topicId } : {}),
      partition: this.partition,
      leaderId: this.brokerId,
      leaderEpoch: this.#leaderEpoch,
      partitionEpoch: this.#partitionEpoch,
      isr: [...isr],
    };
    const logged = { topic: this.topic, partition: this.partition, isr: this.#isr, proposed: isr, partitionEpoch: this.#partitionEpoch };
    this.#logger.info({ ...logged, [kind === 'shrink' ? 'lagging' : 'caughtUp']: changed }, `proposing ISR ${kind}`);
    this.#alterPartition(request).then(
      (state) => {
        if (seq !== this.#alterSeq || this.#closedWith) return;
        if (state.leaderEpoch !== this.#leaderEpoch) {
          // The command that took the expansion also moved leadership (a reassignment that removes this
          // replica completes in it). Until this leader learns so (applyPartitionState), the HW keeps waiting
          // for the whole proposed ISR: with the committed one it could acknowledge what the new leader lacks.
          return;
        }
        this.#pendingIsr = null;
        if (state.partitionEpoch < this.#partitionEpoch) return;
        this.#commitState(state);
      },
      (err: unknown) => {
        if (seq !== this.#alterSeq || this.#closedWith) return;
        this.#pendingIsr = null;
        const code = isMqError(err) ? err.code : 'UNKNOWN';
        // A stale view (INCONSISTENT_PARTITION_EPOCH, FENCED_LEADER_EPOCH) waits for the
        // controller's state to reach us through applyPartitionState, or a lag period at most;
        // other failures retry sooner.
        const stale = code === 'INCONSISTENT_PARTITION_EPOCH' || code === 'FENCED_LEADER_EPOCH';
        this.#noProposalsUntil =
          this.#clock() + (stale ? this.#options.replicaLagTimeMaxMs : Math.min(1000, this.#options.isrCheckIntervalMs));
        this.#logger.warn({ ...logged, err }, `ISR ${kind} refused by the controller`);
      },
    );
  }

  #commitState(state: PartitionState): void {
    const replicas = state.replicas ?? this.#replicas;
    if (!state.isr.includes(this.brokerId)) {
      this.#logger.error({ topic: this.topic, partition: this.partition, isr: state.isr }, 'committed ISR leaves out its leader');
    }
    const previous = this.#isr;
    this.#partitionEpoch = state.partitionEpoch;
    this.#isr = Object.freeze([...state.isr]);
    this.#replicas = Object.freeze([...replicas]);
    this.#pendingIsr = null;
    this.#alterSeq++;
    this.#noProposalsUntil = 0;
    const now = this.#clock();
    for (const id of this.#replicas) {
      if (id !== this.brokerId && !this.#followers.has(id)) this.#followers.set(id, this.#newFollower(now));
    }
    for (const id of [...this.#followers.keys()]) if (!this.#replicas.includes(id)) this.#followers.delete(id);
    if (previous.join() !== this.#isr.join()) {
      this.#logger.info(
        { topic: this.topic, partition: this.partition, from: previous, isr: this.#isr, partitionEpoch: this.#partitionEpoch },
        'ISR changed',
      );
    }
    if (this.#isr.length < this.#options.minInsyncReplicas && this.#purgatory.size > 0) {
      this.#purgatory.failAll(() => this.#minIsrError('NOT_ENOUGH_REPLICAS_AFTER_APPEND'));
    }
    this.#maybeAdvanceHighWatermark();
  }

  #notify(): void {
    for (const w of [...this.#watchers]) w();
  }

  #recordAppend(lastOffset: number, bytes: number): void {
    this.#recentBytes += bytes;
    this.#recent.push({ lastOffset, cumBytes: this.#recentBytes });
    if (this.#recent.length > RECENT_APPENDS) {
      const dropped = this.#recent.shift()!;
      this.#recentStartOffset = dropped.lastOffset + 1;
    }
  }

  /** Cumulative bytes of recent appends that end before `offset`. */
  #cumBytesBefore(offset: number): number {
    let lo = 0;
    let hi = this.#recent.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#recent[mid]!.lastOffset < offset) lo = mid + 1;
      else hi = mid;
    }
    return lo === 0 ? 0 : this.#recent[lo - 1]!.cumBytes;
  }
}
