/**
 * Valid record batches with header fields changed and the CRC recomputed, so the
 * broker's checks past the CRC (header consistency, framing, codec) are what is exercised.
 */
import {
  OFF_ATTRIBUTES,
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
  HEADER_SIZE,
  computeBatchCrc,
} from '@mq/protocol/batch';
import { INT32_EDGES } from './mutate-values.mjs';

const I64_EDGES = [2n ** 63n - 1n, -(2n ** 63n), 2n ** 53n + 1n, -1n, 0n, BigInt(Date.now() + 10 * 365 * 86_400_000)];

const FIELDS = [
  { name: 'lastOffsetDelta', off: OFF_LAST_OFFSET_DELTA, size: 4 },
  { name: 'recordCount', off: OFF_RECORD_COUNT, size: 4 },
  { name: 'baseTimestamp', off: OFF_BASE_TIMESTAMP, size: 8 },
  { name: 'maxTimestamp', off: OFF_MAX_TIMESTAMP, size: 8 },
  { name: 'producerId', off: OFF_PRODUCER_ID, size: 8 },
  { name: 'producerEpoch', off: OFF_PRODUCER_EPOCH, size: 2 },
  { name: 'baseSequence', off: OFF_BASE_SEQUENCE, size: 4 },
  { name: 'attributes', off: OFF_ATTRIBUTES, size: 2 },
  { name: 'partitionLeaderEpoch', off: OFF_LEADER_EPOCH, size: 4 },
  { name: 'batchLength', off: OFF_BATCH_LENGTH, size: 4 },
  { name: 'magic', off: OFF_MAGIC, size: 1 },
];

/** Returns [mutated batch bytes, description], or undefined when `records` is not a whole batch. */
export function mutateBatch(rng, records) {
  const buf = Buffer.from(records);
  if (buf.length < HEADER_SIZE) return undefined;
  const size = buf.readInt32BE(OFF_BATCH_LENGTH) + 12;
  if (size !== buf.length) return undefined;
  const f = rng.pick(FIELDS);
  let v;
  if (f.size === 8) {
    v = rng.pick(I64_EDGES);
    buf.writeBigInt64BE(v, f.off);
  } else if (f.size === 4) {
    v = rng.pick([...INT32_EDGES, buf.readInt32BE(f.off) + 1, buf.readInt32BE(f.off) - 1]) | 0;
    buf.writeInt32BE(v, f.off);
  } else if (f.size === 2) {
    v = rng.pick([-1, 0, 1, 2, 3, 4, 5, 6, 7, 0x10, 0x20, 0x7fff, -0x8000]);
    buf.writeInt16BE(v, f.off);
  } else {
    v = rng.pick([0, 1, 3, 255]);
    buf.writeUInt8(v, f.off);
  }
  const crcSpan = Math.min(buf.length, Math.max(HEADER_SIZE, buf.readInt32BE(OFF_BATCH_LENGTH) + 12));
  buf.writeUInt32BE(computeBatchCrc(buf, 0, crcSpan), OFF_CRC);
  return [buf, `batch ${f.name}=${String(v)} crc recomputed`];
}
