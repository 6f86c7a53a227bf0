/**
 * Header-only checks and patches on produced record batches (FORMAT.md):
 * every batch's length, magic, counts and CRC-32C are checked, batches must
 * fill the buffer exactly (a lying length is caught here), and no record is
 * ever decoded. For topics with LogAppendTime the broker stamps the batch's
 * max timestamp and timestamp-type bit and recomputes the CRC, as Kafka does.
 */
import { MqError } from '@mq/protocol/errors';
import {
  ATTR_CONTROL,
  ATTR_LOG_APPEND_TIME,
  ATTR_TRANSACTIONAL,
  OFF_ATTRIBUTES,
  OFF_CRC,
  OFF_MAX_TIMESTAMP,
  computeBatchCrc,
  validateBatch,
  writeInt64,
} from '@mq/protocol/batch';

export interface CheckedBatches {
  batches: number;
  records: number;
  bytes: number;
  /** Start of each batch in the buffer. */
  positions: number[];
}

export function checkProducedBatches(buf: Buffer, maxBatchBytes: number): CheckedBatches {
  if (buf.length === 0) throw new MqError('CORRUPT_MESSAGE', 'the produce data holds no record batch');
  const positions: number[] = [];
  let records = 0;
  let pos = 0;
  while (pos < buf.length) {
    // A length that runs past the data is a lie (corrupt), whatever the size limit says.
    if (buf.length - pos >= 12 && pos + 12 + buf.readInt32BE(pos + 8) > buf.length) {
      throw new MqError('CORRUPT_MESSAGE', `the batch at byte ${pos} says ${buf.readInt32BE(pos + 8) + 12} bytes but only ${buf.length - pos} are there`);
    }
    const h = validateBatch(buf, pos, { maxBatchBytes });
    if (h.attributes & (ATTR_CONTROL | ATTR_TRANSACTIONAL)) {
      throw new MqError('INVALID_RECORD', 'transactional and control batches are not supported by this broker');
    }
    if (h.recordCount === 0) throw new MqError('INVALID_RECORD', `the batch at byte ${pos} holds no records`);
    positions.push(pos);
    records += h.recordCount;
    pos += h.batchLength + 12;
  }
  return { batches: positions.length, records, bytes: buf.length, positions };
}

/** Marks every batch as LogAppendTime with `now` as its max timestamp, and fixes the CRCs. */
export function stampLogAppendTime(buf: Buffer, checked: CheckedBatches, now: number): void {
  for (const pos of checked.positions) {
    const size = buf.readInt32BE(pos + 8) + 12;
    buf.writeInt16BE(buf.readInt16BE(pos + OFF_ATTRIBUTES) | ATTR_LOG_APPEND_TIME, pos + OFF_ATTRIBUTES);
    writeInt64(buf, pos + OFF_MAX_TIMESTAMP, now);
    buf.writeUInt32BE(computeBatchCrc(buf, pos, size), pos + OFF_CRC);
  }
}
