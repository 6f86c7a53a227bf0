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

interface Chunk {
  buf: Buffer;
  start: number;
  len: number;
}

async function readChunk(file: LogFile, start: number, length: number): Promise<Chunk> {
  const buf = Buffer.allocUnsafe(length);
  const len = await readFully(file, buf, 0, length, start);
  return { buf, start, len };
}

/**
 * Two passes per chunk: a header pass finds the whole batches in the chunk
 * (and the first header problem), the next chunk is then read ahead from the
 * first incomplete batch while the CRC pass runs over this one.
 */
export async function scanSegment(
  file: LogFile,
  start: number,
  end: number,
  options: ScanOptions,
  visit: BatchVisitor,
): Promise<ScanResult> {
  const chunkBytes = Math.min(SCAN_CHUNK_BYTES, Math.max(HEADER_SIZE, end - start));
  let pos = start;
  let nextOffset = options.minBaseOffset;
  let batches = 0;
  const maxLast = options.maxLastOffset ?? Number.MAX_SAFE_INTEGER;
  let ahead: Promise<Chunk> | null = start < end ? readChunk(file, start, Math.min(chunkBytes, end - start)) : null;

  while (pos < end) {
    if (end - pos < HEADER_SIZE) {
      await ahead?.catch(() => undefined);
      return { validEnd: pos, problem: `${end - pos} trailing bytes are too few for a batch header`, batches };
    }
    let chunk = await ahead!;
    ahead = null;
    if (chunk.len < HEADER_SIZE) return { validEnd: pos, problem: 'file ends inside a batch header', batches };
    // Header pass.
    const found: Array<{ pos: number; header: BatchHeader; size: number }> = [];
    let p = pos;
    let problem: string | null = null;
    let expect = nextOffset;
    while (p < end && p + HEADER_SIZE <= chunk.start + chunk.len) {
      const h = readBatchHeader(chunk.buf, p - chunk.start);
      problem = headerProblem(h, options.maxBatchBytes);
      const size = h.batchLength + LOG_OVERHEAD;
      if (!problem && p + size > end) problem = `batch at ${p} needs ${size} bytes, ${end - p} are there (torn write)`;
      if (!problem && h.baseOffset < expect) problem = `batch at ${p} has base offset ${h.baseOffset}, expected at least ${expect}`;
      if (!problem && h.baseOffset + h.lastOffsetDelta > maxLast) {
        problem = `batch at ${p} has offsets up to ${h.baseOffset + h.lastOffsetDelta}, past what its segment can hold`;
      }
      if (problem) break;
      if (p + size > chunk.start + chunk.len) {
        if (found.length === 0 && options.verify) {
          // One batch bigger than the chunk: read it whole.
          chunk = await readChunk(file, p, size);
          if (chunk.len < size) {
            problem = `batch at ${p} is cut short`;
            break;
          }
        } else if (found.length === 0) {
          found.push({ pos: p, header: h, size }); // headers only: no need for its bytes
          expect = h.baseOffset + h.lastOffsetDelta + 1;
          p += size;
          break;
        } else {
          break;
        }
      }
      found.push({ pos: p, header: h, size });
      expect = h.baseOffset + h.lastOffsetDelta + 1;
      p += size;
    }
    if (!problem && p < end) ahead = readChunk(file, p, Math.min(chunkBytes, end - p));
    // CRC pass (and visits) over the whole batches found.
    for (const b of found) {
      if (options.verify) {
        try {
          validateBatch(chunk.buf, b.pos - chunk.start);
        } catch (err) {
          if (isMqError(err)) {
            await ahead?.catch(() => undefined);
            return { validEnd: b.pos, problem: `batch at ${b.pos}: ${err.message}`, batches };
          }
          throw err;
        }
      }
      const stopHere = visit(b.pos, b.header, b.size);
      batches++;
      nextOffset = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      pos = b.pos + b.size;
      if (stopHere === true) {
        await ahead?.catch(() => undefined);
        return { validEnd: pos, problem: null, batches };
      }
    }
    if (problem) return { validEnd: pos, problem, batches };
    if (pos < end && ahead === null) ahead = readChunk(file, pos, Math.min(chunkBytes, end - pos));
  }
  return { validEnd: pos, problem: null, batches };
}
