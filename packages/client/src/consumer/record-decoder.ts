/**
 * Lazy decoding of fetched batches (the consume hot path): a fetch response
 * stays raw bytes until poll() asks for records, and then only as many
 * records as asked are checked (@mq/protocol's scanRecord) and turned into
 * small records that read their fields from the fetched bytes when asked
 * (@mq/protocol's RecordView: keys and values are views, no copies).
 */
import {
  ATTR_CONTROL,
  ATTR_TRANSACTIONAL,
  controlTypeOf,
  type BatchHeader,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  HEADER_SIZE,
  LOG_OVERHEAD,
  RecordSection,
  RecordView,
  readBatchHeader,
  recordsSection,
  scanRecord,
  scanned,
  validateBatch,
  type RecordHeader,
} from '@mq/protocol/batch';
import { MqError, isMqError } from '@mq/protocol/errors';

export type { RecordHeader };

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** The raw records of one partition from one fetch response, consumed in order. */
export class CompletedFetch {
  private pos = 0;
  /** The current batch (its records section is decompressed when needed) and the read position in it. */
  private context: RecordSection | undefined;
  private baseOffset = 0;
  private rpos = 0;
  private left = 0;
  /** Offset after the last batch consumed: where the position goes when a batch is done. */
  nextOffset: number;
  /** Base offset of the current batch (named when it cannot be read). */
  batchBaseOffset = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly records: Buffer,
    /** The partition's seek epoch when the fetch was sent: stale data is dropped. */
    readonly epoch: number,
    /** Records before this offset are skipped (the batch holding the fetch offset starts earlier). */
    readonly fetchOffset: number,
    private readonly checkCrcs: boolean,
    /** Largest records section a compressed batch may inflate to (RECORD_TOO_LARGE past it: the batch is skipped). */
    private readonly maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES,
    /**
     * read_committed: the transactions the broker says were aborted within
     * these records (producer id and first offset). Their records are dropped
     * up to each one's abort marker. Undefined: read_uncommitted.
     */
    aborted?: ReadonlyArray<{ producerId: number; firstOffset: number }>,
  ) {
    this.nextOffset = fetchOffset;
    if (aborted && aborted.length > 0) this.aborted = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  }

  /** read_committed: aborted transactions not yet reached (by first offset), and the producers whose records are being dropped. */
  private aborted: Array<{ producerId: number; firstOffset: number }> | undefined;
  private abortedNext = 0;
  private readonly abortedProducers = new Set<number>();

  /** Whether a batch belongs to an aborted transaction (and, for an abort marker, ends one): Kafka's consumer algorithm. */
  private skipAborted(h: BatchHeader, start: number, last: number): boolean {
    const aborted = this.aborted;
    if (!aborted) return false;
    while (this.abortedNext < aborted.length && aborted[this.abortedNext]!.firstOffset <= last) {
      this.abortedProducers.add(aborted[this.abortedNext]!.producerId);
      this.abortedNext++;
    }
    if ((h.attributes & ATTR_CONTROL) !== 0) {
      try {
        if (controlTypeOf(this.records, start) === 'abort') this.abortedProducers.delete(h.producerId);
      } catch {
        // Not a marker this reader understands: it is skipped like every control batch.
      }
      return true;
    }
    return (h.attributes & ATTR_TRANSACTIONAL) !== 0 && this.abortedProducers.has(h.producerId);
  }

  get bytes(): number {
    return this.records.length;
  }

  get done(): boolean {
    return this.left === 0 && this.records.length - this.pos < HEADER_SIZE;
  }

  /**
   * Decodes up to `max` records with offset >= `minOffset` into `out`.
   * Returns how many were added. Async only for compressed batches.
   */
  async drain(out: ConsumerRecord[], max: number, minOffset: number): Promise<number> {
    let added = 0;
    while (added < max) {
      if (this.left === 0 && !(await this.nextBatch())) break;
      const ctx = this.context!;
      const baseOffset = this.baseOffset;
      const buf = ctx.section;
      const sectionEnd = buf.length;
      let pos = this.rpos;
      // Every field is checked here, once; the record object reads them back lazily.
      try {
        while (this.left > 0 && added < max) {
          this.left--;
          pos = scanRecord(buf, pos, sectionEnd);
          const offset = baseOffset + scanned.offsetDelta;
          if (offset < minOffset) continue;
          out.push(new RecordView(ctx, scanned.start, offset, scanned.valuePos));
          added++;
        }
      } catch (err) {
        throw isMqError(err, 'CORRUPT_MESSAGE') ? corrupt(this, err.message) : err;
      } finally {
        this.rpos = pos;
      }
    }
    return added;
  }

  /** Positions on the next data batch that holds records at or after the fetch offset. */
  private async nextBatch(): Promise<boolean> {
    const buf = this.records;
    while (buf.length - this.pos >= HEADER_SIZE) {
      const h = this.checkCrcs ? validateBatch(buf, this.pos) : readBatchHeader(buf, this.pos);
      const size = h.batchLength + LOG_OVERHEAD;
      if (this.pos + size > buf.length) {
        this.pos = buf.length; // a trailing partial batch: fetched again next time
        return false;
      }
      const start = this.pos;
      this.pos += size;
      const last = h.baseOffset + h.lastOffsetDelta;
      if (last < this.fetchOffset) continue;
      this.nextOffset = last + 1;
      if (this.skipAborted(h, start, last)) continue;
      if ((h.attributes & ATTR_CONTROL) !== 0 || h.recordCount === 0) continue;
      let section: Buffer;
      try {
        const read = recordsSection(buf, start, h, this.maxDecompressedBytes);
        section = read instanceof Promise ? await read : read;
      } catch (err) {
        // A codec this platform lacks (a browser): the batch is fine, this reader cannot read it, so it
        // is not skipped; every poll says so until the application seeks past it.
        if (isMqError(err, 'UNSUPPORTED_COMPRESSION')) throw err;
        // The CRC held (when checked): the batch itself cannot be read, a refetch would not help.
        throw unreadable(this, h.baseOffset, last, (err as Error).message);
      }
      this.baseOffset = h.baseOffset;
      this.batchBaseOffset = h.baseOffset;
      this.rpos = 0;
      this.context = new RecordSection(section, h, this.topic, this.partition);
      this.left = h.recordCount;
      return true;
    }
    this.pos = buf.length;
    return false;
  }
}

/** A record of the current batch does not decode: the batch is unreadable (its CRC held), so it is skipped. */
function corrupt(f: CompletedFetch, what: string): MqError {
  return unreadable(f, f.batchBaseOffset, f.nextOffset - 1, what);
}

/**
 * The typed error for a batch no conforming reader can decode: `skipTo` is
 * the offset after it, where the consumer goes on after reporting it once.
 */
function unreadable(f: CompletedFetch, baseOffset: number, lastOffset: number, what: string): MqError {
  return new MqError(
    'CORRUPT_MESSAGE',
    `the batch at offsets ${baseOffset}..${lastOffset} of ${f.topic}/${f.partition} cannot be read (${what}); it is skipped`,
    { topic: f.topic, partition: f.partition, baseOffset, lastOffset, skipTo: lastOffset + 1, retriable: false },
  );
}

/** The offset after the last whole batch in fetched bytes, or undefined when there is none. */
export function endOfWholeBatches(records: Buffer): number | undefined {
  let pos = 0;
  let next: number | undefined;
  while (records.length - pos >= HEADER_SIZE) {
    const h = readBatchHeader(records, pos);
    const size = h.batchLength + LOG_OVERHEAD;
    if (h.batchLength < HEADER_SIZE - LOG_OVERHEAD) throw new MqError('CORRUPT_MESSAGE', `batch length ${h.batchLength} is too short`);
    if (pos + size > records.length) break;
    next = h.baseOffset + h.lastOffsetDelta + 1;
    pos += size;
  }
  return next;
}
