/**
 * Argument checks and the split-and-validate step of an append, done before
 * an append takes any lock; and the mapping of file-system errors to
 * STORAGE_ERROR.
 */
import {
  ATTR_LOG_APPEND_TIME,
  HEADER_SIZE,
  OFF_ATTRIBUTES,
  LOG_OVERHEAD,
  MAGIC,
  checkProducedHeader,
  controlTypeOf,
  isCompressed,
  isControl,
  readBatchHeader,
  validateBatch,
  verifyCompressedRecords,
  verifyUncompressedRecords,
  type BatchHeader,
  type ControlType,
} from '@mq/protocol/batch';
import { MqError, isMqError } from '@mq/protocol/errors';

export function toStorageError(op: string, err: unknown, extra: Record<string, unknown> = {}): MqError {
  if (isMqError(err)) return err as MqError;
  const errno = (err as NodeJS.ErrnoException)?.code;
  return new MqError('STORAGE_ERROR', `${op} failed: ${(err as Error)?.message ?? String(err)}`, { cause: err, errno, ...extra });
}

export function checkInt(name: string, value: number, min = 0): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new MqError('INVALID_ARGUMENT', `${name} must be an integer >= ${min}, got ${String(value)}`);
  }
}

export interface ParsedBatch {
  position: number;
  size: number;
  header: BatchHeader;
  /** A control batch's marker type (commit or abort), read from its one record before anything is written. */
  control?: ControlType;
}

/**
 * How much of each batch an append checks: `produced` (a leader's append of
 * what a producer sent: the CRC, the header's consistency and every record's
 * framing, as Kafka's LogValidator), `crc` (length, magic, counts and CRC:
 * a follower copying the leader) or `header` (length and magic only: the
 * caller vouches for the bytes).
 */
export type AppendValidation = 'produced' | 'crc' | 'header';

export interface AppendLimits {
  maxBatchBytes: number;
  maxDecompressedBytes: number;
}

/**
 * Splits and checks the batches of one append, before anything changes.
 * Throws CORRUPT_MESSAGE / RECORD_TOO_LARGE / INVALID_RECORD. Compressed
 * produced batches still need verifyCompressed() (it may await).
 */
export function parseAppend(buf: Buffer, validation: AppendValidation, limits: AppendLimits, producer: { coordinator?: boolean; transactional?: boolean } = {}): ParsedBatch[] {
  const { maxBatchBytes } = limits;
  const validate = validation !== 'header';
  if (!Buffer.isBuffer(buf)) throw new MqError('INVALID_ARGUMENT', 'append() takes a Buffer of encoded batches');
  const out: ParsedBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < HEADER_SIZE) {
      throw new MqError('CORRUPT_MESSAGE', `${buf.length - pos} trailing bytes after batch ${out.length} are not a batch`);
    }
    // A length that runs past the data is a lie (corrupt), whatever the size limit says.
    const claimed = buf.readInt32BE(pos + 8) + LOG_OVERHEAD;
    if (pos + claimed > buf.length) {
      throw new MqError('CORRUPT_MESSAGE', `the batch at byte ${pos} says ${claimed} bytes but only ${buf.length - pos} are there`);
    }
    let header: BatchHeader;
    if (validate) {
      header = validateBatch(buf, pos, { maxBatchBytes });
    } else {
      header = readBatchHeader(buf, pos);
      const size = header.batchLength + LOG_OVERHEAD;
      if (header.batchLength < HEADER_SIZE - LOG_OVERHEAD) throw new MqError('CORRUPT_MESSAGE', `batch length ${header.batchLength} is shorter than a header`);
      if (size > maxBatchBytes) {
        throw new MqError('RECORD_TOO_LARGE', `batch of ${size} bytes is over the limit of ${maxBatchBytes}`, { size, limit: maxBatchBytes });
      }
      if (pos + size > buf.length) throw new MqError('CORRUPT_MESSAGE', `batch length says ${size} bytes but only ${buf.length - pos} are there`);
      if (header.magic !== MAGIC) throw new MqError('CORRUPT_MESSAGE', `unknown batch magic ${header.magic}`);
      if (header.lastOffsetDelta < 0) throw new MqError('CORRUPT_MESSAGE', `negative last offset delta ${header.lastOffsetDelta}`);
    }
    if (validation === 'produced') {
      checkProducedHeader(header, pos, limits.maxDecompressedBytes, producer);
      if (!isCompressed(header)) verifyUncompressedRecords(buf, pos, header);
    }
    const size = header.batchLength + LOG_OVERHEAD;
    // A control batch must be a well-formed marker (INVALID_RECORD otherwise), checked here so nothing is written first.
    if (isControl(header)) out.push({ position: pos, size, header, control: controlTypeOf(buf, pos) });
    else out.push({ position: pos, size, header });
    pos += size;
  }
  if (out.length === 0) throw new MqError('INVALID_RECORD', 'append() needs at least one batch');
  return out;
}

/** Whether a produced append holds compressed batches, which verifyCompressed() must check before anything is written. */
export function needsDecompression(parsed: readonly ParsedBatch[], validation: AppendValidation): boolean {
  if (validation !== 'produced') return false;
  for (const b of parsed) if (isCompressed(b.header)) return true;
  return false;
}

/** Decompresses each compressed batch within the bound and checks its records (INVALID_RECORD / RECORD_TOO_LARGE). */
export async function verifyCompressed(buf: Buffer, parsed: readonly ParsedBatch[], maxDecompressedBytes: number): Promise<void> {
  for (const b of parsed) if (isCompressed(b.header)) await verifyCompressedRecords(buf, b.position, b.header, maxDecompressedBytes);
}

/** Marks every batch LogAppendTime (stampBatches then writes the time and the CRC). */
export function markLogAppendTime(buf: Buffer, parsed: readonly ParsedBatch[]): void {
  for (const b of parsed) {
    b.header.attributes |= ATTR_LOG_APPEND_TIME;
    buf.writeInt16BE(b.header.attributes, b.position + OFF_ATTRIBUTES);
  }
}
