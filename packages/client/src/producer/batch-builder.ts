/**
 * Encodes records straight into a batch buffer in the FORMAT.md layout (the
 * client's hot path): no per-record buffers, strings written as UTF-8 in
 * place, the header and CRC written once when the batch closes. Compression
 * (when configured) runs once over the finished records section.
 */
import { Buffer, utf8Write } from '@mq/protocol/platform';
import {
  COMPRESSION_CODECS,
  HEADER_SIZE,
  LOG_OVERHEAD,
  OFF_ATTRIBUTES,
  ATTR_TRANSACTIONAL,
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
  compress,
  varintSize,
  writeInt64,
  writeVarint,
  type CompressionCodec,
} from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';
import type { Sink } from './record-sink.js';

export type Bytes = Buffer | Uint8Array | string;
export type HeadersInput = Record<string, Bytes | null | undefined> | Array<{ key: string; value: Bytes | null }>;

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
 * object, so measuring allocates nothing).
 */
const measured = { keyLen: -1, valueLen: -1, keyAscii: false, valueAscii: false, headersSize: 0, headerCount: 0 };

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

/**
 * Validates a record and returns its encoded size at the given offset and
 * timestamp deltas (an upper bound is fine: varints of deltas up to 4 bytes).
 */
export function measureRecord(record: ProducerRecord): number {
  if (record === null || typeof record !== 'object') throw new MqError('INVALID_ARGUMENT', 'a record must be an object with a value');
  checkBytes('key', record.key);
  checkBytes('value', record.value);
  measured.keyLen = byteLen(record.key);
  measured.keyAscii = lastAscii;
  measured.valueLen = byteLen(record.value);
  measured.valueAscii = lastAscii;
  measureHeaders(record.headers);
  // attributes(1) + timestampDelta(<=5 reserved) + offsetDelta(<=5 reserved) + key + value + header count + headers
  const body =
    1 + 5 + 5 + lenFieldSize(measured.keyLen) + lenFieldSize(measured.valueLen) + varintSize(measured.headerCount) + measured.headersSize;
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

/** Most sink slots reserved up front for a batch (more grow as records arrive). */
const MAX_PRESIZED_SINKS = 1024;
const NO_SINKS: never[] = [];

export class BatchBuilder {
  /** Write position: the end of the records so far. */
  pos = HEADER_SIZE;
  count = 0;
  baseTimestamp = 0;
  maxTimestamp = 0;
  /**
   * Where each record's result goes, by record index (`count` entries).
   * Sized on the first record for as many records of its size as the buffer
   * holds, so the arrays are not regrown (and their old copies left as
   * garbage) while the batch fills.
   */
  sinks: Sink[] = NO_SINKS;
  sinkIndexes: number[] = NO_SINKS;
  readonly createdAt: number;
  /** The finished batch (set by `close`). */
  bytes: Buffer | undefined;
  attempts = 0;
  /** Set once every record of the batch has been resolved or failed (completion is idempotent). */
  settled = false;
  /** Set once its memory went back to the pool. */
  released = false;
  /** Idempotent producer fields (-1: none), set before the batch is first closed, so the CRC covers them. */
  producerId = -1;
  producerEpoch = -1;
  baseSequence = -1;
  /** Part of a transaction (the transactional attribute bit). */
  transactional = false;

  constructor(
    /** Pooled memory the records are written into; released when the batch completes. */
    readonly buffer: Buffer,
    readonly topic: string,
    readonly partition: number,
    now: number,
  ) {
    this.createdAt = now;
  }

  /** Bytes free for more records. */
  get remaining(): number {
    return this.buffer.length - this.pos;
  }

  get sizeBytes(): number {
    return this.bytes ? this.bytes.length : this.pos;
  }

  /**
   * Appends the record just measured (`size` from `measureRecord`). Returns
   * false, writing nothing, when it does not fit.
   */
  tryAppend(record: ProducerRecord, size: number, timestamp: number, sink: Sink, sinkIndex: number): boolean {
    if (size > this.buffer.length - this.pos) return false;
    const count = this.count;
    const tsDelta = count === 0 ? 0 : timestamp - this.baseTimestamp;
    if (tsDelta < -0x3ffffffff || tsDelta > 0x3ffffffff) return false; // over the 5 bytes measureRecord reserved
    const keyLen = measured.keyLen;
    const valueLen = measured.valueLen;
    const hc = measured.headerCount;
    const body =
      1 + varintSize(tsDelta) + varintSize(count) + lenFieldSize(keyLen) + lenFieldSize(valueLen) + varintSize(hc) + measured.headersSize;
    const buf = this.buffer;
    let pos = writeVarint(buf, this.pos, body);
    buf[pos++] = 0; // record attributes
    pos = writeVarint(buf, pos, tsDelta);
    pos = writeVarint(buf, pos, count);
    pos = writeBytes(buf, pos, record.key, keyLen, measured.keyAscii);
    pos = writeBytes(buf, pos, record.value, valueLen, measured.valueAscii);
    pos = writeVarint(buf, pos, hc);
    if (hc > 0) pos = writeHeaders(buf, pos, record.headers!);
    if (count === 0) {
      this.baseTimestamp = timestamp;
      this.maxTimestamp = timestamp;
      const n = Math.min(MAX_PRESIZED_SINKS, Math.floor(buf.length / size) + 1);
      this.sinks = new Array<Sink>(n);
      this.sinkIndexes = new Array<number>(n);
    } else if (timestamp > this.maxTimestamp) {
      this.maxTimestamp = timestamp;
    }
    this.pos = pos;
    this.count = count + 1;
    this.sinks[count] = sink;
    this.sinkIndexes[count] = sinkIndex;
    return true;
  }

  /** Writes the header and CRC; compresses the records first when asked. Idempotent. */
  close(codec: CompressionCodec): Buffer | Promise<Buffer> {
    if (this.bytes) return this.bytes;
    if (codec === 'none') {
      this.bytes = this.finish(this.buffer.subarray(0, this.pos), 0);
      return this.bytes;
    }
    return compress(codec, this.buffer.subarray(HEADER_SIZE, this.pos)).then((section) => {
      const out = Buffer.allocUnsafe(HEADER_SIZE + section.length);
      section.copy(out, HEADER_SIZE);
      this.bytes = this.finish(out, COMPRESSION_CODECS.indexOf(codec));
      return this.bytes;
    });
  }

  private finish(out: Buffer, codecId: number): Buffer {
    const size = out.length;
    writeInt64(out, 0, 0);
    out.writeInt32BE(size - LOG_OVERHEAD, OFF_BATCH_LENGTH);
    out.writeInt32BE(-1, OFF_LEADER_EPOCH);
    out.writeInt8(2, OFF_MAGIC);
    out.writeInt16BE((codecId & 0x07) | (this.transactional ? ATTR_TRANSACTIONAL : 0), OFF_ATTRIBUTES);
    out.writeInt32BE(this.count - 1, OFF_LAST_OFFSET_DELTA);
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
