/**
 * The producer's batch: @mq/protocol's RecordBatchBuilder (records written
 * straight into pooled memory, the header and CRC patched in when it
 * closes) plus what the producer tracks per batch: where each record's
 * result goes, its topic and partition, attempts and release.
 */
import { RecordBatchBuilder, measureRecord, type Bytes, type HeadersInput } from '@mq/protocol/batch';
import type { Sink } from './record-sink.js';

export { measureRecord };
export type { Bytes, HeadersInput };

/** One record to send. */
export interface ProducerRecord {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: HeadersInput;
  /** Explicit partition: wins over the partitioner. */
  partition?: number;
  /** Create time in ms since the epoch (default now). */
  timestamp?: number;
}

/** Most sink slots reserved up front for a batch (more grow as records arrive). */
const MAX_PRESIZED_SINKS = 1024;
const NO_SINKS: never[] = [];

export class BatchBuilder extends RecordBatchBuilder {
  /**
   * Where each record's result goes, by record index (`count` entries).
   * Sized on the first record for as many records of its size as the buffer
   * holds, so the arrays are not regrown (and their old copies left as
   * garbage) while the batch fills; but for no more than `expectedRecords`
   * when that is given (the partition's previous batch held that many: a
   * producer sending one record at a time would otherwise allocate two
   * arrays of hundreds of slots, about 10 KB, for every send). Past their
   * size the arrays grow as arrays do.
   */
  sinks: Sink[] = NO_SINKS;
  sinkIndexes: number[] = NO_SINKS;
  readonly createdAt: number;
  attempts = 0;
  /** Set once every record of the batch has been resolved or failed (completion is idempotent). */
  settled = false;
  /** Set once its memory went back to the pool. */
  released = false;

  constructor(
    /** Pooled memory the records are written into; released when the batch completes. */
    buffer: Buffer,
    readonly topic: string,
    readonly partition: number,
    now: number,
    /** Records the batch is expected to hold (0: as many as fit). */
    private readonly expectedRecords = 0,
  ) {
    super(buffer);
    this.createdAt = now;
  }

  /**
   * Appends the record just measured (`size` from `measureRecord`). Returns
   * false, writing nothing, when it does not fit.
   */
  tryAppend(record: ProducerRecord, size: number, timestamp: number, sink: Sink, sinkIndex: number): boolean {
    const count = this.count;
    if (!this.tryWrite(record, timestamp)) return false;
    if (count === 0) {
      const fit = Math.min(MAX_PRESIZED_SINKS, Math.floor(this.buffer.length / size) + 1);
      const n = this.expectedRecords > 0 ? Math.min(fit, this.expectedRecords) : fit;
      this.sinks = new Array<Sink>(n);
      this.sinkIndexes = new Array<number>(n);
    }
    this.sinks[count] = sink;
    this.sinkIndexes[count] = sinkIndex;
    return true;
  }
}
