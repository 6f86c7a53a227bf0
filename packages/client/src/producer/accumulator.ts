/**
 * Collects records into per-partition batches. `append` is the synchronous
 * fast path: look the topic up in the metadata cache, pick the partition,
 * encode the record into the partition's open batch. When the metadata is
 * not cached yet or the bounded buffer is full, the record waits in a FIFO of
 * blocked sends (so a later record never overtakes an earlier one) until
 * metadata arrives or memory is released, for at most `maxBlockMs`.
 */
import { unrefTimer } from '@mq/protocol/components';
import { MqError, isMqError } from '@mq/protocol/errors';
import { HEADER_SIZE } from '@mq/protocol/batch';
import type { Cluster } from '../cluster.js';
import { StickyPartitions, defaultPartitioner, murmur2Partition } from '../partitioner.js';
import { BatchBuilder, measureRecord, type ProducerRecord } from './batch-builder.js';
import { BufferPool } from './buffer-pool.js';
import type { ParsedProducerOptions } from './options.js';
import { sinkFail, sinkOk, type Sink } from './record-sink.js';
import { coarseNow } from '../coarse-clock.js';

/** The first spacing of metadata polls while a moved leader is searched for (Accumulator.leaderLost). */
const LEADER_POLL_FIRST_MS = 10;
/** A search for a moved leader polls faster than the usual backoff for at most this long, then starts anew. */
const LEADER_SEARCH_MS = 1000;

export interface PartitionQueue {
  readonly topic: string;
  readonly partition: number;
  /** The batch records are appended to. */
  open: BatchBuilder | undefined;
  /** Closed batches waiting to be sent, oldest first. */
  readonly ready: BatchBuilder[];
  /** A produce request for this partition is outstanding (one at a time keeps order under retries). */
  inFlight: boolean;
  /** Records in the partition's last closed batch (0: none yet): how many the next one is expected to hold. */
  lastBatchRecords: number;
  /** Not before this time (backoff after a retriable error). */
  retryAt: number;
  /**
   * The leader epoch a batch failed under because its leader moved or could
   * not be reached (-1: none): once the metadata names a later epoch the
   * batches go at once, without waiting for `retryAt`.
   */
  movedFrom: number;
}

interface Blocked {
  topic: string;
  record: ProducerRecord;
  sink: Sink;
  index: number;
  deadline: number;
}

export interface AccumulatorHooks {
  /** There may be something to send now. */
  wake(): void;
}

export interface ReadyScan {
  /** Partitions with batches to send, by leader broker id. */
  byLeader: Map<number, PartitionQueue[]>;
  /** Earliest time at which an open batch lingers out or a backoff ends (Infinity: none). */
  nextCheckAt: number;
}

export class Accumulator {
  readonly pool: BufferPool;
  private readonly queues = new Map<string, PartitionQueue[]>();
  private readonly sticky = new StickyPartitions();
  private blocked: Blocked[] = [];
  private blockedHead = 0;
  private blockedTimer: NodeJS.Timeout | undefined;
  private readonly metadataWanted = new Set<string>();
  /** When a topic's search for a moved leader began (leaderLost), for the spacing of its metadata polls. */
  private readonly leaderLostAt = new Map<string, number>();
  private readonly metadataAt = new Map<string, number>();
  /** Batches created and not yet completed. */
  private incomplete = 0;
  private idleWaiters: Array<() => void> = [];
  private drainWaiters: Array<() => void> = [];
  /** > 0 while flush() runs: every open batch is ready now. */
  flushing = 0;
  closed = false;

  constructor(
    private readonly options: ParsedProducerOptions,
    private readonly cluster: Cluster,
    private readonly hooks: AccumulatorHooks,
  ) {
    this.pool = new BufferPool(options.bufferMemory, options.batchBytes);
    this.pool.onRelease(() => this.processBlocked());
  }

  get blockedCount(): number {
    return this.blocked.length - this.blockedHead;
  }

  /** True when a send would be taken at once (no blocked sends, memory for a batch left). */
  get writable(): boolean {
    return this.blockedCount === 0 && this.pool.availableBytes >= this.options.batchBytes;
  }

  /** Resolves when `writable` turns true. */
  drain(): Promise<void> {
    if (this.writable) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  /** Resolves when every record appended so far has completed. */
  idle(): Promise<void> {
    if (this.incomplete === 0 && this.blockedCount === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  append(topic: string, record: ProducerRecord, sink: Sink, index: number): void {
    if (this.closed) {
      sinkFail(sink, index, new MqError('CLOSED', 'the producer is closed'));
      return;
    }
    if (this.blockedCount === 0) {
      try {
        if (this.tryAppend(topic, record, sink, index)) return;
      } catch (err) {
        sinkFail(sink, index, err);
        return;
      }
    }
    if (this.blockedCount >= this.options.maxBlockedSends) {
      sinkFail(
        sink,
        index,
        new MqError(
          'BUFFER_FULL',
          `the producer's send buffer is full and ${this.blockedCount} sends are already waiting (await send(), or wait for producer.drain())`,
        ),
      );
      return;
    }
    this.blocked.push({ topic, record, sink, index, deadline: Date.now() + this.options.maxBlockMs });
    this.armBlockedTimer();
  }

  /**
   * Appends at once if metadata and memory allow: true when the record was
   * taken (or failed for good); false when it must wait.
   */
  private tryAppend(topic: string, record: ProducerRecord, sink: Sink, index: number): boolean {
    const meta = this.cluster.cachedTopic(topic);
    if (!meta) {
      this.wantMetadata(topic);
      return false;
    }
    const n = meta.partitions.length;
    const size = measureRecord(record);
    let partition: number;
    let sticky = false;
    if (record.partition !== undefined && record.partition !== null) {
      partition = record.partition;
      if (!Number.isInteger(partition) || partition < 0 || partition >= n) {
        throw new MqError(
          'UNKNOWN_TOPIC_OR_PARTITION',
          `partition ${partition} of topic "${topic}" does not exist (it has ${n} partition${n === 1 ? '' : 's'})`,
          { topic, partition, retriable: false },
        );
      }
    } else {
      const key = record.key as Uint8Array | string | null | undefined;
      // The default partitioner without its context object (one less allocation per record).
      partition =
        this.options.partitioner === defaultPartitioner
          ? key === null || key === undefined
            ? -1
            : murmur2Partition(key, n)
          : this.options.partitioner({ topic, key, numPartitions: n });
      if (partition < 0) {
        partition = this.sticky.partition(topic, n);
        sticky = true;
      } else if (!Number.isInteger(partition) || partition >= n) {
        throw new TypeError(`the partitioner returned ${partition} for a topic of ${n} partitions`);
      }
    }
    const timestamp = record.timestamp ?? coarseNow();
    if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
      throw new MqError('INVALID_TIMESTAMP', `record timestamp must be a non-negative integer of ms, got ${timestamp}`);
    }
    let q = this.queue(topic, partition, n);
    if (q.open && q.open.tryAppend(record, size, timestamp, sink, index)) return true;
    const need = Math.max(this.options.batchBytes, HEADER_SIZE + size);
    if (need > this.options.bufferMemory) {
      throw new MqError(
        'RECORD_TOO_LARGE',
        `record of about ${size} bytes does not fit the producer's bufferMemory of ${this.options.bufferMemory} bytes (raise bufferMemory)`,
        { size, retriable: false },
      );
    }
    if (need > this.maxBatchBytes()) {
      throw new MqError(
        'RECORD_TOO_LARGE',
        `record of about ${size} bytes is over the largest request of ${this.maxBatchBytes()} bytes (raise maxRequestBytes, or send smaller records)`,
        { size, retriable: false },
      );
    }
    if (q.open) {
      this.closeOpen(q, n);
      if (sticky) {
        partition = this.sticky.partition(topic, n);
        q = this.queue(topic, partition, n);
        if (q.open && q.open.tryAppend(record, size, timestamp, sink, index)) return true;
        if (q.open) this.closeOpen(q, n);
      }
    }
    const buf = this.pool.tryAllocate(need);
    if (!buf) {
      this.hooks.wake(); // full: open batches are sent at once to free memory
      return false;
    }
    const batch = new BatchBuilder(buf, topic, partition, Date.now(), q.lastBatchRecords);
    this.incomplete++;
    q.open = batch;
    batch.tryAppend(record, size, timestamp, sink, index);
    this.hooks.wake(); // send now (lingerMs 0) or arm the linger timer
    return true;
  }

  /** The largest request: maxRequestBytes, lowered to the brokers' frame limit. */
  maxRequestBytes(): number {
    return Math.min(this.options.maxRequestBytes, this.cluster.maxFrameBytes);
  }

  /** The largest batch a request can carry (room left for the request's own fields). */
  maxBatchBytes(): number {
    return this.maxRequestBytes() - 256;
  }

  private queue(topic: string, partition: number, n: number): PartitionQueue {
    let qs = this.queues.get(topic);
    if (!qs) {
      qs = [];
      this.queues.set(topic, qs);
    }
    let q = qs[partition];
    if (!q) {
      q = { topic, partition, open: undefined, ready: [], inFlight: false, lastBatchRecords: 0, retryAt: 0, movedFrom: -1 };
      qs[partition] = q;
    }
    void n;
    return q;
  }

  private closeOpen(q: PartitionQueue, n: number): void {
    const b = q.open;
    if (!b) return;
    q.open = undefined;
    q.ready.push(b);
    q.lastBatchRecords = b.count;
    this.sticky.onBatchClosed(q.topic, n, q.partition);
  }

  /** Finds what can be sent now; closes open batches whose linger is over (or all when flushing or blocked). */
  scan(now: number): ReadyScan {
    const byLeader = new Map<number, PartitionQueue[]>();
    let nextCheckAt = Infinity;
    const urgent = this.flushing > 0 || this.blockedCount > 0 || this.closed;
    for (const [topic, qs] of this.queues) {
      for (const q of qs) {
        if (!q || q.inFlight) continue;
        if (q.retryAt > now) {
          if (q.movedFrom < 0 || this.cluster.leaderEpochOf(topic, q.partition) <= q.movedFrom) {
            if (q.ready.length > 0 || q.open) nextCheckAt = Math.min(nextCheckAt, q.retryAt);
            continue;
          }
          q.retryAt = 0; // the new leader is known: no reason to wait
        }
        q.movedFrom = -1;
        if (q.open) {
          const expiry = q.open.createdAt + this.options.lingerMs;
          if (urgent || expiry <= now || q.open.remaining < 64) this.closeOpen(q, qs.length);
          else nextCheckAt = Math.min(nextCheckAt, expiry);
        }
        if (q.ready.length === 0) continue;
        const leader = this.cluster.leaderOf(topic, q.partition);
        if (leader < 0) {
          this.wantMetadata(topic);
          continue;
        }
        let list = byLeader.get(leader);
        if (!list) byLeader.set(leader, (list = []));
        list.push(q);
      }
    }
    return { byLeader, nextCheckAt };
  }

  /** A batch is done (acknowledged or failed for good): free its memory, once. */
  completed(batch: BatchBuilder): void {
    if (batch.released) return;
    batch.released = true;
    this.incomplete--;
    this.pool.release(batch.buffer);
    this.checkIdle();
  }

  private checkIdle(): void {
    if (this.incomplete === 0 && this.blockedCount === 0 && this.idleWaiters.length > 0) {
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /**
   * A partition of `topic` failed under a leader that moved or cannot be
   * reached (its queue's `movedFrom` is set): the metadata is polled until a
   * later leader epoch shows up, first every LEADER_POLL_FIRST_MS, the
   * spacing growing with the time searched (half of it) up to the retrier's
   * first backoff. A killed leader's successor is usually elected within a
   * few hundred ms; each poll that finds it saves the rest of the backoff.
   */
  leaderLost(topic: string): void {
    const now = Date.now();
    const since = this.leaderLostAt.get(topic);
    if (since === undefined || now - since > LEADER_SEARCH_MS) this.leaderLostAt.set(topic, now);
    this.wantMetadata(topic);
  }

  /** Whether a queue of `topic` still waits for a leader epoch later than the one it failed under. */
  private searchingLeader(topic: string): boolean {
    for (const q of this.queues.get(topic) ?? []) {
      if (q && q.movedFrom >= 0 && this.cluster.leaderEpochOf(topic, q.partition) <= q.movedFrom) return true;
    }
    return false;
  }

  /**
   * Fetches metadata for a topic in the background, then retries blocked
   * sends and wakes the sender. Refreshes of one topic are spaced by the
   * retrier's first backoff (less while a moved leader is searched for: see
   * leaderLost), so a partition without a leader is not polled in a loop.
   */
  wantMetadata(topic: string): void {
    if (this.metadataWanted.has(topic) || this.closed) return;
    this.metadataWanted.add(topic);
    const backoff = this.cluster.retrier.options.initialDelayMs;
    const lostAt = this.leaderLostAt.get(topic);
    const searched = lostAt === undefined ? Infinity : Date.now() - lostAt;
    const spacing = searched > LEADER_SEARCH_MS ? backoff : Math.min(backoff, Math.max(LEADER_POLL_FIRST_MS, searched / 2));
    const wait = (this.metadataAt.get(topic) ?? 0) + spacing - Date.now();
    if (wait > 0) {
      unrefTimer(
        setTimeout(() => {
          this.metadataWanted.delete(topic);
          this.wantMetadata(topic);
        }, wait),
      );
      return;
    }
    this.metadataAt.set(topic, Date.now());
    this.cluster.refreshMetadata([topic]).then(
      () => {
        this.metadataWanted.delete(topic);
        if (!this.cluster.cachedTopic(topic)) {
          // A cluster's broker may not know a topic just created yet: ask again for a while.
          if (!this.cluster.unknownTopicIsFinal(topic)) {
            this.wantMetadata(topic);
            return;
          }
          // The topic does not exist (any more): what waits for it fails now, not at the delivery timeout.
          const err = this.cluster.missingTopicError(topic);
          this.failBlocked(topic, err);
          this.failQueued(topic, err);
        }
        this.processBlocked();
        this.hooks.wake();
        if (this.searchingLeader(topic)) this.wantMetadata(topic);
      },
      (err: unknown) => {
        this.metadataWanted.delete(topic);
        // A broker that cannot be reached: blocked sends wait (up to maxBlockMs) and try again.
        if (!isMqError(err) || !err.retriable) this.failBlocked(topic, err);
        else unrefTimer(setTimeout(() => this.processBlocked(), this.cluster.retrier.delayMs(0)));
        this.processBlocked();
      },
    );
  }

  /** Fails the batches of a topic that are not in flight. */
  private failQueued(topic: string, err: unknown): void {
    for (const q of this.queues.get(topic) ?? []) {
      if (!q || q.inFlight) continue;
      const pending = q.open ? [...q.ready, q.open] : [...q.ready];
      q.ready.length = 0;
      q.open = undefined;
      for (const batch of pending) {
        failBatch(batch, err);
        this.completed(batch);
      }
    }
  }

  private failBlocked(topic: string, err: unknown): void {
    const keep: Blocked[] = [];
    for (let i = this.blockedHead; i < this.blocked.length; i++) {
      const b = this.blocked[i]!;
      if (b.topic === topic) sinkFail(b.sink, b.index, err);
      else keep.push(b);
    }
    this.blocked = keep;
    this.blockedHead = 0;
    this.checkIdle();
  }

  /** Moves blocked sends into batches, in order, as far as metadata and memory allow. */
  processBlocked(): void {
    const now = Date.now();
    while (this.blockedHead < this.blocked.length) {
      const b = this.blocked[this.blockedHead]!;
      if (b.deadline <= now) {
        this.blockedHead++;
        sinkFail(b.sink, b.index, this.blockedTimeout(b));
        continue;
      }
      let taken: boolean;
      try {
        taken = this.closed || this.tryAppend(b.topic, b.record, b.sink, b.index);
        if (this.closed) sinkFail(b.sink, b.index, new MqError('CLOSED', 'the producer is closed'));
      } catch (err) {
        sinkFail(b.sink, b.index, err);
        taken = true;
      }
      if (!taken) break;
      this.blocked[this.blockedHead++] = undefined as unknown as Blocked;
    }
    if (this.blockedHead > 1024 && this.blockedHead * 2 > this.blocked.length) {
      this.blocked = this.blocked.slice(this.blockedHead);
      this.blockedHead = 0;
    }
    if (this.blockedCount === 0) {
      this.blocked = [];
      this.blockedHead = 0;
      clearTimeout(this.blockedTimer);
      this.blockedTimer = undefined;
    } else {
      this.armBlockedTimer();
    }
    if (this.writable && this.drainWaiters.length > 0) for (const w of this.drainWaiters.splice(0)) w();
    this.checkIdle();
  }

  private blockedTimeout(b: Blocked): MqError {
    if (!this.cluster.cachedTopic(b.topic)) {
      return new MqError(
        'REQUEST_TIMED_OUT',
        `no metadata for topic "${b.topic}" within maxBlockMs (${this.options.maxBlockMs} ms): is the broker reachable?`,
        { topic: b.topic },
      );
    }
    return new MqError(
      'BUFFER_FULL',
      `the producer's send buffer (${this.options.bufferMemory} bytes) stayed full for maxBlockMs (${this.options.maxBlockMs} ms): the broker is slower than the sends`,
      { topic: b.topic },
    );
  }

  private armBlockedTimer(): void {
    if (this.blockedTimer || this.blockedCount === 0) return;
    const head = this.blocked[this.blockedHead]!;
    const wait = Math.max(0, head.deadline - Date.now()) + 1;
    this.blockedTimer = setTimeout(() => {
      this.blockedTimer = undefined;
      this.processBlocked();
    }, wait);
  }

  /** Fails every record not yet sent (close with a deadline that passed). */
  abortAll(err: MqError): void {
    this.closed = true;
    for (let i = this.blockedHead; i < this.blocked.length; i++) sinkFail(this.blocked[i]!.sink, this.blocked[i]!.index, err);
    this.blocked = [];
    this.blockedHead = 0;
    clearTimeout(this.blockedTimer);
    for (const qs of this.queues.values()) {
      for (const q of qs) {
        if (!q) continue;
        const pending = q.open ? [...q.ready, q.open] : q.ready.splice(0);
        if (q.open) q.ready.length = 0;
        q.open = undefined;
        for (const batch of pending) {
          failBatch(batch, err);
          this.completed(batch);
        }
      }
    }
    this.checkIdle();
  }
}

export function failBatch(batch: BatchBuilder, err: unknown): void {
  if (batch.settled) return;
  batch.settled = true;
  const { sinks, sinkIndexes, count } = batch;
  for (let i = 0; i < count; i++) sinkFail(sinks[i]!, sinkIndexes[i]!, err);
}

export function completeBatch(batch: BatchBuilder, baseOffset: number): void {
  if (batch.settled) return;
  batch.settled = true;
  const { sinks, sinkIndexes, topic, partition, count } = batch;
  for (let i = 0; i < count; i++) sinkOk(sinks[i]!, sinkIndexes[i]!, topic, partition, baseOffset < 0 ? -1 : baseOffset + i);
}
