/**
 * The follower side: one fetcher per leader broker pulls every partition
 * this broker follows from that leader with one Fetch at a time (replica id
 * set, long-polling on the leader), appends exactly the leader's batches, and
 * takes the leader's high watermark. A partition first goes through
 * truncation: OffsetForLeaderEpoch tells where the follower's latest epoch
 * ended on the leader, and any divergent tail is cut before fetching, so
 * replicas never disagree on what an offset holds.
 *
 * The next Fetch goes out as soon as the previous response is appended: its
 * fetch offset tells the leader "I have everything below this", so it must
 * never claim records still on their way to the log (the leader would count
 * them for acks=all). Partitions of one response are appended concurrently.
 */
import { silentLogger, type Clock, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import { MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { iterateBatches, lastOffset as batchLastOffset } from '@mq/protocol/batch';
import { CheckpointWriter, startingHighWatermark } from './checkpoint-writer.js';
import { ThrottleBucket } from './throttle-bucket.js';
import { latestEpoch, truncationTarget } from './epoch-cache.js';
import { parseFollowerFetcherOptions, type FollowerFetcherOptions, type ParsedFollowerFetcherOptions } from './options.js';
import {
  UNDEFINED,
  type EpochEndOffset,
  type FetchFn,
  type FetchPartitionResponse,
  type HighWatermarkCheckpoint,
  type OffsetForLeaderEpochFn,
  type OffsetForLeaderEpochPartitionResponse,
  type ReplicaLog,
} from './types.js';

export interface FollowerFetcherComponents {
  fetch: FetchFn;
  offsetForLeaderEpoch: OffsetForLeaderEpochFn;
  clock: Clock;
  timers: Timers;
  logger?: Logger;
  /** For backoff jitter; default Math.random. */
  random?: () => number;
  /**
   * Told when a partition stops fetching until the broker acts: FENCED_LEADER_EPOCH
   * (this broker's metadata is behind: call updateLeaderEpoch or move the partition).
   */
  onPartitionError?: (topic: string, partition: number, error: MqError) => void;
}

export interface FollowerPartitionOptions {
  topic: string;
  /**
   * The topic id (incarnation) the log belongs to: sent with every Fetch and
   * OffsetForLeaderEpoch, and an answer of another incarnation is dropped
   * (its records are never appended, its offsets never truncate this log).
   * Default '' (by name only).
   */
  topicId?: string;
  partition: number;
  log: ReplicaLog;
  /** The leader epoch this broker learned from metadata. */
  leaderEpoch: number;
  checkpoint: HighWatermarkCheckpoint;
  /**
   * The high watermark this broker already knows for the partition in this run (its replica's last role's, leader's
   * or follower's): the follower starts from the larger of it and the checkpoint, within the log. Default 0.
   */
  highWatermark?: number;
  /** Fetched within the fetcher's replication throttle (a replica being added by a reassignment). Default false. */
  throttled?: boolean;
}

export type FollowerPartitionState = 'truncating' | 'fetching' | 'fenced';

export interface FollowerPartitionStatus {
  topic: string;
  partition: number;
  state: FollowerPartitionState;
  leaderEpoch: number;
  highWatermark: number;
  logStartOffset: number;
  logEndOffset: number;
  /** When the partition's next attempt may start, after an error (clock ms); 0 when not delayed. */
  delayedUntil: number;
}

interface Entry {
  key: string;
  topic: string;
  topicId: string;
  partition: number;
  log: ReplicaLog;
  checkpoint: HighWatermarkCheckpoint;
  leaderEpoch: number;
  state: FollowerPartitionState;
  highWatermark: number;
  checkpointWriter: CheckpointWriter;
  delayedUntil: number;
  failures: number;
  /** The last fetch answered with a diverging epoch. */
  diverged: boolean;
  removed: boolean;
  /** Bumped when the partition's epoch or state changes under an in-flight request. */
  generation: number;
  /** The partition's in-flight work (append, truncate), awaited by removePartition. */
  work: Promise<void>;
  /** Fetched within the throttle (see setThrottle). */
  throttled: boolean;
}


function keyOf(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function createFollowerFetcher(options: FollowerFetcherOptions, components: FollowerFetcherComponents): FollowerFetcher {
  return new FollowerFetcher(parseFollowerFetcherOptions(options), components);
}

export class FollowerFetcher {
  readonly leaderId: number;
  readonly #options: ParsedFollowerFetcherOptions;
  readonly #c: FollowerFetcherComponents;
  readonly #logger: Logger;
  readonly #random: () => number;
  readonly #entries = new Map<string, Entry>();
  readonly #closing = new AbortController();
  #wake: (() => void) | null = null;
  #loop: Promise<void> | null = null;
  #failures = 0;
  #delayedUntil = 0;
  /** Replication throttle of the throttled partitions (its token bucket may go into debt). */
  readonly #throttle: ThrottleBucket;

  constructor(options: ParsedFollowerFetcherOptions, components: FollowerFetcherComponents) {
    this.#options = options;
    this.leaderId = options.leaderId;
    this.#c = components;
    this.#logger = components.logger ?? silentLogger;
    this.#random = components.random ?? Math.random;
    this.#throttle = new ThrottleBucket(() => components.clock());
  }

  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  get partitionCount(): number {
    return this.#entries.size;
  }

  /** Starts following a partition from this fetcher's leader; it truncates first, then fetches. */
  async addPartition(options: FollowerPartitionOptions): Promise<void> {
    if (this.closed) throw new MqError('CLOSED', 'the follower fetcher is closed');
    const key = keyOf(options.topic, options.partition);
    if (this.#entries.has(key)) {
      throw new MqError('INVALID_ARGUMENT', `${options.topic}-${options.partition} is already fetched by this fetcher`);
    }
    const stored = await options.checkpoint.load();
    const hw = startingHighWatermark(stored, options.highWatermark ?? 0, options.log);
    const checkpointWriter = new CheckpointWriter(
      options.checkpoint,
      { timers: this.#c.timers, logger: this.#logger, fields: { topic: options.topic, partition: options.partition } },
      this.#options.highWatermarkCheckpointIntervalMs,
      hw,
      stored,
    );
    this.#entries.set(key, {
      key,
      topic: options.topic,
      topicId: options.topicId ?? '',
      partition: options.partition,
      log: options.log,
      checkpoint: options.checkpoint,
      leaderEpoch: options.leaderEpoch,
      state: 'truncating',
      highWatermark: hw,
      checkpointWriter,
      delayedUntil: 0,
      throttled: options.throttled ?? false,
      failures: 0,
      diverged: false,
      removed: false,
      generation: 0,
      work: Promise.resolve(),
    });
    this.#logger.info(
      { topic: options.topic, partition: options.partition, leaderId: this.leaderId, leaderEpoch: options.leaderEpoch, highWatermark: hw },
      'following partition',
    );
    this.#start();
    this.#poke();
  }

  /**
   * The leader's epoch moved on (metadata) with the same leader: truncation
   * runs again before fetching in the new epoch.
   */
  updateLeaderEpoch(topic: string, partition: number, leaderEpoch: number): void {
    const e = this.#entries.get(keyOf(topic, partition));
    if (!e || leaderEpoch < e.leaderEpoch) return;
    if (leaderEpoch === e.leaderEpoch && e.state !== 'fenced') return;
    e.leaderEpoch = leaderEpoch;
    e.state = 'truncating';
    e.generation++;
    e.delayedUntil = 0;
    this.#poke();
  }

  /**
   * Stops following a partition (it moves to another leader, or this broker
   * becomes its leader). Waits for its in-flight append or truncation, saves
   * its high watermark, and returns it.
   */
  async removePartition(topic: string, partition: number): Promise<{ highWatermark: number } | undefined> {
    const e = this.#entries.get(keyOf(topic, partition));
    if (!e) return undefined;
    e.removed = true;
    e.generation++;
    this.#entries.delete(e.key);
    await e.work;
    await e.checkpointWriter.flush();
    this.#poke();
    return { highWatermark: e.highWatermark };
  }

  status(topic: string, partition: number): FollowerPartitionStatus | undefined {
    const e = this.#entries.get(keyOf(topic, partition));
    if (!e) return undefined;
    return {
      topic: e.topic,
      partition: e.partition,
      state: e.state,
      leaderEpoch: e.leaderEpoch,
      highWatermark: e.highWatermark,
      logStartOffset: e.log.logStartOffset,
      logEndOffset: e.log.logEndOffset,
      delayedUntil: e.delayedUntil,
    };
  }

  /** Stops fetching (aborting the request in flight), waits for in-flight appends, saves high watermarks. */
  async close(): Promise<void> {
    if (!this.closed) this.#closing.abort(new MqError('CLOSED', 'the follower fetcher was closed'));
    this.#poke();
    await this.#loop;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    for (const e of entries) {
      e.removed = true;
      await e.work;
      await e.checkpointWriter.flush();
    }
  }

  // -------------------------------------------------------------- throttle

  /**
   * The replication throttle: the throttled partitions (replicas a
   * reassignment is adding) of this fetcher together copy at most
   * `bytesPerSec` on average (a token bucket of one second; 0: no limit).
   * The other partitions are never held back. Changeable at any time.
   */
  setThrottle(bytesPerSec: number): void {
    if (this.#throttle.setRate(bytesPerSec)) this.#poke();
  }

  get throttle(): number {
    return this.#throttle.rate;
  }

  /** Puts a partition under the throttle, or takes it out (it caught up and joined the ISR). */
  setThrottled(topic: string, partition: number, throttled: boolean): void {
    const e = this.#entries.get(keyOf(topic, partition));
    if (!e || e.throttled === throttled) return;
    e.throttled = throttled;
    this.#poke();
  }

  // ------------------------------------------------------------------ loop

  #start(): void {
    if (this.#loop) return;
    this.#loop = this.#run().catch((err: unknown) => {
      this.#logger.error({ leaderId: this.leaderId, err }, 'follower fetcher stopped on an unexpected error');
    });
  }

  #poke(): void {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  }

  async #run(): Promise<void> {
    while (!this.closed) {
      const now = this.#c.clock();
      if (this.#delayedUntil > now) {
        await this.#idle(this.#delayedUntil - now);
        continue;
      }
      const ready = [...this.#entries.values()].filter((e) => e.delayedUntil <= now);
      const truncating = ready.filter((e) => e.state === 'truncating');
      if (truncating.length > 0) {
        await this.#truncationRound(truncating);
        continue;
      }
      const throttleWait = this.#throttle.waitMs();
      const fetching = ready.filter((e) => e.state === 'fetching' && (throttleWait === 0 || !e.throttled));
      if (fetching.length > 0) {
        await this.#fetchRound(fetching);
        continue;
      }
      const held = ready.some((e) => e.state === 'fetching' && e.throttled) ? [throttleWait] : [];
      const delays = [...[...this.#entries.values()].filter((e) => e.state !== 'fenced' && e.delayedUntil > now).map((e) => e.delayedUntil - now), ...held];
      await this.#idle(delays.length > 0 ? Math.max(0, Math.min(...delays)) : undefined);
    }
  }

  /** Waits for a poke, or `ms` on the injected timers. */
  #idle(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const done = (): void => {
        if (timer !== undefined) this.#c.timers.clearTimeout(timer);
        if (this.#wake === done) this.#wake = null;
        resolve();
      };
      this.#wake = done;
      if (ms !== undefined) timer = this.#c.timers.setTimeout(done, ms);
      if (this.closed) done();
    });
  }

  #backoff(failures: number, first = this.#options.backoffMs): number {
    const base = Math.min(this.#options.maxBackoffMs, first * 2 ** Math.min(failures - 1, 20));
    return Math.round(base * (0.8 + 0.4 * this.#random()));
  }

  #delayFetcher(err: unknown, what: string): void {
    this.#failures++;
    const ms = this.#backoff(this.#failures);
    this.#delayedUntil = this.#c.clock() + ms;
    this.#logger.warn({ leaderId: this.leaderId, err, retryInMs: ms }, `${what} to leader ${this.leaderId} failed`);
  }

  #delayPartition(e: Entry, code: ErrorCode, message?: string): void {
    e.failures++;
    // The leader has not applied its own election yet (usually): ask again soon, still doubling.
    const leaderChange = code === 'NOT_LEADER' || code === 'UNKNOWN_LEADER_EPOCH';
    const ms = this.#backoff(e.failures, leaderChange ? this.#options.leaderChangeBackoffMs : this.#options.backoffMs);
    e.delayedUntil = this.#c.clock() + ms;
    this.#logger.warn(
      { topic: e.topic, partition: e.partition, leaderId: this.leaderId, errorCode: code, message, retryInMs: ms },
      'replica fetch error',
    );
  }

  #fence(e: Entry, code: ErrorCode, message?: string): void {
    e.state = 'fenced';
    e.generation++;
    const error = new MqError(
      code,
      message ??
        `${e.topic}-${e.partition}: leader ${this.leaderId} refused epoch ${e.leaderEpoch}; waiting for newer metadata`,
      { topic: e.topic, partition: e.partition, leaderEpoch: e.leaderEpoch },
    );
    this.#logger.warn({ topic: e.topic, partition: e.partition, leaderId: this.leaderId, errorCode: code }, 'replica fetch fenced');
    this.#c.onPartitionError?.(e.topic, e.partition, error);
  }

  /**
   * An answer about another incarnation of the topic (deleted and created
   * again under the same name, on a leader whose metadata or ours is behind):
   * nothing of it is used. Retried after a backoff; the metadata moves the
   * partition once it catches up.
   */
  #otherIncarnation(e: Entry, answered: string | undefined): boolean {
    if (e.topicId === '' || (answered ?? '') === e.topicId) return false;
    this.#delayPartition(e, 'INCONSISTENT_TOPIC_ID', `leader ${this.leaderId} answered for topic id ${answered || '(none)'}, not this replica's ${e.topicId}`);
    return true;
  }

  /** Runs `fn` for a partition after its previous work, unless it was removed or changed meanwhile. */
  #schedule(e: Entry, generation: number, fn: () => Promise<void>): Promise<void> {
    const run = e.work.then(async () => {
      if (e.removed || e.generation !== generation) return;
      try {
        await fn();
      } catch (err) {
        if (isMqError(err) && err.code === 'LOG_CLOSED') {
          e.generation++;
          e.state = 'fenced';
        }
        this.#delayPartition(e, isMqError(err) ? err.code : 'UNKNOWN', err instanceof Error ? err.message : String(err));
      }
    });
    e.work = run;
    return run;
  }

  /** Sends `request` with a deadline of requestTimeoutMs on top of `extraMs`, aborted by close. */
  async #exchange<T>(send: (signal: AbortSignal) => Promise<T>, extraMs: number): Promise<T> {
    const ac = new AbortController();
    const onClose = (): void => ac.abort(this.#closing.signal.reason);
    this.#closing.signal.addEventListener('abort', onClose, { once: true });
    const ms = this.#options.requestTimeoutMs + extraMs;
    const timer = this.#c.timers.setTimeout(
      () => ac.abort(new MqError('REQUEST_TIMED_OUT', `leader ${this.leaderId} did not answer within ${ms} ms`)),
      ms,
    );
    try {
      return await new Promise<T>((resolve, reject) => {
        const onAbort = (): void => reject(ac.signal.reason);
        ac.signal.addEventListener('abort', onAbort, { once: true });
        send(ac.signal).then(resolve, reject).finally(() => ac.signal.removeEventListener('abort', onAbort));
      });
    } finally {
      this.#c.timers.clearTimeout(timer);
      this.#closing.signal.removeEventListener('abort', onClose);
    }
  }

  // ------------------------------------------------------------ truncation

  async #truncationRound(entries: Entry[]): Promise<void> {
    const asking: { e: Entry; generation: number; epoch: number }[] = [];
    for (const e of entries) {
      const epoch = latestEpoch(e.log.leaderEpochs.entries);
      if (epoch === UNDEFINED) {
        // No epochs: nothing this replica wrote can be placed; keep only what is known committed.
        const generation = e.generation;
        await this.#schedule(e, generation, async () => {
          await this.#truncate(e, e.highWatermark, 'no leader epochs in the log');
          e.state = 'fetching';
        });
        continue;
      }
      asking.push({ e, generation: e.generation, epoch });
    }
    if (asking.length === 0) return;
    let answers: OffsetForLeaderEpochPartitionResponse[];
    try {
      const response = await this.#exchange(
        (signal) =>
          this.#c.offsetForLeaderEpoch(
            this.leaderId,
            {
              replicaId: this.#options.brokerId,
              partitions: asking.map(({ e, epoch }) => ({
                topic: e.topic,
                topicId: e.topicId,
                partition: e.partition,
                currentLeaderEpoch: e.leaderEpoch,
                leaderEpoch: epoch,
              })),
            },
            signal,
          ),
        0,
      );
      answers = response.partitions;
      this.#failures = 0;
    } catch (err) {
      if (!this.closed) this.#delayFetcher(err, 'OffsetForLeaderEpoch');
      return;
    }
    await Promise.all(
      asking.map(({ e, generation }) => {
        const a = answers.find((r) => r.topic === e.topic && r.partition === e.partition);
        return this.#schedule(e, generation, async () => {
          if (!a) {
            this.#delayPartition(e, 'UNKNOWN', 'the leader did not answer for this partition');
            return;
          }
          if (this.#otherIncarnation(e, a.topicId)) return;
          if (a.errorCode === 'FENCED_LEADER_EPOCH') return this.#fence(e, a.errorCode);
          if (a.errorCode !== 'NONE') return this.#delayPartition(e, a.errorCode);
          await this.#truncateToLeader(e, { epoch: a.leaderEpoch, endOffset: a.endOffset });
        });
      }),
    );
  }

  /** Applies the leader's answer for our latest epoch; done when the answer is final. */
  async #truncateToLeader(e: Entry, leader: EpochEndOffset): Promise<void> {
    const target = truncationTarget(e.log, leader, e.highWatermark);
    await this.#truncate(e, target.offset, `leader ${this.leaderId} has epoch ${leader.epoch} ending at ${leader.endOffset}`);
    e.failures = 0;
    if (target.complete) e.state = 'fetching';
  }

  async #truncate(e: Entry, offset: number, reason: string): Promise<void> {
    const leo = e.log.logEndOffset;
    if (offset >= leo) {
      // Nothing to cut, but an epoch this replica recorded as a leader without
      // appending anything must go, or it keeps diverging from the leader's
      // cache (Kafka truncates the epoch cache at the log end for the same reason).
      const entries = e.log.leaderEpochs.entries;
      if (entries.length > 0 && entries[entries.length - 1]!.startOffset >= leo) await e.log.truncateTo(leo);
      return;
    }
    const fields = { topic: e.topic, partition: e.partition, from: leo, to: offset, count: leo - Math.max(offset, e.log.logStartOffset), highWatermark: e.highWatermark, reason };
    if (offset < e.highWatermark) {
      // Only an unclean leader election (or a leader that lost its disk) gets here.
      this.#logger.error(fields, 'truncating below the high watermark: records this replica saw committed are discarded');
      e.highWatermark = Math.max(offset, e.log.logStartOffset);
      e.checkpointWriter.set(e.highWatermark);
    } else {
      this.#logger.info(fields, 'truncating divergent tail');
    }
    await e.log.truncateTo(Math.max(offset, e.log.logStartOffset));
    await e.checkpointWriter.flush();
  }

  // ----------------------------------------------------------------- fetch

  async #fetchRound(entries: Entry[]): Promise<void> {
    const sent = entries.map((e) => ({ e, generation: e.generation, fetchOffset: e.log.logEndOffset }));
    let responses: FetchPartitionResponse[];
    try {
      const response = await this.#exchange(
        (signal) =>
          this.#c.fetch(
            this.leaderId,
            {
              replicaId: this.#options.brokerId,
              replicaEpoch: this.#options.brokerEpoch,
              maxWaitMs: this.#options.maxWaitMs,
              minBytes: this.#options.minBytes,
              maxBytes: this.#options.maxBytes,
              partitions: sent.map(({ e, fetchOffset }) => ({
                topic: e.topic,
                topicId: e.topicId,
                partition: e.partition,
                fetchOffset,
                partitionMaxBytes: this.#options.partitionMaxBytes,
                currentLeaderEpoch: e.leaderEpoch,
                logStartOffset: e.log.logStartOffset,
                lastFetchedEpoch: latestEpoch(e.log.leaderEpochs.entries),
              })),
            },
            signal,
          ),
        this.#options.maxWaitMs,
      );
      responses = response.partitions;
      this.#failures = 0;
    } catch (err) {
      if (!this.closed) this.#delayFetcher(err, 'Fetch');
      return;
    }
    await Promise.all(
      sent.map(({ e, generation, fetchOffset }) => {
        const r = responses.find((p) => p.topic === e.topic && p.partition === e.partition);
        if (!r) return undefined;
        return this.#schedule(e, generation, async () => {
          if (e.log.logEndOffset !== fetchOffset) return; // the log moved under us: fetch again
          if (e.throttled) this.#throttle.take(r.records.length);
          await this.#handleFetched(e, r);
        });
      }),
    );
  }

  async #handleFetched(e: Entry, r: FetchPartitionResponse): Promise<void> {
    if (this.#otherIncarnation(e, r.topicId)) return;
    switch (r.errorCode) {
      case 'NONE':
        if (r.divergingEpoch) {
          await this.#truncateToLeader(e, r.divergingEpoch);
          // Even when not final, the next fetch carries our new last epoch and is checked again.
          e.state = 'fetching';
          // Two divergences in a row: one truncation should have settled it. Back off rather than spin.
          if (e.diverged) this.#delayPartition(e, 'NONE', `log still diverges from leader ${this.leaderId} after truncation`);
          e.diverged = true;
          return;
        }
        e.diverged = false;
        if (r.records.length > 0) await this.#append(e, r.records);
        e.failures = 0;
        await this.#advance(e, r);
        return;
      case 'OFFSET_OUT_OF_RANGE':
        await this.#outOfRange(e, r);
        return;
      case 'FENCED_LEADER_EPOCH':
        this.#fence(e, r.errorCode, r.errorMessage);
        return;
      default:
        // UNKNOWN_LEADER_EPOCH (the leader has not seen the new epoch yet), NOT_LEADER,
        // REPLICA_NOT_AVAILABLE, storage errors: retry after a backoff; metadata moves us if needed.
        this.#delayPartition(e, r.errorCode, r.errorMessage);
    }
  }

  /**
   * Appends the whole batches of a response from our log end on, exactly as the leader wrote them.
   * A batch may start above the offset expected when the leader's compaction removed whole batches
   * in between (the gap holds nothing on the leader either); never below it.
   */
  async #append(e: Entry, records: Buffer): Promise<void> {
    const leo = e.log.logEndOffset;
    let start = -1;
    let end = 0;
    let expected = leo;
    for (const span of iterateBatches(records)) {
      const last = batchLastOffset(span.header);
      if (last < expected && start < 0) continue; // already have it
      if (span.header.baseOffset < expected) {
        throw new MqError(
          'CORRUPT_MESSAGE',
          `${e.topic}-${e.partition}: leader sent a batch at offset ${span.header.baseOffset}, below the next offset expected (${expected})`,
        );
      }
      if (start < 0) start = span.position;
      end = span.position + span.size;
      expected = last + 1;
    }
    if (start < 0) return;
    // The log records each batch's leader epoch in its epoch cache.
    await e.log.append(records.subarray(start, end), { assignOffsets: false });
  }

  async #advance(e: Entry, r: FetchPartitionResponse): Promise<void> {
    const hw = Math.min(r.highWatermark, e.log.logEndOffset);
    if (hw > e.highWatermark) {
      e.highWatermark = hw;
      e.checkpointWriter.set(hw);
    }
    // Every answer (O(1) when nothing ended below it): a truncation or restart rebuilds ended transactions the HW passed.
    e.log.onHighWatermarkUpdated?.(e.highWatermark);
    // Follow the leader's log start (retention, DeleteRecords) once committed here too.
    if (r.logStartOffset > e.log.logStartOffset && r.logStartOffset <= e.highWatermark) {
      await e.log.deleteRecordsBefore(r.logStartOffset);
    }
  }

  async #outOfRange(e: Entry, r: FetchPartitionResponse): Promise<void> {
    const leo = e.log.logEndOffset;
    if (r.logStartOffset > leo) {
      // Behind the leader's log start (a long absence, an empty disk): start over there.
      this.#logger.warn(
        { topic: e.topic, partition: e.partition, logEndOffset: leo, leaderLogStartOffset: r.logStartOffset },
        'replica is behind the leader\'s log start: truncating fully and restarting from it',
      );
      await truncateFullyAndStartAt(e.log, r.logStartOffset);
      e.highWatermark = r.logStartOffset;
      e.checkpointWriter.set(e.highWatermark);
      await e.checkpointWriter.flush();
      return;
    }
    if (r.logEndOffset >= 0 && leo > r.logEndOffset) {
      await this.#truncate(e, r.logEndOffset, `leader ${this.leaderId} ends at ${r.logEndOffset}`);
      return;
    }
    this.#delayPartition(e, r.errorCode, r.errorMessage);
  }

}

/** Empties a log and restarts it at `offset`, with the log's own method when it has one. */
export async function truncateFullyAndStartAt(log: ReplicaLog, offset: number): Promise<void> {
  if (log.truncateFullyAndStartAt) {
    await log.truncateFullyAndStartAt(offset);
    return;
  }
  await log.truncateTo(log.logStartOffset);
  await log.deleteRecordsBefore(offset);
}
