/**
 * Where the coordinator keeps its state: the partitions of the internal
 * compacted topic `__consumer_offsets`. The coordinator only needs to append
 * and to read back; the broker provides the real one over the replicated
 * partitions (replicated-offsets-log.ts).
 */
import { MqError } from '@mq/protocol/errors';
import { iterateBatches, lastOffset, setBaseOffset, validateBatch } from '@mq/protocol/batch';

export interface OffsetsLog {
  readonly partitionCount: number;
  /**
   * Appends one record batch to a partition. Resolves, with the offset given
   * to its first record, only once the batch is durable to the standard of a
   * produce with acks=all (on one broker: appended and flushed per the
   * topic's flush policy).
   */
  append(partition: number, batch: Buffer, options?: { coordinator?: boolean }): Promise<{ baseOffset: number }>;
  /** Whole batches from `fromOffset`; an empty buffer at the end of the log. */
  read(partition: number, fromOffset: number, maxBytes: number): Promise<{ records: Buffer; nextOffset: number }>;
  startOffset(partition: number): number;
  /** Where loading stops: records below it are durable (on one broker: the log end; replicated: the high watermark). */
  endOffset(partition: number): number;
  /**
   * Resolves once the partition can be loaded: every record that may have
   * been acknowledged before is below endOffset. A replicated partition's
   * new leader waits here until its high watermark reaches the log end it
   * had when it took over (its HW can lag behind records the previous
   * leader already acknowledged). Rejects when the partition is no longer
   * this broker's to load. Absent: loadable at once.
   */
  awaitLoadable?(partition: number): Promise<void>;
}

function checkPartition(partition: number, count: number) {
  if (!Number.isInteger(partition) || partition < 0 || partition >= count) {
    throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `__consumer_offsets has no partition ${partition} (it has ${count})`);
  }
}

/**
 * An in-memory offsets log for tests and the simulator. `failNext()` makes
 * the next append fail (a full disk, a lost quorum) to test that no state
 * changes when a write is not durable.
 */
export class MemoryOffsetsLog implements OffsetsLog {
  private readonly parts: { batches: Buffer[]; end: number }[];
  private failures: Error[] = [];
  appends = 0;

  constructor(readonly partitionCount: number) {
    this.parts = Array.from({ length: partitionCount }, () => ({ batches: [], end: 0 }));
  }

  failNext(err: Error = new MqError('STORAGE_ERROR', 'injected append failure')): void {
    this.failures.push(err);
  }

  async append(partition: number, batch: Buffer): Promise<{ baseOffset: number }> {
    checkPartition(partition, this.partitionCount);
    const failure = this.failures.shift();
    if (failure) throw failure;
    const header = validateBatch(batch);
    const p = this.parts[partition]!;
    const copy = Buffer.from(batch);
    const baseOffset = p.end;
    setBaseOffset(copy, 0, baseOffset);
    p.batches.push(copy);
    p.end = baseOffset + header.lastOffsetDelta + 1;
    this.appends++;
    return { baseOffset };
  }

  async read(partition: number, fromOffset: number, maxBytes: number): Promise<{ records: Buffer; nextOffset: number }> {
    checkPartition(partition, this.partitionCount);
    const p = this.parts[partition]!;
    const out: Buffer[] = [];
    let size = 0;
    let next = fromOffset;
    for (const b of p.batches) {
      for (const span of iterateBatches(b)) {
        const last = lastOffset(span.header);
        if (last < fromOffset) continue;
        if (out.length > 0 && size + span.size > maxBytes) return { records: Buffer.concat(out), nextOffset: next };
        out.push(b);
        size += span.size;
        next = last + 1;
      }
    }
    return { records: Buffer.concat(out), nextOffset: next };
  }

  startOffset(): number {
    return 0;
  }

  endOffset(partition: number): number {
    return this.parts[partition]!.end;
  }
}
