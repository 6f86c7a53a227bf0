/**
 * The consumer: manual assignment (`assign`), `seek`, `position`,
 * `poll(timeoutMs)` and an async iterator that reports what it has
 * buffered. Fetching, positions and seeks live in the Fetcher, so group
 * membership can later drive `assign` without touching them.
 */
import { MqError } from '@mq/protocol/errors';
import type { Cluster } from '../cluster.js';
import { Fetcher, type TopicPartition, type TopicPartitionOffset } from './fetcher.js';
import { parseConsumerOptions, type ConsumerOptions, type ParsedConsumerOptions } from './options.js';
import type { ConsumerRecord } from './record-decoder.js';

export interface PollOptions {
  signal?: AbortSignal;
  /** Most records to return (default maxPollRecords). */
  maxRecords?: number;
}

export interface ConsumerPending {
  /** Records decoded by the iterator and not yet yielded. */
  records: number;
  /** Fetched bytes not yet decoded. */
  bytes: number;
}

export class Consumer implements AsyncIterable<ConsumerRecord> {
  readonly options: ParsedConsumerOptions;
  private readonly fetcher: Fetcher;
  private closed = false;
  private iterBuffer: ConsumerRecord[] = [];
  private iterPos = 0;

  constructor(
    cluster: Cluster,
    options: ConsumerOptions = {},
    private readonly onClose?: () => void,
  ) {
    this.options = parseConsumerOptions(options);
    this.fetcher = new Fetcher(cluster, this.options);
  }

  /** Takes these partitions (replacing the current assignment); `offset` sets the position, else autoOffsetReset decides. */
  assign(partitions: readonly TopicPartitionOffset[]): void {
    this.checkOpen();
    this.fetcher.assign(partitions);
    this.iterBuffer = this.iterBuffer.filter((r, i) => i >= this.iterPos && partitions.some((p) => p.topic === r.topic && p.partition === r.partition));
    this.iterPos = 0;
  }

  assignment(): TopicPartition[] {
    return this.fetcher.assignment();
  }

  seek(tp: TopicPartition, offset: number): void {
    this.checkOpen();
    this.dropIterated(tp);
    this.fetcher.seek(tp, offset);
  }

  seekToBeginning(tps?: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of tps ?? this.assignment()) this.dropIterated(tp);
    this.fetcher.seekToBeginning(tps);
  }

  seekToEnd(tps?: readonly TopicPartition[]): void {
    this.checkOpen();
    for (const tp of tps ?? this.assignment()) this.dropIterated(tp);
    this.fetcher.seekToEnd(tps);
  }

  /** The offset of the next record this consumer returns for a partition. */
  async position(tp: TopicPartition, options: { signal?: AbortSignal } = {}): Promise<number> {
    this.checkOpen();
    const pending = this.iterBuffer.slice(this.iterPos).find((r) => r.topic === tp.topic && r.partition === tp.partition);
    if (pending) return pending.offset;
    return this.fetcher.position(tp, options.signal);
  }

  pause(tps: readonly TopicPartition[]): void {
    this.fetcher.pause(tps);
  }

  resume(tps: readonly TopicPartition[]): void {
    this.fetcher.resume(tps);
  }

  paused(): TopicPartition[] {
    return this.fetcher.paused();
  }

  /** Low and high watermark of a partition as of its last fetch (-1 before the first). */
  watermarks(tp: TopicPartition): { low: number; high: number } {
    return this.fetcher.watermarks(tp);
  }

  /** Records ready, waiting up to `timeoutMs` for some. An empty array when none came. */
  async poll(timeoutMs = 1000, options: PollOptions = {}): Promise<ConsumerRecord[]> {
    this.checkOpen();
    if (!(timeoutMs >= 0)) throw new MqError('INVALID_ARGUMENT', `poll timeout must be >= 0 ms, got ${timeoutMs}`);
    const max = options.maxRecords ?? this.options.maxPollRecords;
    if (this.iterPos < this.iterBuffer.length) {
      const out = this.iterBuffer.slice(this.iterPos, this.iterPos + max);
      this.iterPos += out.length;
      return out;
    }
    return this.fetcher.poll(timeoutMs, max, options.signal);
  }

  /** What this consumer holds that the application has not seen yet. */
  get pending(): ConsumerPending {
    return { records: this.iterBuffer.length - this.iterPos, bytes: this.fetcher.buffered.bytes };
  }

  /** Yields records one at a time until the consumer is closed. */
  async *[Symbol.asyncIterator](): AsyncIterator<ConsumerRecord> {
    while (!this.closed) {
      if (this.iterPos >= this.iterBuffer.length) {
        this.iterBuffer = await this.fetcher.poll(1000, this.options.maxPollRecords);
        this.iterPos = 0;
        continue;
      }
      yield this.iterBuffer[this.iterPos++]!;
    }
  }

  /** Stops fetching and releases buffered data. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.fetcher.close();
    this.iterBuffer = [];
    this.onClose?.();
  }

  private dropIterated(tp: TopicPartition): void {
    if (this.iterPos >= this.iterBuffer.length) return;
    this.iterBuffer = this.iterBuffer
      .slice(this.iterPos)
      .filter((r) => r.topic !== tp.topic || r.partition !== tp.partition);
    this.iterPos = 0;
  }

  private checkOpen(): void {
    if (this.closed) throw new MqError('CLOSED', 'the consumer is closed');
  }
}
