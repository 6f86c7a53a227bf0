/**
 * The one record decoder: `scanRecord` walks one record of a records
 * section and checks every field (the broker's produce checks, the client's
 * consume path and `decodeBatch` all walk records with it), and
 * `RecordView` is a record that reads its fields back from the section when
 * asked, keys and values as views (no copies). `recordsSection` gives a
 * batch's records section, decompressed within a bound (compression bombs).
 */
import { MqError } from '../errors.js';
import { decompress, decompressSync, DEFAULT_MAX_DECOMPRESSED_BYTES, onlyAsync } from './compression.js';
import { ATTR_LOG_APPEND_TIME, HEADER_SIZE, LOG_OVERHEAD, compressionOf, type BatchHeader } from './header.js';
import { varintAt, varintEnd } from './varint.js';

/** Where the record `scanRecord` last walked lies (a scratch object, so the hot loop allocates nothing). */
export const scanned = {
  /** Position of the record's attributes byte (after its length). */
  start: 0,
  offsetDelta: 0,
  /** Position of the value's length varint. */
  valuePos: 0,
};

function corrupt(what: string): MqError {
  return new MqError('CORRUPT_MESSAGE', what);
}

/** The position after a length-prefixed field of length `len` at `pos` (-1 is null). */
function skipBytes(pos: number, len: number, end: number): number {
  if (len < 0) {
    if (len === -1) return pos;
    throw corrupt(`negative length ${len}`);
  }
  if (pos + len > end) throw corrupt(`length ${len} runs past the end of the batch`);
  return pos + len;
}

/** The position after `hc` headers at `p` (out of the hot loop: most records have none). */
function skipHeaders(buf: Buffer, p: number, recordEnd: number, hc: number, len: number): number {
  if (hc < 0 || hc > len) throw corrupt(`invalid header count ${hc}`);
  for (let j = 0; j < hc; j++) {
    const hk = varintAt(buf, p, recordEnd);
    if (hk < 0) throw corrupt('null header key');
    p = skipBytes(varintEnd, hk, recordEnd);
    const hv = varintAt(buf, p, recordEnd);
    p = skipBytes(varintEnd, hv, recordEnd);
  }
  return p;
}

/**
 * Walks the record at `pos` of a records section that ends at `end`:
 * its length fits, every field lies inside it and it holds exactly its
 * fields. Returns the position after it; `scanned` says where its fields
 * are. Throws CORRUPT_MESSAGE (callers add which batch and record).
 */
export function scanRecord(buf: Buffer, pos: number, end: number): number {
  const len = varintAt(buf, pos, end);
  const start = varintEnd;
  const recordEnd = start + len;
  if (len < 1 || recordEnd > end) throw corrupt(`record length ${len} does not fit the batch`);
  varintAt(buf, start + 1, recordEnd); // timestamp delta (after the attributes byte)
  const offsetDelta = varintAt(buf, varintEnd, recordEnd);
  const keyLen = varintAt(buf, varintEnd, recordEnd);
  const valuePos = skipBytes(varintEnd, keyLen, recordEnd);
  const valueLen = varintAt(buf, valuePos, recordEnd);
  let p = skipBytes(varintEnd, valueLen, recordEnd);
  const hc = varintAt(buf, p, recordEnd);
  p = hc === 0 ? varintEnd : skipHeaders(buf, varintEnd, recordEnd, hc, len);
  if (p !== recordEnd) throw corrupt('record length does not match its fields');
  scanned.start = start;
  scanned.offsetDelta = offsetDelta;
  scanned.valuePos = valuePos;
  return recordEnd;
}

/**
 * The records section of the batch at `pos` of `buf` (its header read):
 * a view when uncompressed, else decompressed, never past
 * `maxDecompressedBytes` (RECORD_TOO_LARGE).
 */
export function recordsSection(buf: Buffer, pos: number, h: BatchHeader, maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer | Promise<Buffer> {
  const body = buf.subarray(pos + HEADER_SIZE, pos + h.batchLength + LOG_OVERHEAD);
  const codec = compressionOf(h);
  if (codec === 'none') return body;
  // zstd on Node, gzip in browsers: off the event loop (DecompressionStream has no synchronous form).
  if (onlyAsync(codec)) return decompress(codec, body, maxDecompressedBytes);
  return decompressSync(codec, body, maxDecompressedBytes);
}

/** recordsSection() for the codecs this platform runs synchronously (every one but zstd on Node). */
export function recordsSectionSync(buf: Buffer, pos: number, h: BatchHeader, maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES): Buffer {
  const body = buf.subarray(pos + HEADER_SIZE, pos + h.batchLength + LOG_OVERHEAD);
  return decompressSync(compressionOf(h), body, maxDecompressedBytes);
}

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

/**
 * The fields a batch's records share (one object per batch, not per record),
 * with the topic and partition it was fetched from (a consumer's records name
 * them; '' and -1 for a batch read outside a fetch).
 */
export class RecordSection {
  /** LogAppendTime: every record has the batch's max timestamp (else its own). */
  readonly logAppendTime: boolean;
  readonly baseOffset: number;
  readonly baseTimestamp: number;
  readonly maxTimestamp: number;
  constructor(
    /** The batch's records section (decompressed when it was compressed). */
    readonly section: Buffer,
    h: Pick<BatchHeader, 'attributes' | 'baseOffset' | 'baseTimestamp' | 'maxTimestamp'>,
    readonly topic = '',
    readonly partition = -1,
  ) {
    this.logAppendTime = (h.attributes & ATTR_LOG_APPEND_TIME) !== 0;
    this.baseOffset = h.baseOffset;
    this.baseTimestamp = h.baseTimestamp;
    this.maxTimestamp = h.maxTimestamp;
  }
}

const NO_HEADERS: RecordHeader[] = Object.freeze([]) as unknown as RecordHeader[];

/**
 * A record `scanRecord` has checked. It holds its section, its position and
 * its offset (one small object per record); timestamp, key, value and
 * headers are read from the bytes on first access, key and value as views.
 * The re-reads need no bounds beyond the section's: the scan checked them.
 * It is the consumer's record as it is (a subclass would cost the consume
 * hot path a constructor call V8 does not inline: issue 13's decode figures).
 */
export class RecordView {
  private k: Buffer | null | undefined = undefined;
  private v: Buffer | null | undefined = undefined;
  private h: RecordHeader[] | undefined = undefined;
  constructor(
    private readonly s: RecordSection,
    /** Position of the record's attributes byte in the section. */
    private readonly p: number,
    readonly offset: number,
    /** Position of the value length (read on every value access, so kept rather than re-found). */
    private readonly vp: number,
  ) {}

  get topic(): string {
    return this.s.topic;
  }

  get partition(): number {
    return this.s.partition;
  }

  get timestamp(): number {
    const s = this.s;
    return s.logAppendTime ? s.maxTimestamp : s.baseTimestamp + varintAt(s.section, this.p + 1, s.section.length);
  }

  get key(): Buffer | null {
    if (this.k === undefined) {
      const buf = this.s.section;
      const end = buf.length;
      varintAt(buf, this.p + 1, end); // timestamp delta
      varintAt(buf, varintEnd, end); // offset delta
      const len = varintAt(buf, varintEnd, end);
      this.k = len < 0 ? null : buf.subarray(varintEnd, varintEnd + len);
    }
    return this.k;
  }

  get value(): Buffer | null {
    if (this.v === undefined) {
      const buf = this.s.section;
      const len = varintAt(buf, this.vp, buf.length);
      this.v = len < 0 ? null : buf.subarray(varintEnd, varintEnd + len);
    }
    return this.v;
  }

  get headers(): RecordHeader[] {
    if (this.h === undefined) this.h = this.readHeaders();
    return this.h;
  }

  private readHeaders(): RecordHeader[] {
    const buf = this.s.section;
    const end = buf.length;
    const valueLen = varintAt(buf, this.vp, end);
    const count = varintAt(buf, valueLen > 0 ? varintEnd + valueLen : varintEnd, end);
    if (count === 0) return NO_HEADERS;
    const headers = new Array<RecordHeader>(count);
    let p = varintEnd;
    for (let j = 0; j < count; j++) {
      const hkLen = varintAt(buf, p, end);
      p = varintEnd;
      const key = buf.toString('utf8', p, p + hkLen);
      const hvLen = varintAt(buf, p + hkLen, end);
      p = varintEnd;
      headers[j] = { key, value: hvLen < 0 ? null : buf.subarray(p, p + hvLen) };
      if (hvLen > 0) p += hvLen;
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
