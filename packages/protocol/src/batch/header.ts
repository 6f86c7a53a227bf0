/**
 * The fixed 61-byte batch header and the header-only path the broker uses:
 * read, validate (length, magic, CRC-32C) and patch base offset / leader
 * epoch in place without touching the records. See FORMAT.md.
 */
import { crc32c } from '@mq/protocol/platform';
import { MqError } from '../errors.js';
import { codecFromId, type CompressionCodec } from './compression.js';
import { readInt64, writeInt64 } from './varint.js';

export const MAGIC = 2;
export const HEADER_SIZE = 61;
/** Bytes before the `batchLength` field's coverage starts (baseOffset + batchLength). */
export const LOG_OVERHEAD = 12;

export const OFF_BASE_OFFSET = 0;
export const OFF_BATCH_LENGTH = 8;
export const OFF_LEADER_EPOCH = 12;
export const OFF_MAGIC = 16;
export const OFF_CRC = 17;
export const OFF_ATTRIBUTES = 21;
export const OFF_LAST_OFFSET_DELTA = 23;
export const OFF_BASE_TIMESTAMP = 27;
export const OFF_MAX_TIMESTAMP = 35;
export const OFF_PRODUCER_ID = 43;
export const OFF_PRODUCER_EPOCH = 51;
export const OFF_BASE_SEQUENCE = 53;
export const OFF_RECORD_COUNT = 57;

export const ATTR_COMPRESSION_MASK = 0x07;
export const ATTR_LOG_APPEND_TIME = 0x08;
export const ATTR_TRANSACTIONAL = 0x10;
export const ATTR_CONTROL = 0x20;

export type TimestampType = 'create' | 'log-append';

export interface BatchHeader {
  baseOffset: number;
  /** Bytes after the batchLength field: the whole batch is `batchLength + 12`. */
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: number;
  maxTimestamp: number;
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

/** Total size in bytes of the batch a header describes. */
export function batchSize(h: Pick<BatchHeader, 'batchLength'>): number {
  return h.batchLength + LOG_OVERHEAD;
}

export function lastOffset(h: Pick<BatchHeader, 'baseOffset' | 'lastOffsetDelta'>): number {
  return h.baseOffset + h.lastOffsetDelta;
}

export function compressionOf(h: Pick<BatchHeader, 'attributes'>): CompressionCodec {
  return codecFromId(h.attributes & ATTR_COMPRESSION_MASK);
}

export function timestampTypeOf(h: Pick<BatchHeader, 'attributes'>): TimestampType {
  return h.attributes & ATTR_LOG_APPEND_TIME ? 'log-append' : 'create';
}

export function isTransactional(h: Pick<BatchHeader, 'attributes'>): boolean {
  return (h.attributes & ATTR_TRANSACTIONAL) !== 0;
}

export function isControl(h: Pick<BatchHeader, 'attributes'>): boolean {
  return (h.attributes & ATTR_CONTROL) !== 0;
}


/**
 * Reads the header at `pos` without checking the CRC. Throws CORRUPT_MESSAGE
 * when fewer than HEADER_SIZE bytes remain.
 */
export function readBatchHeader(buf: Buffer, pos = 0): BatchHeader {
  if (buf.length - pos < HEADER_SIZE) {
    throw new MqError('CORRUPT_MESSAGE', `batch header needs ${HEADER_SIZE} bytes, ${buf.length - pos} left`);
  }
  return {
    baseOffset: readInt64(buf, pos + OFF_BASE_OFFSET),
    batchLength: buf.readInt32BE(pos + OFF_BATCH_LENGTH),
    partitionLeaderEpoch: buf.readInt32BE(pos + OFF_LEADER_EPOCH),
    magic: buf.readInt8(pos + OFF_MAGIC),
    crc: buf.readUInt32BE(pos + OFF_CRC),
    attributes: buf.readInt16BE(pos + OFF_ATTRIBUTES),
    lastOffsetDelta: buf.readInt32BE(pos + OFF_LAST_OFFSET_DELTA),
    baseTimestamp: readInt64(buf, pos + OFF_BASE_TIMESTAMP),
    maxTimestamp: readInt64(buf, pos + OFF_MAX_TIMESTAMP),
    producerId: readInt64(buf, pos + OFF_PRODUCER_ID),
    producerEpoch: buf.readInt16BE(pos + OFF_PRODUCER_EPOCH),
    baseSequence: buf.readInt32BE(pos + OFF_BASE_SEQUENCE),
    recordCount: buf.readInt32BE(pos + OFF_RECORD_COUNT),
  };
}

/** CRC-32C of a batch as stored: attributes through the end of the records. */
export function computeBatchCrc(buf: Buffer, pos: number, size: number): number {
  return crc32c(buf.subarray(pos + OFF_ATTRIBUTES, pos + size));
}

export interface ValidateOptions {
  /** Largest batch accepted, in bytes (whole batch, header included). */
  maxBatchBytes?: number;
  /** Skip the CRC check (the header checks still run). */
  skipCrc?: boolean;
}

/**
 * Validates the batch at `pos` as a broker must before appending: the length
 * is sane and fits in `buf`, the magic is known, the record count and last
 * offset delta agree, and the CRC-32C matches. Returns the header.
 */
export function validateBatch(buf: Buffer, pos = 0, options: ValidateOptions = {}): BatchHeader {
  const h = readBatchHeader(buf, pos);
  const size = batchSize(h);
  if (h.batchLength < HEADER_SIZE - LOG_OVERHEAD) {
    throw new MqError('CORRUPT_MESSAGE', `batch length ${h.batchLength} is shorter than a header`);
  }
  if (options.maxBatchBytes !== undefined && size > options.maxBatchBytes) {
    throw new MqError('RECORD_TOO_LARGE', `batch of ${size} bytes is over the limit of ${options.maxBatchBytes}`, {
      size,
      limit: options.maxBatchBytes,
    });
  }
  if (size > buf.length - pos) {
    throw new MqError('CORRUPT_MESSAGE', `batch length says ${size} bytes but only ${buf.length - pos} are there`);
  }
  if (h.magic !== MAGIC) throw new MqError('CORRUPT_MESSAGE', `unknown batch magic ${h.magic}`);
  if (h.recordCount < 0 || h.lastOffsetDelta < 0 || (h.recordCount > 0 && h.lastOffsetDelta < h.recordCount - 1)) {
    throw new MqError(
      'CORRUPT_MESSAGE',
      `record count ${h.recordCount} does not fit last offset delta ${h.lastOffsetDelta}`,
    );
  }
  if ((h.attributes & ATTR_COMPRESSION_MASK) > 4) {
    throw new MqError('UNSUPPORTED_COMPRESSION', `unknown compression codec id ${h.attributes & ATTR_COMPRESSION_MASK}`);
  }
  if (!options.skipCrc) {
    const crc = computeBatchCrc(buf, pos, size);
    if (crc !== h.crc) {
      throw new MqError('CORRUPT_MESSAGE', `batch CRC mismatch: stored ${h.crc.toString(16)}, computed ${crc.toString(16)}`);
    }
  }
  return h;
}

/** Patches the base offset in place (not covered by the CRC). */
export function setBaseOffset(buf: Buffer, pos: number, baseOffset: number): void {
  writeInt64(buf, pos + OFF_BASE_OFFSET, baseOffset);
}

/** Patches the partition leader epoch in place (not covered by the CRC). */
export function setPartitionLeaderEpoch(buf: Buffer, pos: number, epoch: number): void {
  buf.writeInt32BE(epoch, pos + OFF_LEADER_EPOCH);
}

export interface BatchSpan {
  /** Position of the batch in the buffer. */
  position: number;
  /** Whole size of the batch in bytes. */
  size: number;
  header: BatchHeader;
}

/**
 * Walks concatenated batches (as read from a segment or a fetch response),
 * reading headers only. Stops quietly at a trailing partial batch, as a
 * fetch may end in one; corrupt lengths throw.
 */
export function* iterateBatches(buf: Buffer, start = 0, end = buf.length): Generator<BatchSpan> {
  let pos = start;
  while (end - pos >= HEADER_SIZE) {
    const header = readBatchHeader(buf, pos);
    if (header.batchLength < HEADER_SIZE - LOG_OVERHEAD) {
      throw new MqError('CORRUPT_MESSAGE', `batch length ${header.batchLength} at ${pos} is shorter than a header`);
    }
    const size = batchSize(header);
    if (pos + size > end) return;
    yield { position: pos, size, header };
    pos += size;
  }
}
