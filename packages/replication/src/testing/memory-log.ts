/**
 * An in-memory log honouring the @mq/log-store `Log` contract that
 * replication uses (docs/CONTRACTS.md): whole batches, leader epoch cache,
 * truncation. For deterministic tests and simulations; it never touches disk.
 */
import { MqError } from '@mq/protocol/errors';
import { iterateBatches, setBaseOffset, setPartitionLeaderEpoch, validateBatch } from '@mq/protocol/batch';
import type { EpochEntry, ReplicaAppendResult, ReplicaEpochCache, ReplicaLog } from '../types.js';

interface StoredBatch {
  baseOffset: number;
  lastOffset: number;
  epoch: number;
  bytes: Buffer;
}

class MemoryEpochCache implements ReplicaEpochCache {
  readonly list: EpochEntry[] = [];

  get entries(): readonly EpochEntry[] {
    return this.list;
  }

  assign(epoch: number, startOffset: number): void {
    const last = this.list[this.list.length - 1];
    if (last && last.epoch >= epoch) {
      if (last.epoch > epoch) {
        throw new MqError('INVALID_ARGUMENT', `epoch ${epoch} is older than the latest cached epoch ${last.epoch}`);
      }
      return;
    }
    while (this.list.length > 0 && this.list[this.list.length - 1]!.startOffset >= startOffset) this.list.pop();
    this.list.push({ epoch, startOffset });
  }

  truncateFromEnd(offset: number): void {
    while (this.list.length > 0 && this.list[this.list.length - 1]!.startOffset >= offset) this.list.pop();
  }
}

export interface MemoryLogOptions {
  clock?: () => number;
  /**
   * Whether the log offers assignLeaderEpoch (default true). False mimics a
   * log that records a leader epoch only with an append (@mq/log-store today).
   */
  assignLeaderEpoch?: boolean;
}

export class MemoryLog implements ReplicaLog {
  readonly leaderEpochs = new MemoryEpochCache();
  readonly #batches: StoredBatch[] = [];
  readonly #clock: () => number;
  #logStartOffset = 0;
  #logEndOffset = 0;
  #closed = false;
  #appending: Promise<unknown> = Promise.resolve();

  /** Records a new leader's epoch at `startOffset` without an append. */
  readonly assignLeaderEpoch?: (epoch: number, startOffset: number) => Promise<void>;

  constructor(options: MemoryLogOptions = {}) {
    this.#clock = options.clock ?? (() => 0);
    if (options.assignLeaderEpoch ?? true) {
      this.assignLeaderEpoch = async (epoch, startOffset) => {
        this.#ensureOpen();
        this.leaderEpochs.assign(epoch, startOffset);
      };
    }
  }

  get logStartOffset(): number {
    return this.#logStartOffset;
  }
  get logEndOffset(): number {
    return this.#logEndOffset;
  }
  get size(): number {
    return this.#batches.reduce((n, b) => n + b.bytes.length, 0);
  }

  /** Test access: the stored batches (copies of their bytes). */
  batches(): { baseOffset: number; lastOffset: number; epoch: number; bytes: Buffer }[] {
    return this.#batches.map((b) => ({ ...b, bytes: Buffer.from(b.bytes) }));
  }

  /** Appends run one at a time, in call order, as @mq/log-store's do. */
  append(
    batches: Buffer,
    options: { assignOffsets?: boolean; leaderEpoch?: number; validate?: boolean } = {},
  ): Promise<ReplicaAppendResult> {
    const run = this.#appending.then(() => this.#append(batches, options));
    this.#appending = run.catch(() => undefined);
    return run;
  }

  async #append(
    batches: Buffer,
    options: { assignOffsets?: boolean; leaderEpoch?: number; validate?: boolean },
  ): Promise<ReplicaAppendResult> {
    this.#ensureOpen();
    const assign = options.assignOffsets ?? true;
    const buf = Buffer.from(batches);
    const spans = [...iterateBatches(buf)];
    const covered = spans.reduce((n, s) => n + s.size, 0);
    if (spans.length === 0 || covered !== buf.length) {
      throw new MqError('CORRUPT_MESSAGE', `append of ${buf.length} bytes does not hold whole batches`);
    }
    let next = this.#logEndOffset;
    const staged: StoredBatch[] = [];
    for (const s of spans) {
      if (options.validate ?? true) validateBatch(buf, s.position);
      if (assign) setBaseOffset(buf, s.position, next);
      else if (s.header.baseOffset !== next) {
        throw new MqError('INVALID_RECORD', `batch at offset ${s.header.baseOffset} does not start at the log end ${next}`);
      }
      if (options.leaderEpoch !== undefined) setPartitionLeaderEpoch(buf, s.position, options.leaderEpoch);
      const base = next;
      const last = base + s.header.lastOffsetDelta;
      const epoch = options.leaderEpoch ?? s.header.partitionLeaderEpoch;
      staged.push({ baseOffset: base, lastOffset: last, epoch, bytes: buf.subarray(s.position, s.position + s.size) });
      next = last + 1;
    }
    await Promise.resolve();
    this.#ensureOpen();
    if (this.#logEndOffset !== staged[0]!.baseOffset) {
      throw new MqError('INVALID_RECORD', 'the log moved during the append');
    }
    for (const b of staged) {
      const top = this.leaderEpochs.list[this.leaderEpochs.list.length - 1];
      if (b.epoch >= 0 && (!top || top.epoch < b.epoch)) this.leaderEpochs.assign(b.epoch, b.baseOffset);
      this.#batches.push(b);
    }
    this.#logEndOffset = next;
    return {
      baseOffset: staged[0]!.baseOffset,
      lastOffset: staged[staged.length - 1]!.lastOffset,
      logAppendTime: this.#clock(),
      batches: staged.length,
      bytes: buf.length,
    };
  }

  async read(fromOffset: number, maxBytes: number, options: { maxOffset?: number } = {}): Promise<{ records: Buffer; nextOffset: number }> {
    this.#ensureOpen();
    if (fromOffset < this.#logStartOffset || fromOffset > this.#logEndOffset) {
      throw new MqError('OFFSET_OUT_OF_RANGE', `offset ${fromOffset} is outside [${this.#logStartOffset}, ${this.#logEndOffset}]`);
    }
    await Promise.resolve();
    const max = options.maxOffset ?? Infinity;
    const out: Buffer[] = [];
    let bytes = 0;
    let nextOffset = fromOffset;
    for (const b of this.#batches) {
      if (b.lastOffset < fromOffset) continue;
      if (b.lastOffset >= max) break;
      if (out.length > 0 && bytes + b.bytes.length > maxBytes) break;
      out.push(b.bytes);
      bytes += b.bytes.length;
      nextOffset = b.lastOffset + 1;
    }
    return { records: Buffer.concat(out), nextOffset };
  }

  async truncateTo(offset: number): Promise<void> {
    this.#ensureOpen();
    if (offset >= this.#logEndOffset) {
      // Still drop epochs recorded at the log end with nothing written in them.
      this.leaderEpochs.truncateFromEnd(this.#logEndOffset);
      return;
    }
    if (offset < this.#logStartOffset) {
      throw new MqError('OFFSET_OUT_OF_RANGE', `cannot truncate to ${offset}, below the log start ${this.#logStartOffset}`);
    }
    while (this.#batches.length > 0 && this.#batches[this.#batches.length - 1]!.lastOffset >= offset) this.#batches.pop();
    this.#logEndOffset = this.#batches.length > 0 ? this.#batches[this.#batches.length - 1]!.lastOffset + 1 : this.#logStartOffset;
    this.leaderEpochs.truncateFromEnd(this.#logEndOffset);
  }

  async deleteRecordsBefore(offset: number): Promise<void> {
    this.#ensureOpen();
    if (offset > this.#logEndOffset) {
      throw new MqError('OFFSET_OUT_OF_RANGE', `cannot delete before ${offset}, past the log end ${this.#logEndOffset}`);
    }
    while (this.#batches.length > 0 && this.#batches[0]!.lastOffset < offset) this.#batches.shift();
    this.#logStartOffset = Math.max(this.#logStartOffset, offset);
  }

  async truncateFullyAndStartAt(offset: number): Promise<void> {
    this.#ensureOpen();
    this.#batches.length = 0;
    this.#logStartOffset = offset;
    this.#logEndOffset = offset;
    this.leaderEpochs.list.length = 0;
  }

  async flush(): Promise<void> {
    this.#ensureOpen();
  }

  async close(): Promise<void> {
    this.#closed = true;
  }

  #ensureOpen(): void {
    if (this.#closed) throw new MqError('LOG_CLOSED', 'the log is closed');
  }
}
