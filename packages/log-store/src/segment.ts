/**
 * One segment of a partition log: `<base>.log` holding whole batches, its
 * sparse `.index` and its `.timeindex`. The segment knows how to append
 * batches, find the batch holding an offset (index lookup + a short forward
 * scan of headers), read whole batches, truncate, and rebuild its indexes.
 */
import * as path from 'node:path';
import { HEADER_SIZE, LOG_OVERHEAD, readBatchHeader, readInt64, type BatchHeader } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';
import { readFully, writeFully, writeFullySync, type LogFile, type LogFileSystem } from './file-system.js';
import { OffsetIndex } from './offset-index.js';
import { scanSegment, type ScanResult } from './scan.js';
import { TimeIndex } from './time-index.js';
import type { ReadBufferPool } from './read-buffer-pool.js';

const EMPTY: Buffer = Buffer.alloc(0);

export const LOG_SUFFIX = '.log';
export const INDEX_SUFFIX = '.index';
export const TIME_INDEX_SUFFIX = '.timeindex';
/** Offsets inside a segment are stored relative to its base as uint32; stay well inside. */
export const MAX_RELATIVE_OFFSET = 0x7fff_ffff;

export function segmentName(baseOffset: number): string {
  return String(baseOffset).padStart(20, '0');
}

/** The base offset a segment file name encodes, or null when it is not a segment file. */
export function parseSegmentName(file: string, suffix: string): number | null {
  if (!file.endsWith(suffix)) return null;
  const stem = file.slice(0, -suffix.length);
  if (!/^\d{20}$/.test(stem)) return null;
  const n = Number(stem);
  return Number.isSafeInteger(n) ? n : null;
}

/** What an appended batch looks like to the segment. */
export interface AppendedBatch {
  /** Position inside the appended buffer. */
  position: number;
  size: number;
  baseOffset: number;
  lastOffset: number;
  maxTimestamp: number;
}

export interface LocatedBatch {
  position: number;
  size: number;
  header: BatchHeader;
}

export class Segment {
  readonly logPath: string;
  readonly indexPath: string;
  readonly timeIndexPath: string;
  /** Bytes of whole batches in the .log. */
  size = 0;
  /** The offset after the last batch; the base offset when empty. */
  nextOffset: number;
  maxTimestamp = -1;
  offsetOfMaxTimestamp = -1;
  /** Max timestamp of the first batch (for time-based rolling), -1 when unknown. */
  firstBatchTimestamp = -1;
  bytesSinceIndexEntry = 0;
  /** In memory for the active segment; loaded on demand (and evictable) for closed ones. */
  index: OffsetIndex | null = null;
  timeIndex: TimeIndex | null = null;
  /** Bytes of each index known to be in its file. */
  indexFileBytes = 0;
  timeIndexFileBytes = 0;
  private indexFile: LogFile | null = null;
  private timeIndexFile: LogFile | null = null;
  private rewriteIndexes = false;
  /** Readers in flight; a deleted segment closes its file when this reaches 0. */
  refs = 0;
  deleted = false;
  mtimeMs = 0;

  private constructor(
    readonly dir: string,
    readonly baseOffset: number,
    readonly file: LogFile,
    private readonly fs: LogFileSystem,
    readonly createdAt: number,
  ) {
    const stem = path.join(dir, segmentName(baseOffset));
    this.logPath = stem + LOG_SUFFIX;
    this.indexPath = stem + INDEX_SUFFIX;
    this.timeIndexPath = stem + TIME_INDEX_SUFFIX;
    this.nextOffset = baseOffset;
  }

  /** Creates a new empty segment (truncating leftovers of an older one with the same base). */
  static async create(dir: string, baseOffset: number, fs: LogFileSystem, now: number): Promise<Segment> {
    const stem = path.join(dir, segmentName(baseOffset));
    const file = await fs.open(stem + LOG_SUFFIX, true);
    await file.truncate(0);
    const seg = new Segment(dir, baseOffset, file, fs, now);
    seg.index = new OffsetIndex();
    seg.timeIndex = new TimeIndex();
    await fs.unlink(seg.indexPath);
    await fs.unlink(seg.timeIndexPath);
    return seg;
  }

  /** Opens an existing segment; `size` is the file size until recovery says otherwise. */
  static async open(dir: string, baseOffset: number, fs: LogFileSystem, now: number): Promise<Segment> {
    const stem = path.join(dir, segmentName(baseOffset));
    const file = await fs.open(stem + LOG_SUFFIX, false);
    const seg = new Segment(dir, baseOffset, file, fs, now);
    seg.size = await file.size();
    seg.mtimeMs = (await fs.stat(seg.logPath))?.mtimeMs ?? now;
    return seg;
  }

  /** The timestamp retention and rolling judge this segment by. */
  get largestTimestamp(): number {
    return this.maxTimestamp >= 0 ? this.maxTimestamp : this.mtimeMs;
  }

  // ---------------------------------------------------------------- indexes

  /**
   * Loads the persisted indexes of a closed segment. Returns a problem when
   * they were missing or damaged (they are then rebuilt from the log).
   */
  async loadIndexes(maxBatchBytes: number, indexIntervalBytes: number): Promise<string | null> {
    const [idx, tidx] = await Promise.all([this.fs.readFile(this.indexPath), this.fs.readFile(this.timeIndexPath)]);
    const index = idx === null ? null : OffsetIndex.fromBuffer(idx, Math.max(1, this.size));
    const timeIndex = tidx === null ? null : TimeIndex.fromBuffer(tidx);
    if (index && timeIndex && index.entries * 8 === idx!.length && timeIndex.entries * 12 === tidx!.length) {
      this.index = index;
      this.timeIndex = timeIndex;
      this.indexFileBytes = idx!.length;
      this.timeIndexFileBytes = tidx!.length;
      if (timeIndex.entries > 0) {
        this.maxTimestamp = timeIndex.lastTimestamp();
        this.offsetOfMaxTimestamp = this.baseOffset + timeIndex.lastRelativeOffset();
      }
      return null;
    }
    const problem = idx === null || tidx === null ? 'index file missing' : 'index file damaged';
    await this.rebuildIndexes(maxBatchBytes, indexIntervalBytes);
    this.markIndexesForRewrite();
    await this.persistIndexes();
    await this.closeIndexFiles();
    return problem;
  }

  /**
   * Cheap check of a closed segment's index files at open, without reading
   * them: both present and of a whole number of entries; the largest
   * timestamp comes from the last time-index entry. Damaged or missing files
   * are rebuilt now (returns the problem). Entry-level checks happen when the
   * index is first loaded.
   */
  async inspectIndexes(maxBatchBytes: number, indexIntervalBytes: number): Promise<string | null> {
    const [si, st] = await Promise.all([this.fs.stat(this.indexPath), this.fs.stat(this.timeIndexPath)]);
    if (!si || !st || si.size % 8 !== 0 || st.size % 12 !== 0 || (this.size > 0 && si.size / 8 > this.size)) {
      await this.rebuildIndexes(maxBatchBytes, indexIntervalBytes);
      this.markIndexesForRewrite();
      await this.persistIndexes();
      await this.closeIndexFiles();
      return !si || !st ? 'index file missing' : 'index file damaged';
    }
    this.indexFileBytes = si.size;
    this.timeIndexFileBytes = st.size;
    if (st.size >= 12) {
      const f = await this.fs.open(this.timeIndexPath, false);
      try {
        const last = Buffer.alloc(12);
        if ((await readFully(f, last, 0, 12, st.size - 12)) === 12) {
          this.maxTimestamp = readInt64(last, 0);
          this.offsetOfMaxTimestamp = this.baseOffset + last.readUInt32BE(8);
        }
      } finally {
        await f.close();
      }
    }
    return null;
  }

  /** Rebuilds both indexes from the log, headers only (the data below the recovery point is trusted). */
  async rebuildIndexes(maxBatchBytes: number, indexIntervalBytes: number): Promise<void> {
    this.index = new OffsetIndex();
    this.timeIndex = new TimeIndex();
    this.resetTracking();
    const result = await scanSegment(this.file, 0, this.size, { verify: false, minBaseOffset: this.baseOffset, maxBatchBytes }, (pos, h, size) =>
      this.track(pos, h, size, indexIntervalBytes),
    );
    if (result.problem) {
      throw new MqError('CORRUPT_MESSAGE', `segment ${this.logPath} below the recovery point is damaged: ${result.problem}`, {
        file: this.logPath,
        position: result.validEnd,
      });
    }
  }

  private resetTracking(): void {
    this.nextOffset = this.baseOffset;
    this.maxTimestamp = -1;
    this.offsetOfMaxTimestamp = -1;
    this.firstBatchTimestamp = -1;
    this.bytesSinceIndexEntry = 0;
  }

  /** Accounts one batch at `position` (appended or scanned): indexes, max timestamp, next offset. */
  private track(position: number, h: { baseOffset: number; lastOffsetDelta: number; maxTimestamp: number }, size: number, indexIntervalBytes: number): void {
    if (this.bytesSinceIndexEntry > indexIntervalBytes) {
      this.index!.append(h.baseOffset - this.baseOffset, position);
      if (this.maxTimestamp >= 0) this.timeIndex!.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp - this.baseOffset);
      this.bytesSinceIndexEntry = 0;
    }
    if (position === 0) this.firstBatchTimestamp = h.maxTimestamp;
    if (h.maxTimestamp > this.maxTimestamp) {
      this.maxTimestamp = h.maxTimestamp;
      this.offsetOfMaxTimestamp = h.baseOffset;
    }
    this.bytesSinceIndexEntry += size;
    this.nextOffset = h.baseOffset + h.lastOffsetDelta + 1;
  }

  /**
   * Makes the in-memory state describe exactly the batches in [0, position):
   * indexes cut there, next offset and max timestamp recomputed with a short
   * header scan. Then, when `verifyToEnd` is set, checks every batch from
   * there to the end of the file (header + CRC), indexing them, and returns
   * where the valid data ends. Used by recovery, truncation and clean opens.
   */
  async restoreFrom(
    position: number,
    end: number,
    options: { verify: boolean; maxBatchBytes: number; indexIntervalBytes: number },
  ): Promise<ScanResult> {
    if (!this.index || !this.timeIndex) {
      this.index = new OffsetIndex();
      this.timeIndex = new TimeIndex();
    }
    const index = this.index;
    const timeIndex = this.timeIndex;
    const scanOpts = { verify: false, minBaseOffset: this.baseOffset, maxBatchBytes: options.maxBatchBytes };
    const entriesBefore = index.entries + timeIndex.entries;
    index.truncate(Number.MAX_SAFE_INTEGER, position);
    // Header-scan from the last surviving index entry up to `position` to learn the next offset there.
    const from = index.entries > 0 ? index.positionAt(index.entries - 1) : 0;
    let nextOffset = this.baseOffset;
    let lastMax = -1;
    let lastMaxOffset = -1;
    const pre = await scanSegment(this.file, from, position, { ...scanOpts, minBaseOffset: from === 0 ? this.baseOffset : 0 }, (_p, h) => {
      nextOffset = h.baseOffset + h.lastOffsetDelta + 1;
      if (h.maxTimestamp > lastMax) {
        lastMax = h.maxTimestamp;
        lastMaxOffset = h.baseOffset;
      }
    });
    if (pre.problem || pre.validEnd !== position) {
      throw new MqError('CORRUPT_MESSAGE', `segment ${this.logPath}: no batch boundary at ${position} (${pre.problem ?? 'misaligned'})`, {
        file: this.logPath,
        position,
      });
    }
    timeIndex.truncate(nextOffset - this.baseOffset);
    // Entries went: the files hold stale ones at the same places, so rewrite them whole.
    if (index.entries + timeIndex.entries < entriesBefore) this.markIndexesForRewrite();
    // Max timestamp: the last surviving time entry covers everything before its offset.
    let maxTs = -1;
    let maxOff = -1;
    if (timeIndex.entries > 0) {
      maxTs = timeIndex.lastTimestamp();
      maxOff = this.baseOffset + timeIndex.lastRelativeOffset();
      const tFrom = index.lookup(maxOff - this.baseOffset);
      if (tFrom < from) {
        await scanSegment(this.file, tFrom, from, { ...scanOpts, minBaseOffset: 0 }, (_p, h) => {
          if (h.maxTimestamp > maxTs) {
            maxTs = h.maxTimestamp;
            maxOff = h.baseOffset;
          }
        });
      }
    } else if (from > 0) {
      await scanSegment(this.file, 0, from, scanOpts, (_p, h) => {
        if (h.maxTimestamp > maxTs) {
          maxTs = h.maxTimestamp;
          maxOff = h.baseOffset;
        }
      });
    }
    if (lastMax > maxTs) {
      maxTs = lastMax;
      maxOff = lastMaxOffset;
    }
    this.nextOffset = position === 0 ? this.baseOffset : nextOffset;
    this.maxTimestamp = maxTs;
    this.offsetOfMaxTimestamp = maxOff;
    this.bytesSinceIndexEntry = position - (index.entries > 0 ? index.positionAt(index.entries - 1) : 0);
    this.size = position;
    if (position === 0) this.firstBatchTimestamp = -1;
    else if (this.firstBatchTimestamp < 0) this.firstBatchTimestamp = (await this.headerAt(0)).maxTimestamp;
    if (!options.verify && end === position) return { validEnd: position, problem: null, batches: 0 };
    const result = await scanSegment(
      this.file,
      position,
      end,
      { verify: options.verify, minBaseOffset: this.nextOffset, maxBatchBytes: options.maxBatchBytes, maxLastOffset: this.baseOffset + MAX_RELATIVE_OFFSET },
      (pos, h, size) => this.track(pos, h, size, options.indexIntervalBytes),
    );
    this.size = result.validEnd;
    return result;
  }

  private async headerAt(position: number): Promise<BatchHeader> {
    const buf = Buffer.allocUnsafe(HEADER_SIZE);
    const n = await readFully(this.file, buf, 0, HEADER_SIZE, position);
    if (n < HEADER_SIZE) throw new MqError('CORRUPT_MESSAGE', `segment ${this.logPath}: no batch header at ${position}`);
    return readBatchHeader(buf, 0);
  }

  /** The index files no longer match memory (rebuilt or recovered): rewrite them whole on the next persist. */
  markIndexesForRewrite(): void {
    this.rewriteIndexes = true;
  }

  /** Writes index entries not yet in the files, and cuts files longer than the in-memory index. */
  async persistIndexes(): Promise<void> {
    if (!this.index || !this.timeIndex) return;
    if (this.rewriteIndexes) {
      this.indexFile ??= await this.fs.open(this.indexPath, true);
      this.timeIndexFile ??= await this.fs.open(this.timeIndexPath, true);
      await this.indexFile.truncate(0);
      await this.timeIndexFile.truncate(0);
      this.indexFileBytes = 0;
      this.timeIndexFileBytes = 0;
      this.rewriteIndexes = false;
    }
    const idx = this.index.bytes();
    if (idx.length !== this.indexFileBytes || this.indexFile === null) {
      this.indexFile ??= await this.fs.open(this.indexPath, true);
      if (idx.length < this.indexFileBytes) await this.indexFile.truncate(idx.length);
      else if (idx.length > this.indexFileBytes) await writeFully(this.indexFile, idx, this.indexFileBytes, idx.length - this.indexFileBytes, this.indexFileBytes);
      this.indexFileBytes = idx.length;
    }
    const tidx = this.timeIndex.bytes();
    if (tidx.length !== this.timeIndexFileBytes || this.timeIndexFile === null) {
      this.timeIndexFile ??= await this.fs.open(this.timeIndexPath, true);
      if (tidx.length < this.timeIndexFileBytes) await this.timeIndexFile.truncate(tidx.length);
      else if (tidx.length > this.timeIndexFileBytes)
        await writeFully(this.timeIndexFile, tidx, this.timeIndexFileBytes, tidx.length - this.timeIndexFileBytes, this.timeIndexFileBytes);
      this.timeIndexFileBytes = tidx.length;
    }
  }

  /** Adds the final time-index entry (max timestamp so far), as on roll. */
  sealTimeIndex(): void {
    if (this.timeIndex && this.maxTimestamp >= 0) {
      this.timeIndex.maybeAppend(this.maxTimestamp, this.offsetOfMaxTimestamp - this.baseOffset);
    }
  }

  async syncIndexes(): Promise<void> {
    await Promise.all([this.indexFile?.datasync(), this.timeIndexFile?.datasync()]);
  }

  async closeIndexFiles(): Promise<void> {
    const files = [this.indexFile, this.timeIndexFile];
    this.indexFile = null;
    this.timeIndexFile = null;
    await Promise.all(files.map((f) => f?.close()));
  }

  /** Bytes the in-memory indexes take. */
  get indexBytes(): number {
    return (this.index?.byteSize ?? 0) + (this.timeIndex?.entries ?? 0) * 12;
  }

  /** Index of a closed segment can be dropped from memory (reloaded on demand). */
  evictIndexes(): void {
    this.index = null;
    this.timeIndex = null;
  }

  // ----------------------------------------------------------------- append

  /** Writes `buf` at the end and indexes its batches. On a write error nothing in memory changes. */
  async append(buf: Buffer, batches: readonly AppendedBatch[], indexIntervalBytes: number): Promise<void> {
    const start = this.size;
    this.checkFits(batches);
    await writeFully(this.file, buf, 0, buf.length, start);
    this.written(start, buf.length, batches, indexIntervalBytes);
  }

  /** append() with the file's synchronous write (the caller checked the file has one). */
  appendSync(buf: Buffer, batches: readonly AppendedBatch[], indexIntervalBytes: number): void {
    const start = this.size;
    this.checkFits(batches);
    writeFullySync(this.file, buf, 0, buf.length, start);
    this.written(start, buf.length, batches, indexIntervalBytes);
  }

  /**
   * Refuses, before anything is written, batches the indexes could not take:
   * offsets below the segment's next one or past its relative-offset range.
   * After this, indexing them cannot fail half way.
   */
  private checkFits(batches: readonly AppendedBatch[]): void {
    let next = this.nextOffset;
    for (const b of batches) {
      if (b.baseOffset < next || b.lastOffset < b.baseOffset || b.lastOffset - this.baseOffset > MAX_RELATIVE_OFFSET) {
        throw new MqError('INVALID_RECORD', `offsets ${b.baseOffset}..${b.lastOffset} do not fit segment ${this.logPath} (next offset ${next})`, {
          file: this.logPath,
        });
      }
      next = b.lastOffset + 1;
    }
  }

  /** After a write of `length` bytes at `start`: index its batches and grow the segment. */
  private written(start: number, length: number, batches: readonly AppendedBatch[], indexIntervalBytes: number): void {
    for (const b of batches) {
      this.track(start + b.position, { baseOffset: b.baseOffset, lastOffsetDelta: b.lastOffset - b.baseOffset, maxTimestamp: b.maxTimestamp }, b.size, indexIntervalBytes);
    }
    this.size = start + length;
  }

  // ------------------------------------------------------------------- read

  /**
   * Finds the first batch whose last offset is >= `offset`, reading headers
   * forward from the index entry at or before it, within [0, end).
   */
  async locate(
    offset: number,
    end: number,
    index: OffsetIndex,
    chunkBytes: number,
    startPosition?: number,
    pool?: ReadBufferPool,
  ): Promise<{ batch: LocatedBatch; chunk: Buffer; chunkStart: number } | null> {
    let pos = startPosition ?? index.lookup(Math.max(0, offset - this.baseOffset));
    let chunk: Buffer = EMPTY;
    let chunkStart = pos;
    try {
      for (;;) {
        if (pos >= end) {
          pool?.release(chunk);
          return null;
        }
        if (pos + HEADER_SIZE > chunkStart + chunk.length) {
          const len = Math.min(chunkBytes, end - pos);
          pool?.release(chunk);
          chunk = pool ? pool.take(len) : Buffer.allocUnsafe(len);
          chunkStart = pos;
          const n = await readFully(this.file, chunk, 0, len, pos);
          if (n < Math.min(len, HEADER_SIZE)) throw this.corrupt(pos, 'file is shorter than its recorded size');
          if (len < HEADER_SIZE) throw this.corrupt(pos, `${len} bytes before the end are too few for a batch`);
        }
        const header = readBatchHeader(chunk, pos - chunkStart);
        const size = header.batchLength + LOG_OVERHEAD;
        if (header.batchLength < HEADER_SIZE - LOG_OVERHEAD || pos + size > end) throw this.corrupt(pos, `batch length ${header.batchLength} does not fit`);
        if (header.baseOffset + header.lastOffsetDelta >= offset) return { batch: { position: pos, size, header }, chunk, chunkStart };
        pos += size;
      }
    } catch (err) {
      pool?.release(chunk);
      throw err;
    }
  }

  corrupt(position: number, why: string): MqError {
    return new MqError('CORRUPT_MESSAGE', `segment ${this.logPath} is corrupt at byte ${position}: ${why}`, {
      file: this.logPath,
      position,
    });
  }

  /** Reads `length` bytes at `position` into a new buffer (from `pool` when given; released again on failure). */
  async readBytes(position: number, length: number, pool?: ReadBufferPool): Promise<Buffer> {
    const buf = pool ? pool.take(length) : Buffer.allocUnsafe(length);
    try {
      const n = await readFully(this.file, buf, 0, length, position);
      if (n < length) throw this.corrupt(position + n, 'file is shorter than its recorded size');
    } catch (err) {
      pool?.release(buf);
      throw err;
    }
    return buf;
  }

  // --------------------------------------------------------------- truncate

  /**
   * Cuts the log file at `position` (a batch boundary). `durable` syncs the
   * cut: truncation of valid data must not come back after a crash; recovery
   * cutting a torn tail need not (it would only cut it again).
   */
  async truncateFile(position: number, durable = true): Promise<void> {
    await this.file.truncate(position);
    if (durable) await this.file.datasync();
  }

  async close(): Promise<void> {
    await this.closeIndexFiles();
    await this.file.close();
  }

  async deleteFiles(): Promise<void> {
    await Promise.all([this.fs.unlink(this.logPath), this.fs.unlink(this.indexPath), this.fs.unlink(this.timeIndexPath)]);
  }
}
