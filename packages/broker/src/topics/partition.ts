/**
 * One partition this broker leads: its log, its leader epoch, the high
 * watermark (what consumers may read), and the wake-ups of fetches waiting
 * for data. Single broker: the ISR is this broker alone, so an append is
 * committed once the log has taken it (and, under flush policy `always`,
 * fsynced it).
 */
import type { ReadBufferPool } from '@mq/log-store';
import { MqError } from '@mq/protocol/errors';
import { OfflineLog, type AppendResult, type PartitionLog } from './partition-log.js';

export type AppendListener = (bytes: number) => void;

export class Partition {
  /** Next offset consumers may not read yet: every offset below is acknowledged. */
  private hw: number;
  /** Total bytes appended since open, for fetch wake-ups. */
  private appended = 0;
  private readonly listeners = new Set<AppendListener>();
  private closed = false;

  constructor(
    readonly topic: string,
    readonly index: number,
    readonly log: PartitionLog,
    public leaderEpoch: number,
    readonly leaderId: number,
    readonly replicas: readonly number[],
  ) {
    this.hw = log.logEndOffset;
  }

  /** The log failed to open: every read and write answers STORAGE_ERROR. */
  get offline(): OfflineLog | undefined {
    return this.log instanceof OfflineLog ? this.log : undefined;
  }

  get isr(): readonly number[] {
    return this.replicas;
  }

  get highWatermark(): number {
    return this.hw;
  }

  get logStartOffset(): number {
    return this.log.logStartOffset;
  }

  get logEndOffset(): number {
    return this.log.logEndOffset;
  }

  get bytesAppended(): number {
    return this.appended;
  }

  /**
   * Appends a producer's batches as leader: the log validates them, assigns offsets and stamps
   * the leader epoch. Called synchronously in request order, so appends to
   * one partition keep the order they arrived in.
   */
  async append(batches: Buffer, options: { logAppendTime?: boolean; maxBatchBytes?: number } = {}): Promise<AppendResult> {
    if (this.closed) throw new MqError('NOT_LEADER', `partition ${this.topic}-${this.index} is closed on this broker`);
    if (this.offline) throw this.offline.error();
    // The log validates what the producer sent (header consistency, CRC, records), once.
    const result = await this.log.append(batches, { ...options, assignOffsets: true, leaderEpoch: this.leaderEpoch });
    const next = result.lastOffset + 1;
    if (next > this.hw) this.hw = next;
    this.appended += result.bytes;
    if (this.listeners.size > 0) for (const l of [...this.listeners]) l(result.bytes);
    return result;
  }

  /**
   * Reads committed batches from `offset`; OFFSET_OUT_OF_RANGE outside
   * [logStart, logEnd]. With `pool` the bytes lie in a pooled buffer: the
   * caller releases it once they are written out.
   */
  async read(offset: number, maxBytes: number, pool?: ReadBufferPool): Promise<Buffer> {
    if (this.offline) throw this.offline.error();
    if (!Number.isSafeInteger(offset) || offset < this.log.logStartOffset || offset > this.log.logEndOffset) {
      throw new MqError(
        'OFFSET_OUT_OF_RANGE',
        `offset ${offset} is outside ${this.topic}-${this.index}'s range [${this.log.logStartOffset}, ${this.log.logEndOffset}]`,
        { logStartOffset: this.log.logStartOffset, highWatermark: this.hw },
      );
    }
    if (offset >= this.hw) return Buffer.alloc(0);
    const { records } = await this.log.read(offset, maxBytes, { maxOffset: this.hw, pool });
    return records;
  }

  /** Fences a request made for another leader epoch (negative: the client does not know it). */
  checkLeaderEpoch(requested: number): void {
    if (requested < 0 || requested === this.leaderEpoch) return;
    if (requested < this.leaderEpoch) {
      throw new MqError('FENCED_LEADER_EPOCH', `leader epoch ${requested} is older than ${this.leaderEpoch} for ${this.topic}-${this.index}`);
    }
    throw new MqError('UNKNOWN_LEADER_EPOCH', `leader epoch ${requested} is newer than ${this.leaderEpoch} for ${this.topic}-${this.index}`);
  }

  /** Calls `listener` after every append until the returned function is called. */
  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Wakes every waiting fetch (after close or delete, so they see the change). */
  wakeAll(): void {
    for (const l of [...this.listeners]) l(0);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.wakeAll();
    await this.log.close();
  }

  get isClosed(): boolean {
    return this.closed;
  }
}
