/**
 * Lazy decoding of fetched batches (the consume hot path): a fetch response
 * stays raw bytes until poll() asks for records, and then only as many
 * records as asked are checked and turned into small ConsumerRecord objects
 * that read their fields from the fetched bytes when asked (keys and values
 * are views, no copies).
 */
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  ATTR_TRANSACTIONAL,
  controlTypeOf,
  type BatchHeader,
  COMPRESSION_CODECS,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  HEADER_SIZE,
  LOG_OVERHEAD,
  decompress,
  readBatchHeader,
  validateBatch,
} from '@mq/protocol/batch';
import { MqError, isMqError } from '@mq/protocol/errors';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface ConsumerRecord {
  topic: string;
  partition: number;
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

const NO_HEADERS: RecordHeader[] = Object.freeze([]) as unknown as RecordHeader[];

/** What the records of one batch share (one object per batch, not per record). */
class BatchContext {
  constructor(
    readonly topic: string,
    readonly partition: number,
    /** The batch's records section (decompressed when it was compressed). */
    readonly section: Buffer,
    readonly baseTimestamp: number,
    /** LogAppendTime: every record has the batch's max timestamp (else its own). */
    readonly logAppendTime: boolean,
    readonly maxTimestamp: number,
  ) {}
}

/**
 * Where the last readVarint() stopped. The getters below re-read fields of
 * records that drain() has already checked, so they need neither a reader
 * object nor bounds checks.
 */
let after = 0;

function readVarint(buf: Buffer, pos: number): number {
  const b0 = buf[pos]!;
  if (b0 < 0x80) {
    after = pos + 1;
    return (b0 >>> 1) ^ -(b0 & 1);
  }
  const b1 = buf[pos + 1]!;
  if (b1 < 0x80) {
    after = pos + 2;
    const u = (b0 & 0x7f) | (b1 << 7);
    return (u >>> 1) ^ -(u & 1);
  }
  return longVarint(buf, pos, buf.length);
}

/** Varints of three bytes or more, with the checks the shared reader makes. */
function longVarint(buf: Buffer, pos: number, end: number): number {
  let result = 0;
  let shift = 0;
  let byte: number;
  do {
    if (pos >= end) throw new MqError('CORRUPT_MESSAGE', 'varint runs past the end of the batch');
    byte = buf[pos++]!;
    if (shift < 28) result |= (byte & 0x7f) << shift;
    else result += (byte & 0x7f) * 2 ** shift;
    shift += 7;
    if (shift > 63) throw new MqError('CORRUPT_MESSAGE', 'varint is longer than 10 bytes');
  } while (byte & 0x80);
  after = pos;
  if (shift <= 28) return (result >>> 1) ^ -(result & 1);
  const u = result < 0 ? result + 2 ** 32 : result;
  return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
}

/** Position of the key length varint of the record whose attributes byte is at `p`. */
function keyLengthAt(buf: Buffer, p: number): number {
  readVarint(buf, p + 1); // timestamp delta
  readVarint(buf, after); // offset delta
  return after;
}

/**
 * A fetched record. It holds its batch, its position in the batch and its
 * offset (the consume hot path allocates this one small object per record);
 * key, value, timestamp and headers are read from the fetched bytes on first
 * access, key and value as views (no copies).
 */
class FetchedRecord implements ConsumerRecord {
  private k: Buffer | null | undefined = undefined;
  private v: Buffer | null | undefined = undefined;
  private h: RecordHeader[] | undefined = undefined;
  constructor(
    private readonly b: BatchContext,
    /** Position of the record's attributes byte in the batch section. */
    private readonly p: number,
    readonly offset: number,
    /** Position of the value length (read on every value access, so kept rather than re-found). */
    private readonly vp: number,
  ) {}

  get topic(): string {
    return this.b.topic;
  }

  get partition(): number {
    return this.b.partition;
  }

  get timestamp(): number {
    const b = this.b;
    return b.logAppendTime ? b.maxTimestamp : b.baseTimestamp + readVarint(b.section, this.p + 1);
  }

  get key(): Buffer | null {
    if (this.k === undefined) {
      const buf = this.b.section;
      const len = readVarint(buf, keyLengthAt(buf, this.p));
      this.k = len < 0 ? null : buf.subarray(after, after + len);
    }
    return this.k;
  }

  get value(): Buffer | null {
    if (this.v === undefined) {
      const buf = this.b.section;
      const len = readVarint(buf, this.vp);
      this.v = len < 0 ? null : buf.subarray(after, after + len);
    }
    return this.v;
  }

  get headers(): RecordHeader[] {
    if (this.h === undefined) this.h = this.readHeaders();
    return this.h;
  }

  private readHeaders(): RecordHeader[] {
    const buf = this.b.section;
    const valueLen = readVarint(buf, this.vp);
    const count = readVarint(buf, valueLen > 0 ? after + valueLen : after);
    if (count === 0) return NO_HEADERS;
    const headers = new Array<RecordHeader>(count);
    for (let j = 0; j < count; j++) {
      const hkLen = readVarint(buf, after);
      const key = buf.toString('utf8', after, after + hkLen);
      const hvLen = readVarint(buf, after + hkLen);
      headers[j] = { key, value: hvLen < 0 ? null : buf.subarray(after, after + hvLen) };
      if (hvLen > 0) after += hvLen;
    }
    return headers;
  }

  toJSON(): Record<string, unknown> {
    const { topic, partition, offset, timestamp, key, value, headers } = this;
    return { topic, partition, offset, timestamp, key, value, headers };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): Record<string, unknown> {
    return this.toJSON();
  }
}

/**
 * Reads a zig-zag varint at `pos`, not past `end`, leaving the position after
 * it in `after`. Record fields are mostly one or two bytes: those are inline.
 */
function checkedVarint(buf: Buffer, pos: number, end: number): number {
  if (pos + 1 < end) {
    const b0 = buf[pos]!;
    if (b0 < 0x80) {
      after = pos + 1;
      return (b0 >>> 1) ^ -(b0 & 1);
    }
    const b1 = buf[pos + 1]!;
    if (b1 < 0x80) {
      after = pos + 2;
      const u = (b0 & 0x7f) | (b1 << 7);
      return (u >>> 1) ^ -(u & 1);
    }
  }
  return longVarint(buf, pos, end);
}

/** The position after a length-prefixed field of length `len` at `pos` (-1 is null). */
function skipBytes(pos: number, len: number, end: number): number {
  if (len < 0) {
    if (len === -1) return pos;
    throw new MqError('CORRUPT_MESSAGE', `negative length ${len}`);
  }
  if (pos + len > end) throw new MqError('CORRUPT_MESSAGE', `length ${len} runs past the end of the batch`);
  return pos + len;
}

/** The raw records of one partition from one fetch response, consumed in order. */
export class CompletedFetch {
  private pos = 0;
  /** The current batch (its records section is decompressed when needed) and the read position in it. */
  private context: BatchContext | undefined;
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
          const len = checkedVarint(buf, pos, sectionEnd);
          const start = after;
          const end = start + len;
          if (len < 0 || end > sectionEnd) throw corrupt(this, `record length ${len} does not fit the batch`);
          checkedVarint(buf, start + 1, end); // timestamp delta (after the attributes byte)
          const offset = baseOffset + checkedVarint(buf, after, end);
          const keyLen = checkedVarint(buf, after, end);
          const vp = skipBytes(after, keyLen, end);
          const valueLen = checkedVarint(buf, vp, end);
          pos = skipBytes(after, valueLen, end);
          const hc = checkedVarint(buf, pos, end);
          pos = after;
          if (hc !== 0) {
            if (hc < 0 || hc > len) throw corrupt(this, `invalid header count ${hc}`);
            for (let j = 0; j < hc; j++) {
              const hk = checkedVarint(buf, pos, end);
              if (hk < 0) throw corrupt(this, 'null header key');
              pos = skipBytes(after, hk, end);
              const hv = checkedVarint(buf, pos, end);
              pos = skipBytes(after, hv, end);
            }
          }
          if (pos !== end) throw corrupt(this, 'record length does not match its fields');
          if (offset < minOffset) continue;
          out.push(new FetchedRecord(ctx, start, offset, vp));
          added++;
        }
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
      const codec = COMPRESSION_CODECS[h.attributes & ATTR_COMPRESSION_MASK] ?? 'none';
      let section = buf.subarray(start + HEADER_SIZE, start + size);
      if (codec !== 'none') {
        try {
          section = await decompress(codec, section, this.maxDecompressedBytes);
        } catch (err) {
          // A codec this platform lacks (a browser): the batch is fine, this reader cannot read it, so it
          // is not skipped; every poll says so until the application seeks past it.
          if (isMqError(err, 'UNSUPPORTED_COMPRESSION')) throw err;
          // The CRC held (when checked): the batch itself cannot be read, a refetch would not help.
          throw unreadable(this, h.baseOffset, last, (err as Error).message);
        }
      }
      this.baseOffset = h.baseOffset;
      this.batchBaseOffset = h.baseOffset;
      this.rpos = 0;
      this.context = new BatchContext(
        this.topic,
        this.partition,
        section,
        h.baseTimestamp,
        (h.attributes & ATTR_LOG_APPEND_TIME) !== 0,
        h.maxTimestamp,
      );
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
