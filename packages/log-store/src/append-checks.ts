/**
 * Argument checks and the split-and-validate step of an append, done before
 * an append takes any lock; and the mapping of file-system errors to
 * STORAGE_ERROR.
 */
import { HEADER_SIZE, LOG_OVERHEAD, MAGIC, readBatchHeader, validateBatch, type BatchHeader } from '@mq/protocol/batch';
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
}

/** Splits and checks the batches of one append. Throws CORRUPT_MESSAGE / RECORD_TOO_LARGE / INVALID_RECORD. */
export function parseAppend(buf: Buffer, validate: boolean, maxBatchBytes: number): ParsedBatch[] {
  if (!Buffer.isBuffer(buf)) throw new MqError('INVALID_ARGUMENT', 'append() takes a Buffer of encoded batches');
  const out: ParsedBatch[] = [];
  let pos = 0;
  while (pos < buf.length) {
    if (buf.length - pos < HEADER_SIZE) {
      throw new MqError('CORRUPT_MESSAGE', `${buf.length - pos} trailing bytes after batch ${out.length} are not a batch`);
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
    const size = header.batchLength + LOG_OVERHEAD;
    out.push({ position: pos, size, header });
    pos += size;
  }
  if (out.length === 0) throw new MqError('INVALID_RECORD', 'append() needs at least one batch');
  return out;
}
