/**
 * Key-based log compaction (cleanup.policy=compact): the latest record per
 * key survives; older records with the same key go; tombstones (null value)
 * go once older than `deleteRetentionMs`. Surviving records keep their
 * offsets: a batch that loses records is re-encoded with the same base
 * offset, last offset delta, producer fields and codec; a batch that loses
 * all of them is dropped (readers skip the gap). Transactional and control
 * batches are kept as they are and do not take part.
 */
import {
  HEADER_SIZE,
  LOG_OVERHEAD,
  compressionOf,
  decodeBatch,
  encodeBatch,
  isControl,
  isTransactional,
  iterateBatches,
  readBatchHeader,
  timestampTypeOf,
  type BatchHeader,
  type DecodedBatch,
} from '@mq/protocol/batch';
import { isMqError, type MqError } from '@mq/protocol/errors';
import { writeFully, type LogFile } from './file-system.js';
import type { Segment } from './segment.js';

const CHUNK_BYTES = 1024 * 1024;

export interface CompactOptions {
  /**
   * Only segments that end at or below this offset are cleaned, and only records below it decide
   * which older records go (pass the high watermark: records above it may still be truncated).
   * Default: all closed segments, by every record of the log.
   */
  upToOffset?: number;
  /** Time used for the tombstone delay; defaults to the log's clock. */
  now?: number;
  /** Bound on the keys held in memory; beyond it the newest records are not used to clean (safe, less thorough). Default 1,000,000. */
  maxKeys?: number;
}

export interface CompactionResult {
  cleanedSegments: number;
  removedRecords: number;
  removedBatches: number;
  /** Batches the cleaner could not decode (kept as they are; logged once per pass). */
  unreadableBatches: number;
  bytesBefore: number;
  bytesAfter: number;
}

export const DEFAULT_COMPACTION_MAX_KEYS = 1_000_000;

/** What the cleaner does with a batch it cannot decode: keeps it as it is, and says so once per pass. */
export interface UnreadableBatches {
  maxDecompressedBytes: number;
  onUnreadable(batch: { baseOffset: number; lastOffset: number }, err: MqError): void;
}

/** Decodes a batch for the cleaner; undefined when it cannot be read (the batch is then left untouched). */
async function decodeForCleaner(b: { buf: Buffer; position: number; header: BatchHeader }, unreadable: UnreadableBatches): Promise<DecodedBatch | undefined> {
  try {
    return await decodeBatch(b.buf, b.position, { maxDecompressedBytes: unreadable.maxDecompressedBytes });
  } catch (err) {
    if (!isMqError(err)) throw err;
    unreadable.onUnreadable({ baseOffset: b.header.baseOffset, lastOffset: b.header.baseOffset + b.header.lastOffsetDelta }, err as MqError);
    return undefined;
  }
}

/** Walks the whole batches of `seg` in [0, end), in chunks. */
export async function* segmentBatches(seg: Segment, end: number): AsyncGenerator<{ buf: Buffer; position: number; header: BatchHeader; size: number }> {
  let pos = 0;
  while (pos < end) {
    const chunk = await seg.readBytes(pos, Math.min(CHUNK_BYTES, end - pos));
    let consumed = 0;
    for (const span of iterateBatches(chunk)) {
      yield { buf: chunk, position: span.position, header: span.header, size: span.size };
      consumed = span.position + span.size;
    }
    if (consumed === 0) {
      // One batch bigger than the chunk.
      const header = readBatchHeader(await seg.readBytes(pos, HEADER_SIZE));
      const size = header.batchLength + LOG_OVERHEAD;
      if (size < HEADER_SIZE || pos + size > end) throw seg.corrupt(pos, `batch length ${header.batchLength} does not fit`);
      const whole = await seg.readBytes(pos, size);
      yield { buf: whole, position: 0, header, size };
      consumed = size;
    }
    pos += consumed;
  }
}

/**
 * Latest offset of every key in the given segments (up to each one's `end`), bounded by `maxKeys`.
 * Records at or above `maxOffset` are not used: a record above the high watermark may still be
 * truncated (leader change), so it must not make a committed older record of its key go.
 */
export async function buildOffsetMap(
  parts: Array<{ segment: Segment; end: number }>,
  maxKeys: number,
  maxOffset: number,
  unreadable: UnreadableBatches,
): Promise<{ map: Map<string, number>; complete: boolean }> {
  const map = new Map<string, number>();
  for (const { segment, end } of parts) {
    for await (const b of segmentBatches(segment, end)) {
      if (b.header.baseOffset >= maxOffset) return { map, complete: true };
      if (isTransactional(b.header) || isControl(b.header)) continue;
      const decoded = await decodeForCleaner(b, unreadable);
      if (!decoded) continue; // its keys stay out of the map: nothing older is removed for them
      const records = decoded.records.filter((r) => r.offset < maxOffset);
      // Stop before a batch whose new keys would overflow the bound: everything mapped so far is exact.
      let fresh = 0;
      for (const r of records) if (r.key !== null && !map.has(r.key.toString('latin1'))) fresh++;
      if (map.size + fresh > maxKeys) return { map, complete: false };
      for (const r of records) if (r.key !== null) map.set(r.key.toString('latin1'), r.offset);
    }
  }
  return { map, complete: true };
}

/**
 * Writes the cleaned copy of `seg` to `out`; returns what it removed and the
 * new size. `out` is synced before returning.
 */
export async function cleanSegment(
  seg: Segment,
  out: LogFile,
  map: Map<string, number>,
  tombstoneCutoff: number,
  unreadable: UnreadableBatches,
): Promise<{ size: number; removedRecords: number; removedBatches: number }> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let written = 0;
  let removedRecords = 0;
  let removedBatches = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const buf = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
    await writeFully(out, buf, 0, buf.length, written);
    written += buf.length;
    pending = [];
    pendingBytes = 0;
  };
  const emit = async (b: Buffer) => {
    pending.push(b);
    pendingBytes += b.length;
    if (pendingBytes >= CHUNK_BYTES) await flush();
  };
  for await (const b of segmentBatches(seg, seg.size)) {
    const h = b.header;
    const original = b.buf.subarray(b.position, b.position + b.size);
    if (isTransactional(h) || isControl(h)) {
      await emit(Buffer.from(original));
      continue;
    }
    const decoded = await decodeForCleaner(b, unreadable);
    if (!decoded) {
      await emit(Buffer.from(original));
      continue;
    }
    const kept = decoded.records.filter((r) => {
      if (r.key === null) return true;
      const latest = map.get(r.key.toString('latin1'));
      if (latest !== undefined && latest > r.offset) return false;
      return !(r.value === null && r.timestamp < tombstoneCutoff);
    });
    removedRecords += decoded.records.length - kept.length;
    if (kept.length === decoded.records.length) {
      await emit(Buffer.from(original));
    } else if (kept.length === 0) {
      removedBatches++;
    } else {
      await emit(
        await encodeBatch(
          kept.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp, offsetDelta: r.offset - h.baseOffset })),
          {
            baseOffset: h.baseOffset,
            partitionLeaderEpoch: h.partitionLeaderEpoch,
            compression: compressionOf(h),
            timestampType: timestampTypeOf(h),
            producerId: h.producerId,
            producerEpoch: h.producerEpoch,
            baseSequence: h.baseSequence,
            lastOffsetDelta: h.lastOffsetDelta,
          },
        ),
      );
    }
  }
  await flush();
  await out.truncate(written);
  await out.datasync();
  return { size: written, removedRecords, removedBatches };
}
