/**
 * Encoding and decoding of whole batches with their records: the client's
 * hot path. Encoding sizes everything first and writes into one buffer;
 * decoding returns views into the batch (no copies) for keys and values.
 */
import { Buffer } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import { codecId, compress, compressSync, decompress, decompressSync, type CompressionCodec } from './compression.js';
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
  compressionOf,
  readBatchHeader,
  validateBatch,
  writeInt64,
  type BatchHeader,
  type TimestampType,
} from './header.js';
import { VarintReader, varintSize, writeVarint } from './varint.js';

export type Bytes = Buffer | Uint8Array | string;

export interface RecordHeaderInput {
  key: string;
  value: Bytes | null;
}

export interface RecordInput {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: RecordHeaderInput[] | Record<string, Bytes | null>;
  /** Create time in ms since the epoch; defaults to the batch's `now`. */
  timestamp?: number;
  /**
   * Offset delta within the batch; defaults to the record's index. Deltas must
   * increase. Set by log compaction, which keeps the surviving records' offsets.
   */
  offsetDelta?: number;
}

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface DecodedBatch {
  header: BatchHeader;
  records: DecodedRecord[];
}

export interface EncodeBatchOptions {
  baseOffset?: number;
  partitionLeaderEpoch?: number;
  compression?: CompressionCodec;
  timestampType?: TimestampType;
  transactional?: boolean;
  control?: boolean;
  producerId?: number;
  producerEpoch?: number;
  baseSequence?: number;
  /**
   * Last offset delta of the batch; defaults to the last record's offset
   * delta. Compaction keeps a batch's original value when records go.
   */
  lastOffsetDelta?: number;
  /** Timestamp for records that carry none; defaults to Date.now(). */
  now?: number;
}


function toBuffer(b: Bytes | null | undefined): Buffer | null {
  if (b === null || b === undefined) return null;
  if (typeof b === 'string') return Buffer.from(b, 'utf8');
  if (Buffer.isBuffer(b)) return b;
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

interface Prepared {
  key: Buffer | null;
  value: Buffer | null;
  headers: Array<[Buffer, Buffer | null]>;
  timestampDelta: number;
  offsetDelta: number;
  bodySize: number;
}

function normaliseHeaders(h: RecordInput['headers']): Array<[Buffer, Buffer | null]> {
  if (!h) return [];
  if (Array.isArray(h)) return h.map((x) => [Buffer.from(x.key, 'utf8'), toBuffer(x.value)]);
  return Object.entries(h).map(([k, v]) => [Buffer.from(k, 'utf8'), toBuffer(v)]);
}

function lenSize(b: Buffer | null): number {
  return b === null ? 1 : varintSize(b.length) + b.length;
}

/** Encodes the records section (uncompressed) and the header fields it implies. */
function encodeRecordsSection(records: readonly RecordInput[], now: number) {
  if (records.length === 0) throw new MqError('INVALID_RECORD', 'a batch needs at least one record');
  let baseTimestamp = Infinity;
  for (const r of records) {
    const ts = r.timestamp ?? now;
    if (!Number.isSafeInteger(ts) || ts < -1) throw new MqError('INVALID_TIMESTAMP', `invalid record timestamp ${ts}`);
    if (ts < baseTimestamp) baseTimestamp = ts;
  }
  let maxTimestamp = baseTimestamp;
  let lastOffsetDelta = -1;
  const prepared: Prepared[] = new Array(records.length);
  let total = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const ts = r.timestamp ?? now;
    if (ts > maxTimestamp) maxTimestamp = ts;
    const key = toBuffer(r.key);
    const value = toBuffer(r.value);
    const headers = normaliseHeaders(r.headers);
    const timestampDelta = ts - baseTimestamp;
    const offsetDelta = r.offsetDelta ?? i;
    if (!Number.isSafeInteger(offsetDelta) || offsetDelta < 0 || offsetDelta > 0x7fff_ffff || offsetDelta <= lastOffsetDelta) {
      throw new MqError('INVALID_RECORD', `record offset delta ${offsetDelta} must be an int32 above the previous one (${lastOffsetDelta})`);
    }
    lastOffsetDelta = offsetDelta;
    let bodySize = 1 + varintSize(timestampDelta) + varintSize(offsetDelta) + lenSize(key) + lenSize(value);
    bodySize += varintSize(headers.length);
    for (const [hk, hv] of headers) bodySize += lenSize(hk) + lenSize(hv);
    prepared[i] = { key, value, headers, timestampDelta, offsetDelta, bodySize };
    total += varintSize(bodySize) + bodySize;
  }
  const out = Buffer.allocUnsafe(total);
  let pos = 0;
  for (let i = 0; i < prepared.length; i++) {
    const p = prepared[i]!;
    pos = writeVarint(out, pos, p.bodySize);
    out[pos++] = 0; // record attributes (unused)
    pos = writeVarint(out, pos, p.timestampDelta);
    pos = writeVarint(out, pos, p.offsetDelta);
    pos = writeBytes(out, pos, p.key);
    pos = writeBytes(out, pos, p.value);
    pos = writeVarint(out, pos, p.headers.length);
    for (const [hk, hv] of p.headers) {
      pos = writeBytes(out, pos, hk);
      pos = writeBytes(out, pos, hv);
    }
  }
  return { section: out, baseTimestamp, maxTimestamp, lastOffsetDelta };
}

function writeBytes(out: Buffer, pos: number, b: Buffer | null): number {
  if (b === null) return writeVarint(out, pos, -1);
  pos = writeVarint(out, pos, b.length);
  if (b.length > 0) {
    if (b.length < 64) for (let i = 0; i < b.length; i++) out[pos + i] = b[i]!;
    else b.copy(out, pos);
  }
  return pos + b.length;
}

function assemble(
  section: Buffer,
  count: number,
  baseTimestamp: number,
  maxTimestamp: number,
  recordsLastOffsetDelta: number,
  options: EncodeBatchOptions,
): Buffer {
  const lastOffsetDelta = options.lastOffsetDelta ?? recordsLastOffsetDelta;
  if (!Number.isSafeInteger(lastOffsetDelta) || lastOffsetDelta < recordsLastOffsetDelta || lastOffsetDelta > 0x7fff_ffff) {
    throw new MqError('INVALID_RECORD', `last offset delta ${lastOffsetDelta} is below the last record's (${recordsLastOffsetDelta})`);
  }
  const codec = options.compression ?? 'none';
  let attributes = codecId(codec) & ATTR_COMPRESSION_MASK;
  if (options.timestampType === 'log-append') attributes |= ATTR_LOG_APPEND_TIME;
  if (options.transactional) attributes |= ATTR_TRANSACTIONAL;
  if (options.control) attributes |= ATTR_CONTROL;
  const size = HEADER_SIZE + section.length;
  const buf = Buffer.allocUnsafe(size);
  writeInt64(buf, OFF_BASE_OFFSET, options.baseOffset ?? 0);
  buf.writeInt32BE(size - LOG_OVERHEAD, OFF_BATCH_LENGTH);
  buf.writeInt32BE(options.partitionLeaderEpoch ?? -1, OFF_LEADER_EPOCH);
  buf.writeInt8(MAGIC, OFF_MAGIC);
  buf.writeInt16BE(attributes, OFF_ATTRIBUTES);
  buf.writeInt32BE(lastOffsetDelta, OFF_LAST_OFFSET_DELTA);
  writeInt64(buf, OFF_BASE_TIMESTAMP, baseTimestamp);
  writeInt64(buf, OFF_MAX_TIMESTAMP, maxTimestamp);
  writeInt64(buf, OFF_PRODUCER_ID, options.producerId ?? -1);
  buf.writeInt16BE(options.producerEpoch ?? -1, OFF_PRODUCER_EPOCH);
  buf.writeInt32BE(options.baseSequence ?? -1, OFF_BASE_SEQUENCE);
  buf.writeInt32BE(count, OFF_RECORD_COUNT);
  section.copy(buf, HEADER_SIZE);
  buf.writeUInt32BE(computeBatchCrc(buf, 0, size), OFF_CRC);
  return buf;
}

/**
 * Encodes records into one batch. Synchronous for every codec but zstd
 * (use `encodeBatch` for that).
 */
export function encodeBatchSync(records: readonly RecordInput[], options: EncodeBatchOptions = {}): Buffer {
  const { section, baseTimestamp, maxTimestamp, lastOffsetDelta } = encodeRecordsSection(records, options.now ?? Date.now());
  const body = compressSync(options.compression ?? 'none', section);
  return assemble(body, records.length, baseTimestamp, maxTimestamp, lastOffsetDelta, options);
}

/** Encodes records into one batch, with any codec. */
export async function encodeBatch(records: readonly RecordInput[], options: EncodeBatchOptions = {}): Promise<Buffer> {
  const { section, baseTimestamp, maxTimestamp, lastOffsetDelta } = encodeRecordsSection(records, options.now ?? Date.now());
  const body = await compress(options.compression ?? 'none', section);
  return assemble(body, records.length, baseTimestamp, maxTimestamp, lastOffsetDelta, options);
}

function decodeRecordsSection(section: Buffer, h: BatchHeader): DecodedRecord[] {
  const r = new VarintReader(section, 0, section.length);
  const out: DecodedRecord[] = new Array(h.recordCount);
  const logAppend = (h.attributes & ATTR_LOG_APPEND_TIME) !== 0;
  for (let i = 0; i < h.recordCount; i++) {
    const len = r.varint();
    const recordEnd = r.pos + len;
    if (len < 0 || recordEnd > section.length) {
      throw new MqError('CORRUPT_MESSAGE', `record ${i} length ${len} does not fit the batch`);
    }
    r.pos++; // attributes
    const timestampDelta = r.varint();
    const offsetDelta = r.varint();
    const key = r.bytes(r.varint());
    const value = r.bytes(r.varint());
    const hc = r.varint();
    if (hc < 0 || hc > len) throw new MqError('CORRUPT_MESSAGE', `record ${i} has an invalid header count ${hc}`);
    const headers: RecordHeader[] = new Array(hc);
    for (let j = 0; j < hc; j++) {
      const hk = r.bytes(r.varint());
      if (hk === null) throw new MqError('CORRUPT_MESSAGE', `record ${i} has a null header key`);
      headers[j] = { key: hk.toString('utf8'), value: r.bytes(r.varint()) };
    }
    if (r.pos !== recordEnd) throw new MqError('CORRUPT_MESSAGE', `record ${i} length does not match its fields`);
    out[i] = {
      offset: h.baseOffset + offsetDelta,
      timestamp: logAppend ? h.maxTimestamp : h.baseTimestamp + timestampDelta,
      key,
      value,
      headers,
    };
  }
  if (r.pos !== section.length) throw new MqError('CORRUPT_MESSAGE', 'trailing bytes after the last record');
  return out;
}

export interface DecodeOptions {
  /** Verify the CRC before decoding (default true). */
  verifyCrc?: boolean;
  /** Largest records section a compressed batch may inflate to (default DEFAULT_MAX_DECOMPRESSED_BYTES): RECORD_TOO_LARGE past it. */
  maxDecompressedBytes?: number;
}

function prepareDecode(buf: Buffer, pos: number, options: DecodeOptions) {
  const header = options.verifyCrc === false ? readBatchHeader(buf, pos) : validateBatch(buf, pos);
  const size = header.batchLength + LOG_OVERHEAD;
  const body = buf.subarray(pos + HEADER_SIZE, pos + size);
  return { header, body };
}

/** Decodes the batch at `pos` (every codec but zstd). Keys and values are views into `buf` when uncompressed. */
export function decodeBatchSync(buf: Buffer, pos = 0, options: DecodeOptions = {}): DecodedBatch {
  const { header, body } = prepareDecode(buf, pos, options);
  const section = decompressSync(compressionOf(header), body, options.maxDecompressedBytes);
  return { header, records: decodeRecordsSection(section, header) };
}

/** Decodes the batch at `pos`, with any codec. */
export async function decodeBatch(buf: Buffer, pos = 0, options: DecodeOptions = {}): Promise<DecodedBatch> {
  const { header, body } = prepareDecode(buf, pos, options);
  const section = await decompress(compressionOf(header), body, options.maxDecompressedBytes);
  return { header, records: decodeRecordsSection(section, header) };
}

