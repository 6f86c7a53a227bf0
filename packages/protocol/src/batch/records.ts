/**
 * Whole batches from records and back, for callers that hold a list of
 * records (the broker's HTTP API, compaction, coordinators, tests): the
 * same encoder (RecordBatchBuilder, into one buffer sized exactly) and
 * decoder (scanRecord) as the client's hot paths. Keys and values decode as
 * views into the batch (no copies).
 */
import { Buffer } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import { RecordBatchBuilder, measureRecord, measuredSize, type Bytes, type HeadersInput } from './builder.js';
import type { CompressionCodec } from './compression.js';
import { HEADER_SIZE, readBatchHeader, validateBatch, type BatchHeader, type TimestampType } from './header.js';
import { RecordSection, RecordView, recordsSection, recordsSectionSync, scanRecord, scanned, type RecordHeader } from './reader.js';

export type { Bytes, RecordHeader };

export interface RecordInput {
  key?: Bytes | null;
  value: Bytes | null;
  headers?: HeadersInput;
  /** Create time in ms since the epoch; defaults to the batch's `now`. */
  timestamp?: number;
  /**
   * Offset delta within the batch; defaults to the record's index. Deltas must
   * increase. Set by log compaction, which keeps the surviving records' offsets.
   */
  offsetDelta?: number;
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


/** A builder holding `records`, in one buffer of exactly their size. */
function build(records: readonly RecordInput[], options: EncodeBatchOptions): RecordBatchBuilder {
  if (records.length === 0) throw new MqError('INVALID_RECORD', 'a batch needs at least one record');
  const now = options.now ?? Date.now();
  let baseTimestamp = Infinity;
  for (const r of records) {
    const ts = r?.timestamp ?? now;
    if (!Number.isSafeInteger(ts) || ts < -1) throw new MqError('INVALID_TIMESTAMP', `invalid record timestamp ${ts}`);
    if (ts < baseTimestamp) baseTimestamp = ts;
  }
  let size = HEADER_SIZE;
  let lastOffsetDelta = -1;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const offsetDelta = r.offsetDelta ?? i;
    if (!Number.isSafeInteger(offsetDelta) || offsetDelta < 0 || offsetDelta > 0x7fff_ffff || offsetDelta <= lastOffsetDelta) {
      throw new MqError('INVALID_RECORD', `record offset delta ${offsetDelta} must be an int32 above the previous one (${lastOffsetDelta})`);
    }
    lastOffsetDelta = offsetDelta;
    measureRecord(r);
    size += measuredSize((r.timestamp ?? now) - baseTimestamp, offsetDelta);
  }
  const b = new RecordBatchBuilder(Buffer.allocUnsafe(size), baseTimestamp);
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    measureRecord(r);
    b.tryWrite(r, r.timestamp ?? now, r.offsetDelta ?? i);
  }
  const last = options.lastOffsetDelta ?? lastOffsetDelta;
  if (!Number.isSafeInteger(last) || last < lastOffsetDelta || last > 0x7fff_ffff) {
    throw new MqError('INVALID_RECORD', `last offset delta ${last} is below the last record's (${lastOffsetDelta})`);
  }
  b.lastOffsetDelta = last;
  b.baseOffset = options.baseOffset ?? 0;
  b.partitionLeaderEpoch = options.partitionLeaderEpoch ?? -1;
  b.logAppendTime = options.timestampType === 'log-append';
  b.transactional = options.transactional ?? false;
  b.control = options.control ?? false;
  b.producerId = options.producerId ?? -1;
  b.producerEpoch = options.producerEpoch ?? -1;
  b.baseSequence = options.baseSequence ?? -1;
  return b;
}

/**
 * Encodes records into one batch. Synchronous for every codec but zstd
 * (use `encodeBatch` for that).
 */
export function encodeBatchSync(records: readonly RecordInput[], options: EncodeBatchOptions = {}): Buffer {
  return build(records, options).closeSync(options.compression ?? 'none');
}

/** Encodes records into one batch, with any codec. */
export async function encodeBatch(records: readonly RecordInput[], options: EncodeBatchOptions = {}): Promise<Buffer> {
  return build(records, options).close(options.compression ?? 'none');
}

/** Every record of a records section, checked, as plain objects (keys and values are views). */
function decodeRecordsSection(section: Buffer, h: BatchHeader): DecodedRecord[] {
  const s = new RecordSection(section, h);
  const out: DecodedRecord[] = new Array(h.recordCount);
  let pos = 0;
  for (let i = 0; i < h.recordCount; i++) {
    try {
      pos = scanRecord(section, pos, section.length);
    } catch (err) {
      throw new MqError('CORRUPT_MESSAGE', `record ${i}: ${(err as Error).message}`, { cause: err });
    }
    const r = new RecordView(s, scanned.start, h.baseOffset + scanned.offsetDelta, scanned.valuePos);
    out[i] = { offset: r.offset, timestamp: r.timestamp, key: r.key, value: r.value, headers: r.headers.slice() };
  }
  if (pos !== section.length) throw new MqError('CORRUPT_MESSAGE', 'trailing bytes after the last record');
  return out;
}

export interface DecodeOptions {
  /** Verify the CRC before decoding (default true). */
  verifyCrc?: boolean;
  /** Largest records section a compressed batch may inflate to (default DEFAULT_MAX_DECOMPRESSED_BYTES): RECORD_TOO_LARGE past it. */
  maxDecompressedBytes?: number;
}

function readHeader(buf: Buffer, pos: number, options: DecodeOptions): BatchHeader {
  return options.verifyCrc === false ? readBatchHeader(buf, pos) : validateBatch(buf, pos);
}

/** Decodes the batch at `pos` (every codec but zstd). Keys and values are views into `buf` when uncompressed. */
export function decodeBatchSync(buf: Buffer, pos = 0, options: DecodeOptions = {}): DecodedBatch {
  const header = readHeader(buf, pos, options);
  const section = recordsSectionSync(buf, pos, header, options.maxDecompressedBytes);
  return { header, records: decodeRecordsSection(section, header) };
}

/** Decodes the batch at `pos`, with any codec. */
export async function decodeBatch(buf: Buffer, pos = 0, options: DecodeOptions = {}): Promise<DecodedBatch> {
  const header = readHeader(buf, pos, options);
  const section = await recordsSection(buf, pos, header, options.maxDecompressedBytes);
  return { header, records: decodeRecordsSection(section, header) };
}
