/**
 * The one batch encoder: records are written straight into a buffer the
 * caller owns (the producer's pooled memory, or one sized exactly by
 * `encodeBatch`) in the FORMAT.md layout, with no per-record buffers and
 * strings written as UTF-8 in place; the header and CRC are written once,
 * when the batch closes. Compression (when asked) runs once over the
 * finished records section.
 */
import { Buffer, utf8Write } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import { codecId, compress, compressSync, type CompressionCodec } from './compression.js';
import {
  ATTR_COMPRESSION_MASK,
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  ATTR_TRANSACTIONAL,
  HEADER_SIZE,
  LOG_OVERHEAD,
  MAGIC,
  OFF_ATTRIBUTES,
  OFF_BASE_OFFSET,
  OFF_BASE_SEQUENCE,
  OFF_BASE_TIMESTAMP,
  OFF_BATCH_LENGTH,
  OFF_CRC,
  OFF_LAST_OFFSET_DELTA,
  OFF_LEADER_EPOCH,
  OFF_MAGIC,
  OFF_MAX_TIMESTAMP,
  OFF_PRODUCER_EPOCH,
  OFF_PRODUCER_ID,
  OFF_RECORD_COUNT,
  computeBatchCrc,
} from './header.js';
import { varintSize, writeInt64, writeVarint } from './varint.js';

export type Bytes = Buffer | Uint8Array | string;

export interface RecordHeaderInput {
  key: string;
  value: Bytes | null;
}

/** A record's headers: a list (keys may repeat) or an object. */
export type HeadersInput = RecordHeaderInput[] | Record<string, Bytes | null | undefined>;

/** What the builder needs of a record: key, value and headers. */
export interface RecordFields {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: HeadersInput;
}

/** Strings up to this many chars are scanned and copied in JS when pure ASCII (cheaper than two native calls); longer ones use Buffer.byteLength + utf8Write. */
const ASCII_SCAN_MAX = 40;
/** Set by byteLen: whether the last string measured was pure ASCII (and short). */
let lastAscii = false;

function byteLen(b: Bytes | null | undefined): number {
  lastAscii = false;
  if (b === null || b === undefined) return -1;
  if (typeof b === 'string') {
    const n = b.length;
    if (n === 0) return 0;
    if (n <= ASCII_SCAN_MAX) {
      let i = 0;
      while (i < n && b.charCodeAt(i) < 0x80) i++;
      if (i === n) {
        lastAscii = true;
        return n;
      }
    }
    return Buffer.byteLength(b, 'utf8');
  }
  return b.byteLength;
}

function lenFieldSize(len: number): number {
  return len < 0 ? 1 : varintSize(len) + len;
}

function checkBytes(name: string, b: unknown): void {
  if (b === null || b === undefined || typeof b === 'string' || b instanceof Uint8Array) return;
  throw new MqError('INVALID_ARGUMENT', `record ${name} must be a string, Buffer, Uint8Array or null, got ${typeof b}`);
}

/**
 * Measured sizes of the record last passed to `measureRecord` (a scratch
 * object, so measuring allocates nothing). `fixedBody` is the record's body
 * without its timestamp and offset deltas.
 */
const measured = { keyLen: -1, valueLen: -1, keyAscii: false, valueAscii: false, headersSize: 0, headerCount: 0, fixedBody: 0 };

function measureHeaders(h: HeadersInput | undefined): void {
  let size = 0;
  let count = 0;
  if (h) {
    if (Array.isArray(h)) {
      for (const { key, value } of h) {
        if (typeof key !== 'string') throw new MqError('INVALID_ARGUMENT', 'header keys must be strings');
        checkBytes(`header "${key}"`, value);
        size += lenFieldSize(Buffer.byteLength(key, 'utf8')) + lenFieldSize(byteLen(value));
        count++;
      }
    } else {
      for (const key in h) {
        const value = h[key];
        checkBytes(`header "${key}"`, value);
        size += lenFieldSize(Buffer.byteLength(key, 'utf8')) + lenFieldSize(byteLen(value));
        count++;
      }
    }
  }
  measured.headersSize = size;
  measured.headerCount = count;
}

/** Bytes reserved by `measureRecord` for each of the timestamp and offset deltas. */
const DELTA_RESERVE = 5;

/**
 * Validates a record and returns its encoded size, reserving 5 bytes for
 * each of its timestamp and offset deltas (an upper bound for deltas within
 * about ±194 days and offsets within a batch). Must come right before the
 * `tryWrite` of the same record: it leaves the sizes for it.
 */
export function measureRecord(record: RecordFields): number {
  if (record === null || typeof record !== 'object') throw new MqError('INVALID_ARGUMENT', 'a record must be an object with a value');
  checkBytes('key', record.key);
  checkBytes('value', record.value);
  measured.keyLen = byteLen(record.key);
  measured.keyAscii = lastAscii;
  measured.valueLen = byteLen(record.value);
  measured.valueAscii = lastAscii;
  measureHeaders(record.headers);
  // attributes(1) + key + value + header count + headers; the deltas come on top
  const fixed = 1 + lenFieldSize(measured.keyLen) + lenFieldSize(measured.valueLen) + varintSize(measured.headerCount) + measured.headersSize;
  measured.fixedBody = fixed;
  const body = fixed + 2 * DELTA_RESERVE;
  return varintSize(body) + body;
}

/** The exact encoded size of the record last measured, at these deltas. */
export function measuredSize(timestampDelta: number, offsetDelta: number): number {
  const body = measured.fixedBody + varintSize(timestampDelta) + varintSize(offsetDelta);
  return varintSize(body) + body;
}

function writeBytes(buf: Buffer, pos: number, b: Bytes | null | undefined, len: number, ascii = false): number {
  pos = writeVarint(buf, pos, len);
  if (len <= 0) return pos;
  if (typeof b === 'string') {
    if (ascii) {
      for (let i = 0; i < len; i++) buf[pos + i] = b.charCodeAt(i);
      return pos + len;
    }
    return pos + utf8Write(buf, b, pos, len);
  }
  const src = b as Uint8Array;
  if (len < 32) {
    for (let i = 0; i < len; i++) buf[pos + i] = src[i]!;
  } else {
    buf.set(src, pos);
  }
  return pos + len;
}

function writeHeaders(buf: Buffer, pos: number, h: HeadersInput): number {
  if (Array.isArray(h)) {
    for (const { key, value } of h) {
      pos = writeBytes(buf, pos, key, Buffer.byteLength(key, 'utf8'));
      pos = writeBytes(buf, pos, value, byteLen(value));
    }
  } else {
    for (const key in h) {
      const value = h[key];
      pos = writeBytes(buf, pos, key, Buffer.byteLength(key, 'utf8'));
      pos = writeBytes(buf, pos, value, byteLen(value));
    }
  }
  return pos;
}

/**
 * Builds one batch in `buffer`: `measureRecord(r)` then `tryWrite(r, …)`
 * for each record, then `close(codec)`. Header fields other than the
 * records' (producer, transaction, control, base offset) are set on the
 * builder before it closes, so the CRC covers them.
 */
export class RecordBatchBuilder {
  /** Write position: the end of the records so far. */
  pos = HEADER_SIZE;
  count = 0;
  baseTimestamp = 0;
  maxTimestamp = 0;
  /** Offset delta of the last record appended (-1: none yet). */
  lastOffsetDelta = -1;
  /** The finished batch (set by `close`). */
  bytes: Buffer | undefined;
  /** Producer fields (-1: none). */
  producerId = -1;
  producerEpoch = -1;
  baseSequence = -1;
  /** Attribute bits: part of a transaction, a control batch (a marker), LogAppendTime. */
  transactional = false;
  control = false;
  logAppendTime = false;
  baseOffset = 0;
  partitionLeaderEpoch = -1;
  /** Whether the base timestamp was given (else it is the first record's). */
  private readonly fixedBase: boolean;

  constructor(
    /** Memory the records are written into (the batch is a view of it when uncompressed). */
    readonly buffer: Buffer,
    /** The batch's base timestamp when known up front (deltas from it may be negative); default the first record's. */
    baseTimestamp?: number,
  ) {
    this.fixedBase = baseTimestamp !== undefined;
    if (baseTimestamp !== undefined) this.baseTimestamp = this.maxTimestamp = baseTimestamp;
  }

  /** Bytes free for more records. */
  get remaining(): number {
    return this.buffer.length - this.pos;
  }

  get sizeBytes(): number {
    return this.bytes ? this.bytes.length : this.pos;
  }

  /**
   * Appends the record just measured by `measureRecord`. Returns false,
   * writing nothing, when it does not fit. The offset delta defaults to the
   * record's index; given (compaction keeps offsets), deltas must increase.
   */
  tryWrite(record: RecordFields, timestamp: number, offsetDelta = this.count): boolean {
    const count = this.count;
    const first = count === 0 && !this.fixedBase;
    const tsDelta = first ? 0 : timestamp - this.baseTimestamp;
    const keyLen = measured.keyLen;
    const valueLen = measured.valueLen;
    const hc = measured.headerCount;
    const body = measured.fixedBody + varintSize(tsDelta) + varintSize(offsetDelta);
    const buf = this.buffer;
    if (varintSize(body) + body > buf.length - this.pos) return false;
    let pos = writeVarint(buf, this.pos, body);
    buf[pos++] = 0; // record attributes
    pos = writeVarint(buf, pos, tsDelta);
    pos = writeVarint(buf, pos, offsetDelta);
    pos = writeBytes(buf, pos, record.key, keyLen, measured.keyAscii);
    pos = writeBytes(buf, pos, record.value, valueLen, measured.valueAscii);
    pos = writeVarint(buf, pos, hc);
    if (hc > 0) pos = writeHeaders(buf, pos, record.headers!);
    if (first) {
      this.baseTimestamp = timestamp;
      this.maxTimestamp = timestamp;
    } else if (timestamp > this.maxTimestamp) {
      this.maxTimestamp = timestamp;
    }
    this.pos = pos;
    this.count = count + 1;
    this.lastOffsetDelta = offsetDelta;
    return true;
  }

  /** Writes the header and CRC; compresses the records first when asked (zstd: asynchronously). Idempotent. */
  close(codec: CompressionCodec, lastOffsetDelta = this.lastOffsetDelta): Buffer | Promise<Buffer> {
    if (this.bytes) return this.bytes;
    if (codec === 'none') return this.closeSync(codec, lastOffsetDelta);
    return compress(codec, this.buffer.subarray(HEADER_SIZE, this.pos)).then((section) => this.finishCompressed(codec, section, lastOffsetDelta));
  }

  /** close() for the codecs this platform runs synchronously (UNSUPPORTED_COMPRESSION for others). */
  closeSync(codec: CompressionCodec, lastOffsetDelta = this.lastOffsetDelta): Buffer {
    if (this.bytes) return this.bytes;
    if (codec === 'none') {
      this.bytes = this.finish(this.buffer.subarray(0, this.pos), 0, lastOffsetDelta);
      return this.bytes;
    }
    return this.finishCompressed(codec, compressSync(codec, this.buffer.subarray(HEADER_SIZE, this.pos)), lastOffsetDelta);
  }

  private finishCompressed(codec: CompressionCodec, section: Buffer, lastOffsetDelta: number): Buffer {
    const out = Buffer.allocUnsafe(HEADER_SIZE + section.length);
    section.copy(out, HEADER_SIZE);
    this.bytes = this.finish(out, codecId(codec), lastOffsetDelta);
    return this.bytes;
  }

  private finish(out: Buffer, codec: number, lastOffsetDelta: number): Buffer {
    const size = out.length;
    let attributes = codec & ATTR_COMPRESSION_MASK;
    if (this.logAppendTime) attributes |= ATTR_LOG_APPEND_TIME;
    if (this.transactional) attributes |= ATTR_TRANSACTIONAL;
    if (this.control) attributes |= ATTR_CONTROL;
    writeInt64(out, OFF_BASE_OFFSET, this.baseOffset);
    out.writeInt32BE(size - LOG_OVERHEAD, OFF_BATCH_LENGTH);
    out.writeInt32BE(this.partitionLeaderEpoch, OFF_LEADER_EPOCH);
    out.writeInt8(MAGIC, OFF_MAGIC);
    out.writeInt16BE(attributes, OFF_ATTRIBUTES);
    out.writeInt32BE(lastOffsetDelta, OFF_LAST_OFFSET_DELTA);
    writeInt64(out, OFF_BASE_TIMESTAMP, this.baseTimestamp);
    writeInt64(out, OFF_MAX_TIMESTAMP, this.maxTimestamp);
    writeInt64(out, OFF_PRODUCER_ID, this.producerId);
    out.writeInt16BE(this.producerEpoch, OFF_PRODUCER_EPOCH);
    out.writeInt32BE(this.baseSequence, OFF_BASE_SEQUENCE);
    out.writeInt32BE(this.count, OFF_RECORD_COUNT);
    out.writeUInt32BE(computeBatchCrc(out, 0, size), OFF_CRC);
    return out;
  }
}
