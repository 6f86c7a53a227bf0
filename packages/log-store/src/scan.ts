/**
 * Walks the batches of a segment file in large chunks, reading headers only
 * (`verify: false`) or checking every batch's header and CRC-32C
 * (`verify: true`, used by recovery). Stops at the first batch that is torn
 * or corrupt and says where and why.
 */
import { HEADER_SIZE, LOG_OVERHEAD, MAGIC, readBatchHeader, validateBatch, type BatchHeader } from '@mq/protocol/batch';
import { isMqError } from '@mq/protocol/errors';
import { readFully, type LogFile } from './file-system.js';

export const SCAN_CHUNK_BYTES = 1024 * 1024;

export interface ScanResult {
  /** Position just after the last good batch. */
  validEnd: number;
  /** Why the scan stopped before `end`, or null when it reached it. */
  problem: string | null;
  batches: number;
}

/** Called per good batch; returning true stops the scan there (the batch counts as visited). */
export type BatchVisitor = (position: number, header: BatchHeader, size: number) => boolean | void;

/** Header checks that need no CRC: sane length, known magic, count and delta agree. */
function headerProblem(h: BatchHeader, maxBatchBytes: number): string | null {
  if (h.batchLength < HEADER_SIZE - LOG_OVERHEAD) return `batch length ${h.batchLength} is shorter than a header`;
  if (h.batchLength + LOG_OVERHEAD > maxBatchBytes) return `batch length ${h.batchLength} is over the limit`;
  if (h.magic !== MAGIC) return `unknown batch magic ${h.magic}`;
  if (h.recordCount < 0 || h.lastOffsetDelta < 0 || (h.recordCount > 0 && h.lastOffsetDelta < h.recordCount - 1)) {
    return `record count ${h.recordCount} does not fit last offset delta ${h.lastOffsetDelta}`;
  }
  return null;
}

export interface ScanOptions {
  verify: boolean;
  /** Offsets must increase: the first batch's base offset must be >= this. */
  minBaseOffset: number;
  /** Upper bound on a batch's size when judging a header sane. */
  maxBatchBytes: number;
  /** Largest last offset a batch may have (the segment's base + the largest relative offset). */
  maxLastOffset?: number;
}

export async function scanSegment(
  file: LogFile,
  start: number,
  end: number,
  options: ScanOptions,
  visit: BatchVisitor,
): Promise<ScanResult> {
  let chunk = Buffer.allocUnsafe(Math.min(SCAN_CHUNK_BYTES, Math.max(HEADER_SIZE, end - start)));
  let chunkStart = start;
  let chunkLen = 0;
  let pos = start;
  let nextOffset = options.minBaseOffset;
  let batches = 0;
  const stop = (problem: string): ScanResult => ({ validEnd: pos, problem, batches });

  while (pos < end) {
    if (end - pos < HEADER_SIZE) return stop(`${end - pos} trailing bytes are too few for a batch header`);
    // Make sure the header is in the chunk.
    if (pos + HEADER_SIZE > chunkStart + chunkLen) {
      chunkStart = pos;
      chunkLen = await readFully(file, chunk, 0, Math.min(chunk.length, end - pos), pos);
      if (chunkLen < HEADER_SIZE) return stop('file ends inside a batch header');
    }
    const h = readBatchHeader(chunk, pos - chunkStart);
    const problem = headerProblem(h, options.maxBatchBytes);
    if (problem) return stop(problem);
    const size = h.batchLength + LOG_OVERHEAD;
    if (pos + size > end) return stop(`batch at ${pos} needs ${size} bytes, ${end - pos} are there (torn write)`);
    if (h.baseOffset < nextOffset) return stop(`batch at ${pos} has base offset ${h.baseOffset}, expected at least ${nextOffset}`);
    if (h.baseOffset + h.lastOffsetDelta > (options.maxLastOffset ?? Number.MAX_SAFE_INTEGER)) {
      return stop(`batch at ${pos} has offsets up to ${h.baseOffset + h.lastOffsetDelta}, past what its segment can hold`);
    }
    if (options.verify) {
      if (pos + size > chunkStart + chunkLen) {
        if (size > chunk.length) chunk = Buffer.allocUnsafe(size);
        chunkStart = pos;
        chunkLen = await readFully(file, chunk, 0, Math.min(chunk.length, end - pos), pos);
        if (chunkLen < size) return stop(`batch at ${pos} is cut short`);
      }
      try {
        validateBatch(chunk, pos - chunkStart);
      } catch (err) {
        if (isMqError(err)) return stop(`batch at ${pos}: ${err.message}`);
        throw err;
      }
    }
    const stopHere = visit(pos, h, size);
    batches++;
    nextOffset = h.baseOffset + h.lastOffsetDelta + 1;
    pos += size;
    if (stopHere === true) return { validEnd: pos, problem: null, batches };
  }
  return { validEnd: pos, problem: null, batches };
}
