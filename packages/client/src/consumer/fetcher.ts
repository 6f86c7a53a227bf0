/**
 * Fetch, position and seek for a set of assigned partitions — everything a
 * consumer does apart from deciding which partitions it owns (manual
 * `assign` now; group membership can drive `assign`/`unassign` later).
 *
 * Pipelining: a partition is fetched again while the application still
 * processes its previous data (up to two completed fetches per partition),
 * within one bound on buffered bytes. One fetch per broker is in flight.
 */
import { Buffer } from '@mq/protocol/platform';
import { MqError, errorCodeFromNumber, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from '@mq/protocol/wire';
import { invalidatesMetadata, unknownTopicError, type Cluster } from '../cluster.js';
import type { ResponseOf } from '../connection.js';
import { abortError } from '../retrier.js';
import { channels, type FetchMessage } from '../diagnostics.js';
import type { ParsedConsumerOptions } from './options.js';
import { CompletedFetch, endOfWholeBatches, type ConsumerRecord } from './record-decoder.js';

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface TopicPartitionOffset extends TopicPartition {
  offset?: number;
}

type ResetTo = 'earliest' | 'latest';

interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** The next offset poll() returns; null until known. */
  position: number | null;
  /** The next offset to fetch (ahead of `position` while data is buffered). */
  fetchOffset: number;
  /** Where to reset to before fetching (seekToBeginning/End, or no position yet). */
  reset: ResetTo | 'none' | null;
  paused: boolean;
  /** Bumped on every seek: data fetched before it is dropped. */
  epoch: number;
  /** The seek epoch of the outstanding fetch including this partition (-1: none). */
  inFlightEpoch: number;
  resetting: boolean;
  buffered: CompletedFetch[];
  backoffUntil: number;
  failures: number;
  /** An error for poll() to throw (e.g. OFFSET_OUT_OF_RANGE with autoOffsetReset none). */
  error: MqError | undefined;
  highWatermark: number;
  logStartOffset: number;
  leaderEpoch: number;
  /**
   * The topic id (incarnation) the position belongs to, sent in every fetch ('' until known): a leader of
   * another incarnation (the topic deleted and re-created) answers INCONSISTENT_TOPIC_ID or UNKNOWN_TOPIC_ID
   * instead of serving the same offsets of the new topic (Kafka fetch v13+).
   */
  topicId: string;
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class Fetcher {
  private readonly parts = new Map<string, PartitionState>();
  /** Completed fetches in arrival order (fair across partitions). */
  private readonly completed: CompletedFetch[] = [];
  private bufferedBytes = 0;
  private readonly fetchingFrom = new Map<number, number>();
  private waiters: Array<() => void> = [];
  private readonly abort = new AbortController();
  private retryTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private current: CompletedFetch | undefined;

  constructor(
    private readonly cluster: Cluster,
    private readonly options: ParsedConsumerOptions,
  ) {}

  /** read_committed fetches: up to the last stable offset, aborted transactions dropped. */
  private get readCommitted(): boolean {
    return this.options.isolationLevel === 'read_committed';
  }

  // ------------------------------------------------------------ assignment

  assign(partitions: readonly TopicPartitionOffset[]): void {
    const next = new Map<string, PartitionState>();
    for (const tp of partitions) {
      checkTopicPartition(tp);
      const k = key(tp.topic, tp.partition);
      const st = this.parts.get(k) ?? this.newState(tp.topic, tp.partition);
      if (tp.offset !== undefined && tp.offset !== null) this.setPosition(st, checkOffset(tp.offset));
      next.set(k, st);
    }
    for (const [k, st] of this.parts) if (!next.has(k)) this.dropBuffered(st);
    this.parts.clear();
    for (const [k, st] of next) this.parts.set(k, st);
    this.wake();
  }

  assignment(): TopicPartition[] {
    return [...this.parts.values()].map(({ topic, partition }) => ({ topic, partition }));
  }

  seek(tp: TopicPartition, offset: number): void {
    const st = this.state(tp);
    this.setPosition(st, checkOffset(offset));
    this.wake();
  }

  seekToBeginning(tps?: readonly TopicPartition[]): void {
    for (const st of this.select(tps)) this.requestReset(st, 'earliest');
    this.wake();
  }

  seekToEnd(tps?: readonly TopicPartition[]): void {
    for (const st of this.select(tps)) this.requestReset(st, 'latest');
    this.wake();
  }

  /** The next offset poll() will return for a partition (resolving the reset policy first if needed). */
  async position(tp: TopicPartition, signal?: AbortSignal): Promise<number> {
    const st = this.state(tp);
    const deadline = Date.now() + this.cluster.options.requestTimeoutMs;
    while (st.position === null || st.reset !== null) {
      if (st.error) throw takeError(st);
      if (this.closed) throw new MqError('CLOSED', 'the consumer is closed');
      const now = Date.now();
      if (now > deadline) {
        throw new MqError('REQUEST_TIMED_OUT', `no position for ${tp.topic}/${tp.partition} within ${this.cluster.options.requestTimeoutMs} ms`);
      }
      if (st.resetting || st.backoffUntil > now) await this.waitForData(Math.max(10, st.backoffUntil - now), signal);
      else await this.resetPositions([st], signal);
    }
    return st.position;
  }

  pause(tps: readonly TopicPartition[]): void {
    for (const st of this.select(tps)) st.paused = true;
  }

  resume(tps: readonly TopicPartition[]): void {
    for (const st of this.select(tps)) st.paused = false;
    this.wake();
  }

  paused(): TopicPartition[] {
    return [...this.parts.values()].filter((s) => s.paused).map(({ topic, partition }) => ({ topic, partition }));
  }

  /** High watermark and log start offset seen in the last fetch of a partition (-1: not fetched yet). */
  watermarks(tp: TopicPartition): { low: number; high: number } {
    const st = this.state(tp);
    return { low: st.logStartOffset, high: st.highWatermark };
  }

  /** Raw bytes fetched and not yet returned by poll(). */
  get buffered(): { bytes: number; fetches: number } {
    return { bytes: this.bufferedBytes, fetches: this.completed.length + (this.current ? 1 : 0) };
  }

  // ------------------------------------------------------------------ poll

  /**
   * Returns up to `max` records that are ready, waiting up to `timeoutMs`
   * when none are. Throws a partition's pending error (e.g. offset out of
   * range with autoOffsetReset none, unknown topic).
   */
  async poll(timeoutMs: number, max: number, signal?: AbortSignal): Promise<ConsumerRecord[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.closed) return [];
      signal?.throwIfAborted();
      for (const st of this.parts.values()) if (st.error) throw takeError(st);
      const out: ConsumerRecord[] = [];
      await this.collect(out, max);
      this.wake();
      if (out.length > 0) return out;
      const left = deadline - Date.now();
      if (left <= 0) return out;
      await this.waitForData(left, signal);
    }
  }

  private async collect(out: ConsumerRecord[], max: number): Promise<void> {
    while (out.length < max) {
      const f = this.current ?? this.completed.shift();
      if (!f) return;
      this.current = f;
      const st = this.parts.get(key(f.topic, f.partition));
      if (!st || st.epoch !== f.epoch || st.position === null) {
        this.finish(f, st);
        continue;
      }
      const before = out.length;
      try {
        await f.drain(out, max - out.length, st.position);
      } catch (err) {
        const skipTo = (err as { skipTo?: unknown }).skipTo;
        if (typeof skipTo === 'number') {
          // A batch no reader can decode (its CRC held): the records before it are returned, the error is
          // reported once by the next poll, and consumption goes on after the batch instead of stopping there.
          if (out.length > before) st.position = out[out.length - 1]!.offset + 1;
          st.position = Math.max(st.position, skipTo);
          st.error = err as MqError;
          this.finish(f, st);
          st.fetchOffset = st.position;
          st.buffered = [];
          return;
        }
        // Corrupt data: drop it and report; the position stays so a refetch can retry.
        out.length = before;
        this.finish(f, st);
        st.fetchOffset = st.position;
        st.buffered = [];
        throw err;
      }
      if (out.length > before) st.position = out[out.length - 1]!.offset + 1;
      if (f.done) {
        if (f.nextOffset > st.position) st.position = f.nextOffset;
        this.finish(f, st);
      } else {
        return; // `max` reached inside this fetch
      }
    }
  }

  private finish(f: CompletedFetch, st: PartitionState | undefined): void {
    if (this.current === f) this.current = undefined;
    this.bufferedBytes -= f.bytes;
    if (st) {
      const i = st.buffered.indexOf(f);
      if (i >= 0) st.buffered.splice(i, 1);
    }
  }

  private waitForData(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let onAbort: (() => void) | undefined;
      const done = () => {
        clearTimeout(timer);
        if (onAbort) signal!.removeEventListener('abort', onAbort);
        resolve();
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(done);
        if (i >= 0) this.waiters.splice(i, 1);
        done();
      }, ms);
      if (signal) {
        onAbort = () => {
          clearTimeout(timer);
          const i = this.waiters.indexOf(done);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
      this.waiters.push(done);
    });
  }

  private notify(): void {
    if (this.waiters.length === 0) return;
    for (const w of this.waiters.splice(0)) w();
  }

  // ----------------------------------------------------------------- fetch

  /** Starts whatever fetches and offset resets can run now. */
  wake(): void {
    if (this.closed) return;
    const now = Date.now();
    const toReset: PartitionState[] = [];
    const byLeader = new Map<number, PartitionState[]>();
    let nextRetry = Infinity;
    const urgent = new Map<number, PartitionState[]>();
    for (const st of this.parts.values()) {
      if (st.error || st.inFlightEpoch === st.epoch || st.resetting) continue;
      if (st.backoffUntil > now) {
        nextRetry = Math.min(nextRetry, st.backoffUntil);
        continue;
      }
      if (st.position === null || st.reset !== null) {
        toReset.push(st);
        continue;
      }
      if (st.paused || st.buffered.length >= 2 || this.bufferedBytes >= this.options.maxBufferedBytes) continue;
      const meta = this.cluster.cachedTopic(st.topic);
      const leader = meta?.partitions[st.partition]?.leader ?? -1;
      if (!meta || leader < 0) {
        toReset.push(st); // resolves metadata first
        continue;
      }
      if (st.topicId !== meta.topicId) {
        // A position taken in another incarnation of the topic means nothing in this one.
        if (st.topicId && meta.topicId) {
          this.incarnationChanged(st, meta.topicId);
          if (st.reset !== null) toReset.push(st);
          continue;
        }
        st.topicId = meta.topicId;
      }
      // One fetch per broker at a time, except for partitions seeked while theirs was out (no waiting out a long poll).
      const seekedInFlight = st.inFlightEpoch !== -1;
      if (!seekedInFlight && this.fetchingFrom.has(leader)) continue;
      const into = seekedInFlight ? urgent : byLeader;
      let list = into.get(leader);
      if (!list) into.set(leader, (list = []));
      list.push(st);
    }
    if (toReset.length > 0) {
      void this.resetPositions(toReset).catch((err: unknown) => this.cluster.logger.warn({ err }, 'resetting fetch positions failed; retrying on the next poll'));
    }
    for (const [leader, list] of [...byLeader, ...urgent]) {
      // fetch() handles every expected failure itself; anything else is reported by poll(), never left unhandled.
      this.fetch(leader, list).catch((err: unknown) => {
        for (const st of list) st.error = isMqError(err) ? err : new MqError('UNKNOWN', `fetch failed: ${String(err)}`, { cause: err });
        this.notify();
      });
    }
    if (nextRetry !== Infinity && !this.retryTimer) {
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        this.wake();
      }, Math.max(1, nextRetry - now));
    }
  }

  private async fetch(leader: number, list: PartitionState[]): Promise<void> {
    this.fetchingFrom.set(leader, (this.fetchingFrom.get(leader) ?? 0) + 1);
    for (const st of list) st.inFlightEpoch = st.epoch;
    const sent = list.map((st) => ({ st, epoch: st.epoch, offset: st.fetchOffset }));
    const byTopic = new Map<string, { name: string; topicId: string; partitions: Array<{ partition: number; fetchOffset: number; partitionMaxBytes: number; currentLeaderEpoch: number }> }>();
    for (const { st, offset } of sent) {
      const k = `${st.topic}\u0000${st.topicId}`;
      let t = byTopic.get(k);
      if (!t) byTopic.set(k, (t = { name: st.topic, topicId: st.topicId, partitions: [] }));
      t.partitions.push({ partition: st.partition, fetchOffset: offset, partitionMaxBytes: this.options.partitionMaxBytes, currentLeaderEpoch: st.leaderEpoch });
    }
    const room = Math.max(this.options.partitionMaxBytes, this.options.maxBufferedBytes - this.bufferedBytes);
    let resp: ResponseOf<'fetch'>;
    const started = channels.fetch.hasSubscribers ? performance.now() : 0;
    try {
      const conn = await this.cluster.brokerConnection(leader, this.abort.signal);
      resp = await conn.request(
        'fetch',
        {
          replicaId: -1,
          maxWaitMs: this.options.maxWaitMs,
          minBytes: this.options.minBytes,
          maxBytes: Math.min(this.options.fetchMaxBytes, room),
          topics: [...byTopic.values()],
          isolationLevel: this.readCommitted ? 1 : 0,
        },
        { timeoutMs: this.cluster.options.requestTimeoutMs + this.options.maxWaitMs, signal: this.abort.signal },
      );
    } catch (err) {
      if (channels.fetch.hasSubscribers) publishFetch(leader, started, sent, undefined, err);
      this.fetchDone(leader);
      for (const { st, epoch } of sent) {
        if (st.inFlightEpoch !== epoch) continue;
        st.inFlightEpoch = -1;
        this.backoff(st, err);
      }
      if (!this.closed) this.wake();
      return;
    }
    if (channels.fetch.hasSubscribers) publishFetch(leader, started, sent, resp, undefined);
    this.fetchDone(leader);
    let arrived = false;
    for (const { st, epoch, offset } of sent) {
      if (st.inFlightEpoch === epoch) st.inFlightEpoch = -1;
      if (this.parts.get(key(st.topic, st.partition)) !== st || st.epoch !== epoch) continue; // unassigned or seeked meanwhile
      const p = resp.topics?.find((t) => t.name === st.topic)?.partitions?.find((x) => (x.partition ?? 0) === st.partition);
      if (!p) continue;
      const code = errorCodeFromNumber(p.errorCode ?? 0);
      if (p.highWatermark !== undefined && p.highWatermark !== null) st.highWatermark = Number(p.highWatermark);
      if (p.logStartOffset !== undefined && p.logStartOffset !== null) st.logStartOffset = Number(p.logStartOffset);
      if (p.currentLeaderEpoch) st.leaderEpoch = p.currentLeaderEpoch;
      if (code !== 'NONE') {
        this.partitionError(st, code, p.errorMessage ?? '');
        arrived = true;
        continue;
      }
      st.failures = 0;
      const records = p.records as Uint8Array | undefined;
      if (!records || records.length === 0) continue;
      const buf = Buffer.isBuffer(records) ? records : Buffer.from(records.buffer, records.byteOffset, records.byteLength);
      let end: number | undefined;
      try {
        end = endOfWholeBatches(buf);
      } catch (err) {
        st.error = err as MqError;
        arrived = true;
        continue;
      }
      if (end === undefined) {
        st.error = new MqError(
          'RECORD_TOO_LARGE',
          `a batch of ${st.topic}/${st.partition} at offset ${offset} is larger than the ${buf.length} bytes returned`,
        );
        arrived = true;
        continue;
      }
      if (end <= offset) continue;
      const aborted = this.readCommitted ? (p.abortedTransactions ?? []).map((a) => ({ producerId: Number(a.producerId ?? -1), firstOffset: Number(a.firstOffset ?? -1) })) : undefined;
      const f = new CompletedFetch(st.topic, st.partition, buf, epoch, offset, this.options.checkCrcs, undefined, aborted);
      st.fetchOffset = end;
      st.buffered.push(f);
      this.completed.push(f);
      this.bufferedBytes += f.bytes;
      arrived = true;
    }
    if (arrived) this.notify();
    this.wake();
  }

  private fetchDone(leader: number): void {
    const n = (this.fetchingFrom.get(leader) ?? 1) - 1;
    if (n <= 0) this.fetchingFrom.delete(leader);
    else this.fetchingFrom.set(leader, n);
  }

  private partitionError(st: PartitionState, code: ErrorCode, message: string): void {
    if (code === 'UNKNOWN_TOPIC_ID' || code === 'INCONSISTENT_TOPIC_ID') {
      // The leader serves another incarnation of the topic, or none: fresh metadata says which (the next wake()
      // resets the position if the topic id changed; a leader merely behind the metadata is asked again).
      this.cluster.invalidate(st.topic);
    }
    if (code === 'OFFSET_OUT_OF_RANGE') {
      const policy = this.options.autoOffsetReset;
      if (policy === 'none') {
        st.error = new MqError(
          'OFFSET_OUT_OF_RANGE',
          `offset ${st.fetchOffset} of ${st.topic}/${st.partition} is out of range (log is ${st.logStartOffset}..${st.highWatermark}); seek to a valid offset or use autoOffsetReset earliest|latest`,
          { topic: st.topic, partition: st.partition, offset: st.fetchOffset },
        );
      } else {
        this.requestReset(st, policy);
      }
      return;
    }
    const err = new MqError(code, message || `fetching ${st.topic}/${st.partition} failed with ${code}`, {
      topic: st.topic,
      partition: st.partition,
    });
    this.backoff(st, err);
  }

  private backoff(st: PartitionState, err: unknown): void {
    if (this.closed) return;
    if (isMqError(err) && err.code === 'ABORTED') return;
    if (invalidatesMetadata(err)) this.cluster.invalidate(st.topic);
    if (isMqError(err) && err.retriable) {
      st.backoffUntil = Date.now() + this.cluster.retrier.delayMs(Math.min(st.failures, 10));
      st.failures++;
      return;
    }
    st.error = isMqError(err) ? err : new MqError('UNKNOWN', String(err), { cause: err });
    this.notify();
  }

  /** Looks up metadata and reset offsets (ListOffsets) for partitions without a position. */
  private async resetPositions(list: PartitionState[], signal?: AbortSignal): Promise<void> {
    const todo = list.filter((st) => !st.resetting);
    for (const st of todo) st.resetting = true;
    try {
      const byLeader = new Map<number, PartitionState[]>();
      for (const st of todo) {
        let meta;
        try {
          meta = await this.cluster.topic(st.topic, signal);
        } catch (err) {
          if (isMqError(err) && (err.code === 'UNKNOWN_TOPIC_OR_PARTITION' || err.code === 'TOPIC_AUTHORIZATION_FAILED')) {
            // A cluster's broker may not know a topic just created yet: ask again for a while.
            if (!this.cluster.unknownTopicIsFinal(st.topic)) {
              this.backoff(st, unknownTopicError(st.topic, true));
            } else {
              st.error = this.cluster.missingTopicError(st.topic);
              this.notify();
            }
          } else this.backoff(st, err);
          continue;
        }
        const pm = meta.partitions[st.partition];
        if (!pm) {
          st.error = new MqError(
            'UNKNOWN_TOPIC_OR_PARTITION',
            `partition ${st.partition} of topic "${st.topic}" does not exist (it has ${meta.partitions.length})`,
            { topic: st.topic, partition: st.partition, retriable: false },
          );
          this.notify();
          continue;
        }
        if (pm.leader < 0) {
          this.backoff(st, new MqError('LEADER_NOT_AVAILABLE', `${st.topic}/${st.partition} has no leader`));
          continue;
        }
        if (st.position !== null && st.reset === null) continue; // only needed metadata
        const policy = st.reset ?? this.options.autoOffsetReset;
        if (policy === 'none') {
          st.error = new MqError(
            'OFFSET_OUT_OF_RANGE',
            `${st.topic}/${st.partition} has no position and autoOffsetReset is none: seek() to an offset first`,
            { topic: st.topic, partition: st.partition },
          );
          this.notify();
          continue;
        }
        st.reset = policy;
        let l = byLeader.get(pm.leader);
        if (!l) byLeader.set(pm.leader, (l = []));
        l.push(st);
      }
      await Promise.all([...byLeader].map(([leader, sts]) => this.listOffsets(leader, sts, signal)));
    } finally {
      for (const st of todo) st.resetting = false;
      this.wake();
    }
  }

  private async listOffsets(leader: number, sts: PartitionState[], signal?: AbortSignal): Promise<void> {
    const sent = sts.map((st) => ({ st, epoch: st.epoch, reset: st.reset as ResetTo }));
    const byTopic = new Map<string, Array<{ partition: number; timestamp: number; currentLeaderEpoch: number }>>();
    for (const { st, reset } of sent) {
      let l = byTopic.get(st.topic);
      if (!l) byTopic.set(st.topic, (l = []));
      l.push({ partition: st.partition, timestamp: reset === 'earliest' ? EARLIEST_TIMESTAMP : LATEST_TIMESTAMP, currentLeaderEpoch: -1 });
    }
    let resp: ResponseOf<'listOffsets'>;
    try {
      const conn = await this.cluster.brokerConnection(leader, signal ?? this.abort.signal);
      resp = await conn.request(
        'listOffsets',
        { replicaId: -1, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })), isolationLevel: this.readCommitted ? 1 : 0 },
        { signal: signal ?? this.abort.signal },
      );
    } catch (err) {
      for (const { st } of sent) this.backoff(st, err);
      return;
    }
    for (const { st, epoch } of sent) {
      if (st.epoch !== epoch) continue;
      const p = resp.topics?.find((t) => t.name === st.topic)?.partitions?.find((x) => (x.partition ?? 0) === st.partition);
      const code = errorCodeFromNumber(p?.errorCode ?? 1);
      if (!p || code !== 'NONE') {
        this.backoff(st, new MqError(code, p?.errorMessage || `listing offsets of ${st.topic}/${st.partition} failed with ${code}`));
        continue;
      }
      st.highWatermark = Number(p.highWatermark ?? -1);
      st.logStartOffset = Number(p.logStartOffset ?? -1);
      // The incarnation the metadata named when the reset was asked (a re-creation since shows at the first fetch).
      this.setPosition(st, Number(p.offset ?? 0), this.cluster.cachedTopic(st.topic)?.topicId ?? '');
      st.failures = 0;
    }
  }

  close(): void {
    this.closed = true;
    this.abort.abort(new MqError('CLOSED', 'the consumer is closed'));
    clearTimeout(this.retryTimer);
    this.completed.length = 0;
    this.current = undefined;
    this.bufferedBytes = 0;
    this.notify();
  }

  // --------------------------------------------------------------- helpers

  private newState(topic: string, partition: number): PartitionState {
    return {
      topic,
      partition,
      position: null,
      fetchOffset: 0,
      reset: null,
      paused: false,
      epoch: 0,
      inFlightEpoch: -1,
      resetting: false,
      buffered: [],
      backoffUntil: 0,
      failures: 0,
      error: undefined,
      highWatermark: -1,
      logStartOffset: -1,
      leaderEpoch: -1,
      topicId: '',
    };
  }

  /** `topicId`: the incarnation the offset was found in ('': the one current at the next fetch, as after seek()). */
  private setPosition(st: PartitionState, offset: number, topicId = ''): void {
    st.topicId = topicId;
    this.dropBuffered(st);
    st.epoch++;
    st.position = offset;
    st.fetchOffset = offset;
    st.reset = null;
    st.error = undefined;
    st.backoffUntil = 0;
  }

  /** The topic was deleted and re-created since `st`'s position was taken: reset per autoOffsetReset, as a new partition. */
  private incarnationChanged(st: PartitionState, topicId: string): void {
    const was = st.topicId;
    const position = st.position;
    st.topicId = topicId;
    this.cluster.logger.warn({ topic: st.topic, partition: st.partition, position, topicId: was, newTopicId: topicId }, 'topic was re-created: position reset');
    const policy = this.options.autoOffsetReset;
    if (policy !== 'none') {
      this.requestReset(st, policy);
      return;
    }
    this.dropBuffered(st);
    st.epoch++;
    st.position = null;
    st.error = new MqError(
      'OFFSET_OUT_OF_RANGE',
      `topic "${st.topic}" was deleted and re-created (topic id ${was} is now ${topicId}) since position ${position} of partition ${st.partition} was taken, and autoOffsetReset is none: seek() to an offset of the new topic`,
      { topic: st.topic, partition: st.partition, offset: position },
    );
    this.notify();
  }

  private requestReset(st: PartitionState, to: ResetTo): void {
    this.dropBuffered(st);
    st.epoch++;
    st.reset = to;
    st.error = undefined;
  }

  private dropBuffered(st: PartitionState): void {
    for (const f of st.buffered) {
      const i = this.completed.indexOf(f);
      if (i >= 0) {
        this.completed.splice(i, 1);
        this.bufferedBytes -= f.bytes;
      } else if (this.current === f) {
        this.current = undefined;
        this.bufferedBytes -= f.bytes;
      }
    }
    st.buffered = [];
  }

  private state(tp: TopicPartition): PartitionState {
    const st = this.parts.get(key(tp.topic, tp.partition));
    if (!st) {
      throw new MqError('INVALID_ARGUMENT', `${tp.topic}/${tp.partition} is not assigned to this consumer (assign it first)`);
    }
    return st;
  }

  private select(tps?: readonly TopicPartition[]): PartitionState[] {
    return tps ? tps.map((tp) => this.state(tp)) : [...this.parts.values()];
  }
}

/** The partition's error; cleared (so the partition is retried) unless it needs a seek to go away. */
function takeError(st: PartitionState): MqError {
  const err = st.error!;
  if (err.code !== 'OFFSET_OUT_OF_RANGE') st.error = undefined;
  return err;
}

function checkTopicPartition(tp: TopicPartition): void {
  if (!tp || typeof tp.topic !== 'string' || tp.topic.length === 0) {
    throw new MqError('INVALID_ARGUMENT', 'each assigned partition needs a topic name');
  }
  if (!Number.isInteger(tp.partition) || tp.partition < 0) {
    throw new MqError('INVALID_ARGUMENT', `partition must be an integer >= 0, got ${tp.partition}`);
  }
}

function checkOffset(offset: number): number {
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new MqError('INVALID_ARGUMENT', `offset must be an integer >= 0, got ${offset}`);
  }
  return offset;
}

function publishFetch(
  broker: number,
  started: number,
  sent: ReadonlyArray<{ st: { topic: string; partition: number }; offset: number }>,
  resp: ResponseOf<'fetch'> | undefined,
  error: unknown,
): void {
  const m: FetchMessage = {
    broker,
    durationMs: started > 0 ? performance.now() - started : 0,
    partitions: sent.map(({ st, offset }) => {
      const p = resp?.topics?.find((t) => t.name === st.topic)?.partitions?.find((x) => (x.partition ?? 0) === st.partition);
      const code = errorCodeFromNumber(p?.errorCode ?? 0);
      const out: FetchMessage['partitions'][number] = {
        topic: st.topic,
        partition: st.partition,
        fetchOffset: offset,
        bytes: (p?.records as Uint8Array | undefined)?.length ?? 0,
        highWatermark: Number(p?.highWatermark ?? -1),
      };
      if (code !== 'NONE') out.error = code;
      return out;
    }),
  };
  if (error !== undefined) m.error = error;
  channels.fetch.publish(m);
}
