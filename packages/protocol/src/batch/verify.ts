/**
 * What a broker verifies of a produced batch before storing it, so that
 * nothing it acknowledges is unreadable by a conforming reader (as Kafka's
 * LogValidator does on the leader): the header is consistent (format v2),
 * and the records section — decompressed within a bound — holds exactly the
 * records the header declares, each well framed. Records are walked, never
 * materialised.
 */
import { MqError } from '../errors.js';
import { ATTR_COMPRESSION_MASK, ATTR_CONTROL, ATTR_LOG_APPEND_TIME, ATTR_TRANSACTIONAL, HEADER_SIZE, LOG_OVERHEAD, type BatchHeader } from './header.js';
import { recordsSection, scanRecord, scanned } from './reader.js';

/** The smallest record: length, attributes, timestamp delta, offset delta, key, value, header count (one byte each). */
export const MIN_RECORD_BYTES = 7;

function invalid(position: number, why: string): MqError {
  return new MqError('INVALID_RECORD', `the batch at byte ${position} is invalid: ${why}`, { position });
}

/**
 * Header checks of a batch a producer wrote (or, with `coordinator`, a
 * coordinator: markers, and transactional batches without a sequence) (the CRC, length and magic were
 * checked by validateBatch): at least one record, lastOffsetDelta equal to
 * recordCount - 1, producer fields consistent, timestamps sane, and a record
 * count the bytes can hold. Throws INVALID_RECORD.
 */
export function checkProducedHeader(h: BatchHeader, position: number, maxDecompressedBytes: number, options: { coordinator?: boolean; transactional?: boolean } = {}): void {
  if (h.attributes & ATTR_CONTROL && !options.coordinator) {
    throw invalid(position, 'control batches (transaction markers) are written by the transaction coordinator, not accepted from producers');
  }
  // As Kafka: transactional records only in a produce request that names its transactional id (authorized for
  // it). Otherwise any writer could open a "transaction" no coordinator knows, and read_committed readers of the
  // partition would wait at its first offset for ever.
  if (h.attributes & ATTR_TRANSACTIONAL && !options.coordinator && !options.transactional) {
    throw invalid(position, 'a transactional batch must come in a produce request with its transactional id (a transactional producer)');
  }
  if (h.attributes & ATTR_TRANSACTIONAL && h.producerId < 0) {
    throw invalid(position, 'a transactional batch needs a producer id (InitProducerId with a transactional id)');
  }
  if (h.recordCount < 1) throw invalid(position, `it holds ${h.recordCount} records`);
  if (h.lastOffsetDelta !== h.recordCount - 1) {
    throw invalid(position, `last offset delta ${h.lastOffsetDelta} does not match its ${h.recordCount} records`);
  }
  const sectionBytes = h.batchLength + LOG_OVERHEAD - HEADER_SIZE;
  const room = (h.attributes & ATTR_COMPRESSION_MASK) === 0 ? sectionBytes : maxDecompressedBytes;
  if (h.recordCount > room / MIN_RECORD_BYTES) {
    throw invalid(position, `${h.recordCount} records cannot fit in ${room} bytes`);
  }
  if (h.producerId < -1) throw invalid(position, `producer id ${h.producerId}`);
  // Without a producer id the epoch and sequence mean nothing and are not checked, as in Kafka
  // (kafkajs's non-idempotent producer writes epoch 0 and sequence 0 with producer id -1).
  if (h.producerId >= 0 && (h.producerEpoch < 0 || (h.baseSequence < 0 && !options.coordinator))) {
    throw invalid(position, `producer id ${h.producerId} needs an epoch and a base sequence (got ${h.producerEpoch} and ${h.baseSequence})`);
  }
  if (h.baseTimestamp < -1) throw invalid(position, `base timestamp ${h.baseTimestamp}`);
  if (!(h.attributes & ATTR_LOG_APPEND_TIME) && h.maxTimestamp < h.baseTimestamp) {
    throw invalid(position, `max timestamp ${h.maxTimestamp} is below the base timestamp ${h.baseTimestamp}`);
  }
}

/**
 * Walks the records of an uncompressed records section: exactly
 * `recordCount` records filling it, each record's fields inside its length,
 * offset deltas 0, 1, 2… Throws INVALID_RECORD.
 */
export function checkRecordsFraming(section: Buffer, start: number, end: number, h: BatchHeader, position: number): void {
  let pos = start;
  for (let i = 0; i < h.recordCount; i++) {
    if (pos >= end) throw invalid(position, `it holds ${i} records, its header says ${h.recordCount}`);
    try {
      pos = scanRecord(section, pos, end);
    } catch (err) {
      throw invalid(position, `record ${i}: ${(err as Error).message}`);
    }
    if (scanned.offsetDelta !== i) throw invalid(position, `record ${i} has offset delta ${scanned.offsetDelta}`);
  }
  if (pos !== end) throw invalid(position, `${end - pos} bytes follow its last record`);
}

function framingError(err: unknown, position: number): MqError {
  const code = (err as { code?: string }).code;
  if (code === 'INVALID_RECORD' || code === 'RECORD_TOO_LARGE') return err as MqError;
  // A varint that runs off its record, or data that does not decompress: the sender's bytes, not the wire's.
  return new MqError('INVALID_RECORD', `the batch at byte ${position} is invalid: ${(err as Error).message}`, { position, cause: err });
}

/** Whether verifyProducedRecords must decompress (and may await) for this batch. */
export function isCompressed(h: BatchHeader): boolean {
  return (h.attributes & ATTR_COMPRESSION_MASK) !== 0;
}

/** checkRecordsFraming() of an uncompressed batch at `position` in `buf`. */
export function verifyUncompressedRecords(buf: Buffer, position: number, h: BatchHeader): void {
  try {
    checkRecordsFraming(buf, position + HEADER_SIZE, position + h.batchLength + LOG_OVERHEAD, h, position);
  } catch (err) {
    throw framingError(err, position);
  }
}

/**
 * Decompresses the batch at `position` (never past `maxDecompressedBytes`:
 * RECORD_TOO_LARGE) and checks its records' framing. Throws INVALID_RECORD.
 */
export async function verifyCompressedRecords(buf: Buffer, position: number, h: BatchHeader, maxDecompressedBytes: number): Promise<void> {
  try {
    const section = await recordsSection(buf, position, h, maxDecompressedBytes);
    checkRecordsFraming(section, 0, section.length, h, position);
  } catch (err) {
    throw framingError(err, position);
  }
}
