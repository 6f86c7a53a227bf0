/**
 * The log of one partition: an ordered list of segments, the last one
 * active. Appends go to the active segment under one mutex; reads run
 * alongside appends; truncation, retention and close run alone.
 */
import * as path from 'node:path';
import {
  ATTR_LOG_APPEND_TIME,
  HEADER_SIZE,
  LOG_OVERHEAD,
  OFF_CRC,
  OFF_MAX_TIMESTAMP,
  computeBatchCrc,
  controlTypeOf,
  decodeBatch,
  isControl,
  readBatchHeader,
  setBaseOffset,
  setPartitionLeaderEpoch,
  writeInt64,
  type BatchHeader,
} from '@mq/protocol/batch';
import { silentLogger, type Logger } from '@mq/protocol/components';
import { MqError, isMqError } from '@mq/protocol/errors';
import { checkInt, markLogAppendTime, needsDecompression, parseAppend, toStorageError, verifyCompressed, type ParsedBatch } from './append-checks.js';
import { CheckpointFile } from './checkpoint.js';
import { DEFAULT_COMPACTION_MAX_KEYS, buildOffsetMap, cleanSegment, type CompactOptions, type CompactionResult, type UnreadableBatches } from './compaction.js';
import { lockDir, type DirLock } from './dir-lock.js';
import { SYNC_WRITE_MAX_BYTES, nodeFileSystem, type LogFileSystem } from './file-system.js';
import { GroupCommit, type LogPosition } from './group-commit.js';
import { IndexCache } from './index-cache.js';
import { PersistentLeaderEpochCache, type LeaderEpochCache } from './leader-epoch-cache.js';
import { Mutex, RwLock } from './locks.js';
import { OffsetIndex } from './offset-index.js';
import { parseLogOptions, type LogOptions, type ParsedLogOptions } from './options.js';
import { ProducerSnapshots } from './producer-snapshots.js';
import { ProducerState, nextSequence, type ProducerEntry, type SequenceVerdict } from './producer-state.js';
import { scanSegment } from './scan.js';
import { FileHandleCache } from './file-handle-cache.js';
import { INDEX_SUFFIX, LOG_SUFFIX, MAX_RELATIVE_OFFSET, Segment, TIME_INDEX_SUFFIX, parseSegmentName, type AppendedBatch } from './segment.js';
import { TimeIndex } from './time-index.js';
import type {
  AppendOptions,
  AppendResult,
  Log,
  LogComponents,
  ProducerInfo,
  ReadOptions,
  ReadResult,
  RecoveryReport,
} from './types.js';

export const RECOVERY_POINT_CHECKPOINT = 'recovery-point-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT = 'log-start-offset-checkpoint';
export const CLEAN_SHUTDOWN_FILE = '.clean-shutdown';
/** Present while the log is being emptied and restarted at the offset it holds. */
export const RESTART_FILE = '.restart-at';
/** A compacted copy of a segment being written; replaces the .log by rename. */
export const CLEANED_SUFFIX = '.cleaned';
/** offsetForTimestamp() special values, as in Kafka's ListOffsets. */
export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;

const MAX_LOCATE_CHUNK = 8 * 1024 * 1024;
/** Read past the index interval so the batch an index entry leads to usually fits the first read. */
const READ_SLACK_BYTES = 32 * 1024;
/** Read-end positions remembered for sequential consumers (bounded). */
const MAX_READ_HINTS = 256;
/** How often expired producer ids are dropped (Kafka's producer.id.expiration.check.interval.ms). */
const PRODUCER_EXPIRATION_CHECK_MS = 10 * 60 * 1000;

export type { AppendOptions, AppendResult, Log, LogComponents, ReadOptions, ReadResult, RecoveryReport, RecoveryTruncation } from './types.js';

/**
 * The offsets an append answers for batches at `ranges` (request order): the
 * first base, the largest last, and each batch's base when they do not lie
 * back to back (so nobody derives a batch's offsets from the one before it).
 */
function offsetsOf(ranges: ReadonlyArray<NonNullable<SequenceVerdict>>): Pick<AppendResult, 'baseOffset' | 'lastOffset' | 'batchBaseOffsets'> {
  let lastOffset = ranges[0]!.lastOffset;
  let contiguous = true;
  for (let i = 1; i < ranges.length; i++) {
    const r = ranges[i]!;
    if (r.firstOffset !== ranges[i - 1]!.lastOffset + 1) contiguous = false;
    lastOffset = Math.max(lastOffset, r.lastOffset);
  }
  const out: Pick<AppendResult, 'baseOffset' | 'lastOffset' | 'batchBaseOffsets'> = { baseOffset: ranges[0]!.firstOffset, lastOffset };
  if (!contiguous) out.batchBaseOffsets = ranges.map((r) => r.firstOffset);
  return out;
}


class PartitionLog implements Log {
  private segments: Segment[] = [];
  private active!: Segment;
  private leo = 0;
  private startOffset = 0;
  private readonly appendMutex = new Mutex();
  private readonly compactionMutex = new Mutex();
  /** Bumped by every truncation; a compaction planned before one is void. */
  private truncations = 0;
  private readonly checkpointMutex = new Mutex();
  private readonly rw = new RwLock();
  private readonly epochs: PersistentLeaderEpochCache;
  private readonly recoveryPointFile: CheckpointFile;
  private readonly logStartFile: CheckpointFile;
  private commit!: GroupCommit;
  private lastCheckpoint: LogPosition | null = null;
  private closed = false;
  private failure: MqError | null = null;
  private readonly background = new Set<Promise<unknown>>();
  private readonly timers: NodeJS.Timeout[] = [];
  private unflushedBytes = 0;
  /** Closed segments whose indexes are in memory, least recently used first. */
  private readonly indexCache: IndexCache;
  private readonly readHints = new Map<number, { segment: Segment; position: number }>();
  private readonly loadingIndexes = new Map<Segment, Promise<{ index: OffsetIndex; timeIndex: TimeIndex }>>();
  /** Idempotent producers' epochs and last batches, as of the log end. */
  private producers = new ProducerState();
  private readonly snapshots: ProducerSnapshots;
  /** Bytes appended since the last producer snapshot, and where the last periodic (checkpoint-time) one is. */
  private bytesSinceSnapshot = 0;
  private periodicSnapshot: number | null = null;
  recovery!: RecoveryReport;

  constructor(
    readonly dir: string,
    private opts: ParsedLogOptions,
    private readonly fs: LogFileSystem,
    private readonly clock: () => number,
    private readonly logger: Logger,
    private readonly lock: DirLock,
    indexCache: IndexCache | undefined,
  ) {
    this.indexCache = indexCache ?? new IndexCache(opts.indexCacheBytes);
    this.epochs = new PersistentLeaderEpochCache(dir, fs, () => this.leo);
    this.recoveryPointFile = new CheckpointFile(dir, RECOVERY_POINT_CHECKPOINT, fs);
    this.logStartFile = new CheckpointFile(dir, LOG_START_OFFSET_CHECKPOINT, fs);
    this.snapshots = new ProducerSnapshots(dir, fs);
  }

  get logStartOffset(): number {
    return this.startOffset;
  }

  get logEndOffset(): number {
    return this.leo;
  }

  get size(): number {
    let n = 0;
    for (const s of this.segments) n += s.size;
    return n;
  }

  get segmentCount(): number {
    return this.segments.length;
  }

  get durableOffset(): number {
    return this.commit.durable.offset;
  }

  get leaderEpochs(): LeaderEpochCache {
    return this.epochs;
  }

  private point(): LogPosition {
    return { offset: this.leo, segmentBase: this.active.baseOffset, position: this.active.size };
  }

  // ================================================================== open

  async load(): Promise<void> {
    const started = performance.now();
    const report: RecoveryReport = {
      clean: false,
      recoveredFrom: null,
      scannedBytes: 0,
      scannedBatches: 0,
      truncated: null,
      deletedSegments: [],
      rebuiltIndexes: [],
      badCheckpoints: [],
      durationMs: 0,
    };
    let files = await this.fs.readdir(this.dir);
    if (await this.finishRestart(files)) files = await this.fs.readdir(this.dir);
    const bases = new Set<number>();
    for (const f of files) {
      const base = parseSegmentName(f, LOG_SUFFIX);
      if (base !== null) bases.add(base);
    }
    for (const f of files) {
      if (f.endsWith('.tmp') || f.endsWith(CLEANED_SUFFIX)) await this.fs.unlink(path.join(this.dir, f)); // unfinished writes
      const base = parseSegmentName(f, INDEX_SUFFIX) ?? parseSegmentName(f, TIME_INDEX_SUFFIX);
      if (base !== null && !bases.has(base)) await this.fs.unlink(path.join(this.dir, f)); // orphan index
    }
    const hadCleanShutdown = files.includes(CLEAN_SHUTDOWN_FILE);

    const readCheckpoint = async (file: CheckpointFile): Promise<number[][] | null> => {
      try {
        return await file.read();
      } catch (err) {
        report.badCheckpoints.push(path.basename(file.file));
        this.logger.warn({ dir: this.dir, file: file.file, err: (err as Error).message }, 'ignoring unreadable checkpoint');
        return null;
      }
    };
    const rpLines = await readCheckpoint(this.recoveryPointFile);
    const rpLine = rpLines?.[0];
    const recoveryPoint: LogPosition | null =
      rpLine && rpLine.length === 3 ? { offset: rpLine[0]!, segmentBase: rpLine[1]!, position: rpLine[2]! } : null;
    if (rpLines && !recoveryPoint) report.badCheckpoints.push(RECOVERY_POINT_CHECKPOINT);
    const lsLine = (await readCheckpoint(this.logStartFile))?.[0];
    const epochProblem = await this.epochs.load();
    if (epochProblem) {
      report.badCheckpoints.push('leader-epoch-checkpoint');
      this.logger.warn({ dir: this.dir, problem: epochProblem }, 'leader epoch checkpoint unreadable; rebuilding it from batch headers');
    }

    const now = this.clock();
    const sorted = [...bases].sort((a, b) => a - b);
    for (const base of sorted) this.segments.push(await Segment.open(this.dir, base, this.fs, now));
    const checkpointStart = lsLine && lsLine.length === 1 ? lsLine[0]! : null;
    if (this.segments.length === 0) {
      const base = Math.max(checkpointStart ?? 0, recoveryPoint?.offset ?? 0);
      this.segments.push(await Segment.create(this.dir, base, this.fs, now));
      await this.fs.syncDir(this.dir);
    }
    this.startOffset = Math.max(checkpointStart ?? 0, this.segments[0]!.baseOffset);
    // Segments wholly below the log start (a crash between checkpoint and delete) go now.
    while (this.segments.length > 1 && this.segments[1]!.baseOffset <= this.startOffset) {
      const seg = this.segments.shift()!;
      report.deletedSegments.push(path.basename(seg.logPath));
      await seg.close();
      await seg.deleteFiles();
    }

    const clean = hadCleanShutdown && recoveryPoint !== null;
    report.clean = clean;
    const scanOpts = { maxBatchBytes: Number.MAX_SAFE_INTEGER, indexIntervalBytes: this.opts.indexIntervalBytes };
    const last = this.segments.length - 1;
    // First segment that recovery must verify.
    let verifyFrom = this.segments.length;
    if (!clean) {
      verifyFrom = 0;
      if (recoveryPoint) {
        const at = this.segments.findIndex((s) => s.baseOffset === recoveryPoint.segmentBase);
        verifyFrom = at >= 0 ? at : this.segments.findIndex((s) => s.baseOffset >= recoveryPoint.offset);
        if (verifyFrom < 0) verifyFrom = last;
      }
    }
    const epochRebuild = epochProblem !== null;
    let recoveryPointUsed = false;

    for (let i = 0; i < this.segments.length; i++) {
      const seg = this.segments[i]!;
      const isLast = i === last;
      if (i < verifyFrom) {
        // Trusted (below the recovery point, or clean shutdown).
        if (!isLast) {
          try {
            const problem = await seg.inspectIndexes(scanOpts.maxBatchBytes, this.opts.indexIntervalBytes);
            if (problem) report.rebuiltIndexes.push(path.basename(seg.indexPath));
          } catch (err) {
            if (!isMqError(err, 'CORRUPT_MESSAGE')) throw err;
            // Damage below the recovery point (bad disk, outside interference): verify from here on.
            this.logger.warn({ dir: this.dir, segment: seg.logPath, err: err.message }, 'segment below the recovery point is damaged; verifying from it');
            report.clean = false;
            verifyFrom = i;
            i--;
            continue;
          }
          seg.nextOffset = this.segments[i + 1]!.baseOffset;
          if (epochRebuild) await this.assignEpochsFrom(seg, 0, seg.size);
        } else {
          const problem = await this.loadActiveIndexes(seg, false);
          if (problem) report.rebuiltIndexes.push(path.basename(seg.indexPath));
          try {
            const r = await seg.restoreFrom(problem ? 0 : seg.size, seg.size, { verify: false, ...scanOpts });
            if (r.problem) throw seg.corrupt(r.validEnd, r.problem);
          } catch (err) {
            // A clean marker but an inconsistent tail: verify the whole segment instead.
            this.logger.warn({ dir: this.dir, segment: seg.logPath, err: (err as Error).message }, 'active segment inconsistent after clean shutdown; verifying it');
            report.clean = false;
            verifyFrom = i;
            i--;
            continue;
          }
          if (epochRebuild) await this.assignEpochsFrom(seg, 0, seg.size);
        }
        continue;
      }
      // Verify from the recovery point (or the segment start) to the end.
      let from = 0;
      if (recoveryPoint && seg.baseOffset === recoveryPoint.segmentBase && recoveryPoint.position > 0 && recoveryPoint.position <= seg.size) {
        from = recoveryPoint.position;
        await this.loadActiveIndexes(seg, true);
      } else {
        seg.index = new OffsetIndex();
        seg.timeIndex = new TimeIndex();
      }
      const fileSize = seg.size;
      let result;
      try {
        result = await seg.restoreFrom(from, fileSize, { verify: true, ...scanOpts });
        if (from > 0) recoveryPointUsed = true;
      } catch (err) {
        if (from === 0 || !isMqError(err, 'CORRUPT_MESSAGE')) throw err;
        this.logger.warn({ dir: this.dir, segment: seg.logPath, err: (err as Error).message }, 'recovery point does not match the segment; verifying all of it');
        from = 0;
        seg.index = new OffsetIndex();
        seg.timeIndex = new TimeIndex();
        result = await seg.restoreFrom(0, fileSize, { verify: true, ...scanOpts });
      }
      if (report.recoveredFrom === null || i === verifyFrom) report.recoveredFrom = from === 0 ? seg.baseOffset : recoveryPoint!.offset;
      report.scannedBytes += result.validEnd - from;
      report.scannedBatches += result.batches;
      if (epochRebuild || from < fileSize) await this.assignEpochsFrom(seg, epochRebuild ? 0 : from, result.validEnd);
      seg.markIndexesForRewrite();
      if (result.problem) {
        report.truncated = {
          segment: path.basename(seg.logPath),
          position: result.validEnd,
          offset: seg.nextOffset,
          bytes: fileSize - result.validEnd,
          reason: result.problem,
        };
        this.logger.warn({ dir: this.dir, ...report.truncated }, 'recovery truncated a torn or corrupt log tail');
        await seg.truncateFile(result.validEnd, false);
        for (const later of this.segments.splice(i + 1)) {
          report.deletedSegments.push(path.basename(later.logPath));
          report.truncated.bytes += later.size;
          await later.close();
          await later.deleteFiles();
        }
      }
      if (i < this.segments.length - 1) {
        seg.sealTimeIndex();
        await seg.persistIndexes();
        await seg.syncIndexes();
        await seg.closeIndexFiles();
        seg.index!.trim();
        seg.nextOffset = this.segments[i + 1]!.baseOffset;
        this.touchIndex(seg);
      }
    }
    this.setActive(this.segments[this.segments.length - 1]!);
    this.leo = this.active.nextOffset;
    if (this.active.size === 0 && this.segments.length > 1) {
      // An empty active segment: its base is the log end.
      this.leo = this.active.baseOffset;
    }
    this.startOffset = Math.min(this.startOffset, this.leo);

    if (this.epochs.truncateFromEnd(this.leo) || this.epochs.truncateFromStart(this.startOffset) || epochRebuild) {
      await this.epochs.persist();
    }
    const here = this.point();
    if (report.clean) {
      this.commit = new GroupCommit(here, () => this.point());
      this.lastCheckpoint = here;
    } else {
      // What recovery accepted is in the page cache but maybe not on disk: the
      // old recovery point stays until the next flush syncs the verified tail.
      const first = this.segments[Math.min(verifyFrom, this.segments.length - 1)]!;
      const durable = recoveryPointUsed && recoveryPoint ? recoveryPoint : { offset: first.baseOffset, segmentBase: first.baseOffset, position: 0 };
      this.commit = new GroupCommit(durable, () => this.point());
      this.lastCheckpoint = recoveryPointUsed ? durable : null;
      for (const s of this.segments.slice(Math.min(verifyFrom, this.segments.length - 1))) this.commit.markDirty(s.file);
    }
    if (hadCleanShutdown) {
      await this.fs.unlink(path.join(this.dir, CLEAN_SHUTDOWN_FILE));
      await this.fs.syncDir(this.dir);
    }
    await this.loadProducerState();
    report.durationMs = performance.now() - started;
    this.recovery = report;
    this.startTimers();
    this.logger.info({ dir: this.dir, logStartOffset: this.startOffset, logEndOffset: this.leo, segments: this.segments.length, recovery: report }, 'log opened');
  }

  /** Loads the persisted indexes of the segment that will be written to; returns a problem when they were unusable. */
  private async loadActiveIndexes(seg: Segment, lenient: boolean): Promise<string | null> {
    const [idx, tidx] = await Promise.all([this.fs.readFile(seg.indexPath), this.fs.readFile(seg.timeIndexPath)]);
    const index = idx === null ? null : OffsetIndex.fromBuffer(idx, Math.max(1, seg.size), lenient);
    const timeIndex = tidx === null ? null : TimeIndex.fromBuffer(tidx, lenient);
    seg.index = index ?? new OffsetIndex();
    seg.timeIndex = timeIndex ?? new TimeIndex();
    seg.indexFileBytes = idx?.length ?? 0;
    seg.timeIndexFileBytes = tidx?.length ?? 0;
    if (index && timeIndex && index.byteSize === idx!.length && timeIndex.entries * 12 === tidx!.length) return null;
    seg.markIndexesForRewrite();
    if (seg.size === 0 && idx === null && tidx === null) return null;
    return idx === null || tidx === null ? 'index file missing' : 'index file damaged';
  }

  // ======================================================= producer state

  /**
   * Rebuilds the producer state as of the log end: from the latest snapshot
   * at or below it (later ones are dropped), then batch headers from the
   * snapshot's offset on. Every roll and clean close writes one (empty when
   * no producer id was ever seen), so after a clean close nothing is read,
   * and after a crash at most the active segment's headers. Without any
   * snapshot (a log written before they existed) the scan covers the last
   * two segments, as Kafka does.
   */
  private async loadProducerState(): Promise<void> {
    const snap = await this.snapshots.loadLatest(this.leo, (file, err) => {
      this.logger.warn({ dir: this.dir, file, err: err.message }, 'ignoring unreadable producer snapshot');
    });
    this.producers = snap?.state ?? new ProducerState();
    let from: number;
    if (snap) from = snap.offset;
    else from = this.segments[Math.max(0, this.segments.length - 2)]!.baseOffset;
    from = Math.max(from, this.startOffset);
    if (from < this.leo) {
      for (let i = this.floorSegment(from); i < this.segments.length; i++) {
        const seg = this.segments[i]!;
        const position = seg.index && from > seg.baseOffset ? seg.index.lookup(from - seg.baseOffset) : 0;
        const found: Array<{ header: BatchHeader; position: number; size: number }> = [];
        await scanSegment(seg.file, position, seg.size, { verify: false, minBaseOffset: 0, maxBatchBytes: Number.MAX_SAFE_INTEGER }, (p, h, size) => {
          const last = h.baseOffset + h.lastOffsetDelta;
          if (h.producerId >= 0 && last >= from && last < this.leo) found.push({ header: h, position: p, size });
        });
        for (const { header: h, position: p, size } of found) {
          // A transaction marker: its type from its one control record (read back, a few dozen bytes).
          let control: 'commit' | 'abort' | undefined;
          if (isControl(h)) {
            const bytes = Buffer.alloc(size);
            await seg.file.read(bytes, 0, size, p);
            control = controlTypeOf(bytes, 0);
          }
          this.producers.update(h, h.baseOffset, h.baseOffset + h.lastOffsetDelta, h.maxTimestamp, control);
        }
      }
    }
    this.producers.expire(this.clock(), this.opts.producerIdExpirationMs);
  }

  /** Writes the producer state as of `offset` (the log end) at a roll or close: where a later open starts replaying headers. */
  private async snapshotProducers(offset: number): Promise<void> {
    this.producers.expire(this.clock(), this.opts.producerIdExpirationMs);
    this.bytesSinceSnapshot = 0;
    await this.snapshots.write(offset, this.producers);
  }

  /**
   * At a checkpoint, once producerSnapshotIntervalBytes were appended since
   * the last snapshot: one at the log end, replacing the previous periodic
   * one (roll snapshots stay). It may lie past what is durable; a power
   * failure that loses that tail makes the next open drop it and use an
   * earlier one.
   */
  private async maybeSnapshotPeriodically(): Promise<void> {
    const every = this.opts.producerSnapshotIntervalBytes;
    if (every <= 0 || this.bytesSinceSnapshot < every || this.closed) return;
    // The log end and the state move together, synchronously, in an append: taken here they match.
    const offset = this.leo;
    const data = this.producers.toSnapshot(offset);
    this.bytesSinceSnapshot = 0;
    await this.snapshots.writeData(offset, data);
    const previous = this.periodicSnapshot;
    this.periodicSnapshot = offset;
    if (previous !== null && previous !== offset && !this.segments.some((s) => s.baseOffset === previous)) await this.snapshots.delete(previous);
  }

  producer(producerId: number): ProducerInfo | undefined {
    const e: ProducerEntry | undefined = this.producers.get(producerId);
    if (!e) return undefined;
    const last = e.batches[e.batches.length - 1];
    const lastSeq = last?.lastSeq ?? -1;
    return {
      producerId,
      epoch: e.epoch,
      lastSequence: lastSeq,
      nextSequence: nextSequence(lastSeq),
      lastOffset: last?.lastOffset ?? -1,
      lastTimestamp: e.lastTimestamp,
      batches: e.batches.length,
      txnFirstOffset: e.txnFirstOffset,
    };
  }

  get firstUnstableOffset(): number | undefined {
    return this.producers.firstUnstableOffset();
  }

  onHighWatermarkUpdated(highWatermark: number): void {
    this.producers.onHighWatermarkUpdated(highWatermark);
  }

  abortedTransactions(from: number, to: number): Array<{ producerId: number; firstOffset: number; lastOffset: number }> {
    return this.producers.abortedIn(from, to);
  }

  get producerCount(): number {
    return this.producers.size;
  }

  expireProducers(now: number = this.clock()): number {
    return this.producers.expire(now, this.opts.producerIdExpirationMs);
  }

  /** Re-learns leader epochs from batch headers in [from, end) of a segment (recovery). */
  private async assignEpochsFrom(seg: Segment, from: number, end: number): Promise<void> {
    if (from >= end) return;
    await scanSegment(seg.file, from, end, { verify: false, minBaseOffset: 0, maxBatchBytes: Number.MAX_SAFE_INTEGER }, (_p, h) => {
      this.epochs.assign(h.partitionLeaderEpoch, h.baseOffset);
    });
  }

  /**
   * Applies new values of the options given (a topic's configs changed while
   * its partitions are open): retention and segment rolling from the next
   * check or append, a new flush policy with its timer at once. Options not
   * given keep their value. Throws INVALID_CONFIG (and changes nothing) on a
   * bad value.
   */
  reconfigure(options: LogOptions): void {
    this.ensureUsable();
    const parsed = parseLogOptions(options);
    const next: Record<string, unknown> = { ...this.opts };
    for (const key of Object.keys(options) as Array<keyof LogOptions>) {
      if (options[key] !== undefined) next[key] = parsed[key];
    }
    if (options.maxBatchBytes !== undefined && options.maxDecompressedBytes === undefined) {
      next['maxDecompressedBytes'] = Math.max(parsed.maxBatchBytes, this.opts.maxDecompressedBytes);
    }
    const flushChanged = JSON.stringify(next['flush']) !== JSON.stringify(this.opts.flush);
    this.opts = Object.freeze(next as unknown as ParsedLogOptions);
    if (flushChanged) {
      for (const t of this.timers.splice(0)) clearInterval(t);
      this.unflushedBytes = 0;
      this.startTimers();
    }
  }

  private startTimers(): void {
    const expiry = setInterval(() => {
      if (!this.closed) this.producers.expire(this.clock(), this.opts.producerIdExpirationMs);
    }, Math.min(PRODUCER_EXPIRATION_CHECK_MS, this.opts.producerIdExpirationMs));
    expiry.unref();
    this.timers.push(expiry);
    const flush = this.opts.flush;
    if (flush.policy === 'interval') {
      const t = setInterval(() => this.runInBackground('interval flush', () => this.flush()), flush.intervalMs);
      t.unref();
      this.timers.push(t);
    } else if (this.opts.checkpointIntervalMs > 0) {
      const t = setInterval(() => this.runInBackground('checkpoint', () => this.rw.read(() => this.checkpoint())), this.opts.checkpointIntervalMs);
      t.unref();
      this.timers.push(t);
    }
  }

  private runInBackground(what: string, fn: () => Promise<unknown>): void {
    if (this.closed || this.failure) return;
    const p = fn()
      .catch((err) => {
        if (isMqError(err, 'LOG_CLOSED')) return;
        this.logger.error({ dir: this.dir, err }, `${what} failed`);
      })
      .finally(() => this.background.delete(p));
    this.background.add(p);
  }

  // ================================================================ append

  private ensureUsable(): void {
    if (this.closed) throw new MqError('LOG_CLOSED', `log ${this.dir} is closed`, { dir: this.dir });
    if (this.failure) {
      throw new MqError('STORAGE_ERROR', `log ${this.dir} is offline after a storage failure: ${this.failure.message} (reopen it)`, {
        dir: this.dir,
        cause: this.failure,
      });
    }
  }

  async append(batches: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    this.ensureUsable();
    const assignOffsets = options.assignOffsets ?? true;
    if (options.leaderEpoch !== undefined) checkInt('leaderEpoch', options.leaderEpoch);
    const validation = options.validate === false ? 'header' : assignOffsets ? 'produced' : 'crc';
    if (options.maxBatchBytes !== undefined) checkInt('maxBatchBytes', options.maxBatchBytes, 61);
    const limits =
      options.maxBatchBytes === undefined
        ? this.opts
        : { maxBatchBytes: options.maxBatchBytes, maxDecompressedBytes: Math.max(options.maxBatchBytes, this.opts.maxDecompressedBytes) };
    const parsed = parseAppend(batches, validation, limits, { coordinator: options.coordinator === true, transactional: options.transactional === true });
    if (options.logAppendTime && assignOffsets) markLogAppendTime(batches, parsed);
    // Compressed batches are decompressed and checked under the append mutex (appendLocked), so order is kept.
    const decompress = needsDecompression(parsed, validation);
    // Idempotent producers: the one header field every append reads; the rest only when a batch has an id.
    let producers: 'none' | 'check' | 'record' = 'none';
    for (let i = 0; i < parsed.length; i++) {
      if (parsed[i]!.header.producerId >= 0) {
        producers = options.checkProducers ?? assignOffsets ? 'check' : 'record';
        break;
      }
    }
    const now = decompress ? undefined : this.appendNow(batches, parsed, assignOffsets, options.leaderEpoch, producers);
    if (now !== undefined) return now;
    return this.rw.read(async () => {
      this.ensureUsable();
      const result = await this.appendMutex.run(async () => {
        if (decompress) await verifyCompressed(batches, parsed, limits.maxDecompressedBytes);
        return this.appendLocked(batches, parsed, assignOffsets, options.leaderEpoch, producers);
      });
      const flush = this.opts.flush;
      if (flush.policy === 'always') {
        try {
          await this.commit.syncTo(result.lastOffset + 1);
        } catch (err) {
          throw this.fail('fdatasync', err);
        }
      } else {
        this.countUnflushed(result.bytes);
      }
      return result;
    });
  }

  /**
   * The append without locks or awaits, when nothing else runs on the log:
   * no truncation, retention or close (the RwLock's writers) running or
   * waiting, no other append in the mutex, no segment roll, no new leader
   * epoch to persist, no fsync before the ack (flush policy always), and a
   * write small enough for the file's synchronous pwrite. It is the same
   * append as appendLocked, done within this call, so nothing can interleave
   * with it; it saves the lock, the mutex and four async hops (a dozen
   * promises) per produce request. Returns undefined, having changed
   * nothing, when it does not apply.
   */
  private appendNow(
    buf: Buffer,
    parsed: ParsedBatch[],
    assignOffsets: boolean,
    leaderEpoch: number | undefined,
    producers: 'none' | 'check' | 'record',
  ): AppendResult | undefined {
    const seg = this.active;
    const file = seg.file;
    if (
      this.opts.flush.policy === 'always' ||
      !this.rw.readable ||
      !this.appendMutex.idle ||
      !file.writeSync ||
      !file.truncateSync ||
      buf.length > SYNC_WRITE_MAX_BYTES
    ) {
      return undefined;
    }
    if (leaderEpoch !== undefined) {
      if (this.epochs.wouldAssign(leaderEpoch)) return undefined;
    } else {
      for (const b of parsed) if (this.epochs.wouldAssign(b.header.partitionLeaderEpoch)) return undefined;
    }
    if (producers === 'check') {
      const verdicts = this.producers.checkAll(parsed.map((b) => b.header));
      const dup = this.duplicateResult(verdicts);
      if (dup) return dup;
      if (verdicts.some((v) => v !== null)) return undefined; // some repeated, some new: appendLocked takes the new ones
    }
    const now = this.clock();
    const { baseOffset, span } = this.placeAppend(parsed, assignOffsets);
    if (this.rollNeeded(buf.length, baseOffset, baseOffset + span - 1, now)) return undefined;
    const { appended, lastOffset, logAppendTime } = this.stampBatches(buf, parsed, baseOffset, assignOffsets, leaderEpoch, now);
    const before = seg.size;
    try {
      seg.appendSync(buf, appended, this.opts.indexIntervalBytes);
    } catch (err) {
      // Put the file back as it was, so no half batch exists even on disk.
      try {
        file.truncateSync(before);
      } catch (truncErr) {
        this.fail('truncate after failed write', truncErr);
      }
      throw toStorageError(`append to ${seg.logPath}`, err, { dir: this.dir });
    }
    this.commit.markDirty(file);
    this.leo = lastOffset + 1;
    this.bytesSinceSnapshot += buf.length;
    if (producers !== 'none') this.recordProducers(parsed, appended);
    if (this.opts.flush.policy === 'interval') this.countUnflushed(buf.length);
    return { baseOffset, lastOffset, logAppendTime, batches: parsed.length, bytes: buf.length };
  }

  /** When every batch repeats a cached one: the answer with the original offsets (nothing is written). */
  private duplicateResult(verdicts: SequenceVerdict[]): AppendResult | undefined {
    if (verdicts.some((v) => v === null)) return undefined;
    return { ...offsetsOf(verdicts as Array<NonNullable<SequenceVerdict>>), logAppendTime: -1, batches: 0, bytes: 0, duplicate: true };
  }

  /** Updates the producer state with the batches just written (leader and follower appends alike). */
  private recordProducers(parsed: ParsedBatch[], appended: AppendedBatch[]): void {
    for (let i = 0; i < parsed.length; i++) {
      const h = parsed[i]!.header;
      if (h.producerId < 0) continue;
      // A marker's type (commit or abort) was read by parseAppend from its one control record; a producer's records are never read.
      this.producers.update(h, appended[i]!.baseOffset, appended[i]!.lastOffset, appended[i]!.maxTimestamp, parsed[i]!.control);
    }
  }

  /** flush.interval.bytes: a background flush once that many bytes were appended since the last. */
  private countUnflushed(bytes: number): void {
    const flush = this.opts.flush;
    if (flush.policy !== 'interval' || flush.intervalBytes <= 0) return;
    this.unflushedBytes += bytes;
    if (this.unflushedBytes >= flush.intervalBytes) {
      this.unflushedBytes = 0;
      this.runInBackground('size-triggered flush', () => this.flush());
    }
  }

  /** Where an append goes: its base offset (the log end, or the follower's own) and how many offsets it spans. */
  private placeAppend(parsed: ParsedBatch[], assignOffsets: boolean): { baseOffset: number; span: number } {
    const first = parsed[0]!.header;
    let span = 0;
    for (const b of parsed) span += b.header.lastOffsetDelta + 1;
    let baseOffset: number;
    if (assignOffsets) {
      baseOffset = this.leo;
    } else {
      baseOffset = first.baseOffset;
      if (baseOffset < this.leo) {
        throw new MqError('INVALID_RECORD', `follower append starts at offset ${baseOffset}, below the log end offset ${this.leo}`, {
          baseOffset,
          logEndOffset: this.leo,
        });
      }
      let next = baseOffset;
      for (const b of parsed) {
        if (b.header.baseOffset < next) {
          throw new MqError('INVALID_RECORD', `batch offsets are not increasing: ${b.header.baseOffset} after ${next - 1}`);
        }
        next = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      }
      if (!Number.isSafeInteger(next)) throw new MqError('INVALID_RECORD', `batch offsets up to ${next - 1} are past what offsets can hold (2^53)`);
      span = next - baseOffset;
    }
    // One append goes into one segment, whose index holds offsets relative to its base as int32: refuse before any state changes.
    if (span - 1 > MAX_RELATIVE_OFFSET) {
      throw new MqError('INVALID_RECORD', `the append spans ${span} offsets, more than one segment can hold (${MAX_RELATIVE_OFFSET + 1})`, { span });
    }
    return { baseOffset, span };
  }

  /** Writes offsets (and the leader epoch, and log-append time) into the batches; what each batch covers. */
  private stampBatches(
    buf: Buffer,
    parsed: ParsedBatch[],
    baseOffset: number,
    assignOffsets: boolean,
    leaderEpoch: number | undefined,
    now: number,
  ): { appended: AppendedBatch[]; lastOffset: number; logAppendTime: number } {
    let logAppendTime = -1;
    const appended: AppendedBatch[] = [];
    let offset = baseOffset;
    for (const b of parsed) {
      const h = b.header;
      if (assignOffsets) setBaseOffset(buf, b.position, offset);
      else offset = h.baseOffset;
      if (leaderEpoch !== undefined) setPartitionLeaderEpoch(buf, b.position, leaderEpoch);
      let maxTimestamp = h.maxTimestamp;
      if (h.attributes & ATTR_LOG_APPEND_TIME && assignOffsets) {
        writeInt64(buf, b.position + OFF_MAX_TIMESTAMP, now);
        buf.writeUInt32BE(computeBatchCrc(buf, b.position, b.size), b.position + OFF_CRC);
        maxTimestamp = now;
        logAppendTime = now;
      }
      appended.push({ position: b.position, size: b.size, baseOffset: offset, lastOffset: offset + h.lastOffsetDelta, maxTimestamp });
      offset += h.lastOffsetDelta + 1;
    }
    return { appended, lastOffset: appended[appended.length - 1]!.lastOffset, logAppendTime };
  }

  private async appendLocked(
    buf: Buffer,
    parsed: ParsedBatch[],
    assignOffsets: boolean,
    leaderEpoch: number | undefined,
    producers: 'none' | 'check' | 'record',
  ): Promise<AppendResult> {
    this.ensureUsable();
    // Checked under the append mutex, so no other append to this log runs between the check and the write.
    let repeated: SequenceVerdict[] | undefined;
    if (producers === 'check') {
      const verdicts = this.producers.checkAll(parsed.map((b) => b.header));
      const dup = this.duplicateResult(verdicts);
      if (dup) return dup;
      if (verdicts.some((v) => v !== null)) {
        // Some batches repeat cached ones (a retried request that gained batches): write only the new ones.
        repeated = verdicts;
        const keep = parsed.filter((_, i) => verdicts[i] === null);
        buf = Buffer.concat(keep.map((b) => buf.subarray(b.position, b.position + b.size)));
        let pos = 0;
        parsed = keep.map((b) => ({ ...b, position: (pos += b.size) - b.size }));
      }
    }
    const now = this.clock();
    const { baseOffset, span } = this.placeAppend(parsed, assignOffsets);
    await this.maybeRoll(buf.length, baseOffset, baseOffset + span - 1, now);
    const { appended, lastOffset, logAppendTime } = this.stampBatches(buf, parsed, baseOffset, assignOffsets, leaderEpoch, now);

    const seg = this.active;
    const before = seg.size;
    try {
      await seg.append(buf, appended, this.opts.indexIntervalBytes);
    } catch (err) {
      // Put the file back as it was, so no half batch exists even on disk.
      try {
        await seg.file.truncate(before);
      } catch (truncErr) {
        this.fail('truncate after failed write', truncErr);
      }
      throw toStorageError(`append to ${seg.logPath}`, err, { dir: this.dir });
    }
    this.commit.markDirty(seg.file);
    this.leo = lastOffset + 1;
    this.bytesSinceSnapshot += buf.length;
    if (producers !== 'none') this.recordProducers(parsed, appended);

    // Epochs: the leader's, or those the follower's batches carry.
    let epochChanged = false;
    if (leaderEpoch !== undefined) {
      epochChanged = this.epochs.assign(leaderEpoch, baseOffset);
    } else {
      for (let i = 0; i < parsed.length; i++) {
        if (this.epochs.assign(parsed[i]!.header.partitionLeaderEpoch, appended[i]!.baseOffset)) epochChanged = true;
      }
    }
    if (epochChanged) {
      try {
        await this.epochs.persist();
      } catch (err) {
        throw this.fail('leader epoch checkpoint', err);
      }
    }
    if (repeated) {
      // Each batch answers where it is: a repeated one its original offsets, a new one those just written.
      let next = 0;
      const ranges = repeated.map((v) => (v ? { firstOffset: v.firstOffset, lastOffset: v.lastOffset } : { firstOffset: appended[next]!.baseOffset, lastOffset: appended[next++]!.lastOffset }));
      return { ...offsetsOf(ranges), logAppendTime, batches: parsed.length, bytes: buf.length };
    }
    return { baseOffset, lastOffset, logAppendTime, batches: parsed.length, bytes: buf.length };
  }

  /** Makes `seg` the active segment; its file stays open (the previous one's may be closed when idle). */
  private setActive(seg: Segment): void {
    const previous = this.active as Segment | undefined;
    FileHandleCache.pin(seg.file, previous?.file);
    this.active = seg;
  }

  private async maybeRoll(bytes: number, baseOffset: number, lastOffset: number, now: number): Promise<void> {
    if (this.rollNeeded(bytes, baseOffset, lastOffset, now)) await this.rollTo(baseOffset, now);
  }

  /** Whether an append of `bytes` covering [baseOffset, lastOffset] must start a new segment first. */
  private rollNeeded(bytes: number, baseOffset: number, lastOffset: number, now: number): boolean {
    const seg = this.active;
    if (seg.size === 0) {
      return baseOffset > seg.baseOffset && this.segments.length > 0 && baseOffset - seg.baseOffset > MAX_RELATIVE_OFFSET;
    }
    // segmentMs runs on the log's clock from the segment's creation (or this open), not on record timestamps.
    return seg.size + bytes > this.opts.segmentBytes || now - seg.createdAt > this.opts.segmentMs || lastOffset - seg.baseOffset > MAX_RELATIVE_OFFSET;
  }

  async roll(): Promise<void> {
    this.ensureUsable();
    await this.rw.read(() =>
      this.appendMutex.run(async () => {
        if (this.active.size > 0) await this.rollTo(this.leo, this.clock());
      }),
    );
  }

  /** Starts a new active segment at `base`; the old one is sealed and flushed in the background. */
  private async rollTo(base: number, now: number): Promise<void> {
    const old = this.active;
    let seg: Segment;
    try {
      // The state of every batch below `base`: where a later recovery starts rebuilding from.
      await this.snapshotProducers(base);
      seg = await Segment.create(this.dir, base, this.fs, now);
      await this.fs.syncDir(this.dir);
      await this.checkpointMutex.run(async () => {
        old.sealTimeIndex();
        await old.persistIndexes();
      });
    } catch (err) {
      throw toStorageError(`roll of ${this.dir}`, err);
    }
    old.index!.trim();
    old.nextOffset = base;
    this.segments.push(seg);
    this.setActive(seg);
    this.touchIndex(old);
    this.logger.debug({ dir: this.dir, segment: base, previous: old.baseOffset, previousBytes: old.size }, 'rolled segment');
    // Like Kafka: the closed segment is flushed soon, moving the recovery point past it.
    this.runInBackground('flush of rolled segment', () => this.flush());
  }

  private fail(op: string, err: unknown): MqError {
    const e = toStorageError(op, err, { dir: this.dir });
    if (!this.failure) {
      this.failure = e;
      this.logger.error({ dir: this.dir, err: e }, 'log taken offline after a storage failure');
    }
    return e;
  }

  // ================================================================== read

  async read(fromOffset: number, maxBytes: number, options: ReadOptions = {}): Promise<ReadResult> {
    if (this.closed) throw new MqError('LOG_CLOSED', `log ${this.dir} is closed`, { dir: this.dir });
    checkInt('fromOffset', fromOffset);
    checkInt('maxBytes', maxBytes);
    if (options.maxOffset !== undefined) checkInt('maxOffset', options.maxOffset);
    return this.rw.read(async () => {
      if (this.closed) throw new MqError('LOG_CLOSED', `log ${this.dir} is closed`, { dir: this.dir });
      const leo = this.leo;
      if (fromOffset < this.startOffset || fromOffset > leo) {
        throw new MqError('OFFSET_OUT_OF_RANGE', `offset ${fromOffset} is outside the log [${this.startOffset}, ${leo}]`, {
          offset: fromOffset,
          logStartOffset: this.startOffset,
          logEndOffset: leo,
        });
      }
      const maxOffset = Math.min(options.maxOffset ?? leo, leo);
      const empty = { records: Buffer.alloc(0), nextOffset: fromOffset };
      if (fromOffset >= maxOffset) return empty;
      const hint = this.readHints.get(fromOffset);
      for (let i = this.floorSegment(fromOffset); i < this.segments.length; i++) {
        const seg = this.segments[i]!;
        const end = seg.size;
        const index = seg === this.active ? seg.index! : (await this.indexOf(seg)).index;
        // From a hint we start right at the batch; from the index, up to an interval (plus a batch) before it.
        const exact = hint !== undefined && hint.segment === seg && hint.position < end;
        const lead = exact ? 0 : this.opts.indexIntervalBytes + READ_SLACK_BYTES;
        const chunkBytes = lead + Math.max(HEADER_SIZE, Math.min(MAX_LOCATE_CHUNK, maxBytes));
        const pool = options.pool;
        const located = await seg.locate(Math.max(fromOffset, seg.baseOffset), end, index, chunkBytes, exact ? hint.position : undefined, pool);
        if (!located) continue;
        const { batch, chunk, chunkStart } = located;
        if (batch.header.baseOffset + batch.header.lastOffsetDelta >= maxOffset) {
          pool?.release(chunk);
          return empty;
        }
        const want = Math.min(end - batch.position, Math.max(maxBytes, batch.size));
        let buf = chunk;
        let bufStart = chunkStart;
        if (batch.position + want > chunkStart + chunk.length) {
          pool?.release(chunk);
          buf = await seg.readBytes(batch.position, want, pool);
          bufStart = batch.position;
        }
        let pos = batch.position;
        let total = 0;
        let next = fromOffset;
        const bufEnd = bufStart + buf.length;
        while (pos + HEADER_SIZE <= bufEnd) {
          const h = readBatchHeader(buf, pos - bufStart);
          const size = h.batchLength + LOG_OVERHEAD;
          if (size < HEADER_SIZE || pos + size > bufEnd) break;
          if (total > 0 && total + size > maxBytes) break;
          const last = h.baseOffset + h.lastOffsetDelta;
          if (last >= maxOffset) break;
          total += size;
          next = last + 1;
          pos += size;
        }
        const from = batch.position - bufStart;
        this.rememberReadEnd(next, seg, pos);
        if (total === 0) {
          pool?.release(buf);
          return { records: Buffer.alloc(0), nextOffset: next };
        }
        return { records: buf.subarray(from, from + total), nextOffset: next };
      }
      return empty;
    });
  }

  /** Remembers where a read ended, so a consumer's next read starts there without an index lookup. */
  private rememberReadEnd(offset: number, segment: Segment, position: number): void {
    if (this.readHints.size >= MAX_READ_HINTS) this.readHints.delete(this.readHints.keys().next().value!);
    this.readHints.set(offset, { segment, position });
  }

  /** Index of the last segment whose base offset is <= `offset` (0 when none). */
  private floorSegment(offset: number): number {
    let lo = 0;
    let hi = this.segments.length - 1;
    let found = 0;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (this.segments[mid]!.baseOffset <= offset) {
        found = mid;
        lo = mid + 1;
      } else {
        hi = mid - 1;
      }
    }
    return found;
  }

  /** The offset index of a closed segment, loading it (bounded LRU) when evicted. */
  private async indexOf(seg: Segment): Promise<{ index: OffsetIndex; timeIndex: TimeIndex }> {
    if (seg.index && seg.timeIndex) {
      this.touchIndex(seg);
      return { index: seg.index, timeIndex: seg.timeIndex };
    }
    let loading = this.loadingIndexes.get(seg);
    if (!loading) {
      loading = seg
        .loadIndexes(Number.MAX_SAFE_INTEGER, this.opts.indexIntervalBytes)
        .then((problem) => {
          if (problem) this.logger.warn({ dir: this.dir, segment: seg.logPath, problem }, 'rebuilt segment index');
          const loaded = { index: seg.index!, timeIndex: seg.timeIndex! };
          this.touchIndex(seg);
          return loaded;
        })
        .finally(() => this.loadingIndexes.delete(seg));
      this.loadingIndexes.set(seg, loading);
    }
    return loading;
  }

  private touchIndex(seg: Segment): void {
    if (seg !== this.active && !seg.deleted && seg.index) this.indexCache.touch(seg);
    else this.indexCache.forget(seg);
  }

  // ========================================================== by timestamp

  async offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null> {
    if (this.closed) throw new MqError('LOG_CLOSED', `log ${this.dir} is closed`, { dir: this.dir });
    if (ts === EARLIEST_TIMESTAMP) return { offset: this.startOffset, timestamp: -1 };
    if (ts === LATEST_TIMESTAMP) return { offset: this.leo, timestamp: -1 };
    checkInt('timestamp', ts);
    return this.rw.read(async () => {
      for (let i = this.floorSegment(this.startOffset); i < this.segments.length; i++) {
        const seg = this.segments[i]!;
        if (seg.maxTimestamp < ts || seg.size === 0) continue;
        const { index, timeIndex } = seg === this.active ? { index: seg.index!, timeIndex: seg.timeIndex! } : await this.indexOf(seg);
        const e = timeIndex.lowerEntry(ts);
        const startOffset = Math.max(this.startOffset, e < 0 ? seg.baseOffset : seg.baseOffset + timeIndex.relativeOffsetAt(e));
        const from = index.lookup(Math.max(0, startOffset - seg.baseOffset));
        let found: { position: number; size: number } | null = null;
        const end = seg.size;
        await scanSegment(seg.file, from, end, { verify: false, minBaseOffset: 0, maxBatchBytes: Number.MAX_SAFE_INTEGER }, (pos, h, size) => {
          if (h.maxTimestamp >= ts && h.baseOffset + h.lastOffsetDelta >= this.startOffset && h.recordCount > 0) {
            found = { position: pos, size };
            return true;
          }
          return false;
        });
        if (!found) continue;
        const { position, size } = found;
        const decoded = await decodeBatch(await seg.readBytes(position, size), 0);
        for (const r of decoded.records) {
          if (r.timestamp >= ts && r.offset >= this.startOffset) return { offset: r.offset, timestamp: r.timestamp };
        }
      }
      return null;
    });
  }

  // ============================================================ truncation

  async truncateTo(offset: number): Promise<void> {
    this.ensureUsable();
    checkInt('offset', offset);
    await this.rw.write(async () => {
      this.ensureUsable();
      if (offset >= this.leo) return;
      this.truncations++;
      try {
        if (offset < this.startOffset) {
          await this.restartAt(offset);
          return;
        }
        const i = this.floorSegment(offset);
        const seg = this.segments[i]!;
        const later = this.segments.slice(i + 1);
        if (seg !== this.active) {
          // Load its indexes and take them out of the (possibly shared) cache: it becomes the active segment.
          const loaded = await this.indexOf(seg);
          this.untouchIndex(seg);
          seg.index = loaded.index;
          seg.timeIndex = loaded.timeIndex;
        }
        const located = await seg.locate(offset, seg.size, seg.index!, this.opts.indexIntervalBytes + 2 * HEADER_SIZE + 65536);
        if (located && located.batch.header.baseOffset < this.startOffset) {
          // The batch holding the log start goes: nothing visible is left, so restart at the log start.
          await this.restartAt(this.startOffset);
          return;
        }
        const position = located ? located.batch.position : seg.size;
        await seg.restoreFrom(position, position, { verify: false, maxBatchBytes: Number.MAX_SAFE_INTEGER, indexIntervalBytes: this.opts.indexIntervalBytes });
        this.readHints.clear();
        await seg.truncateFile(position);
        await this.deleteSegmentFiles(later);
        this.segments.splice(i + 1);
        this.setActive(seg);
        this.leo = seg.size === 0 ? seg.baseOffset : seg.nextOffset;
        if (this.epochs.truncateFromEnd(this.leo)) await this.epochs.persist();
        // Producer state: back to the latest snapshot at or below the new end, then forward over the headers.
        await this.loadProducerState();
        const point = this.point();
        if (this.commit.durable.offset > point.offset || later.length > 0) {
          this.commit.lowerTo(point);
          await this.checkpointMutex.run(() => this.writeRecoveryPoint(this.commit.durable));
        }
        await this.fs.syncDir(this.dir);
        this.logger.info({ dir: this.dir, requested: offset, logEndOffset: this.leo }, 'log truncated');
      } catch (err) {
        throw this.fail(`truncation of ${this.dir}`, err);
      }
    });
  }

  private untouchIndex(seg: Segment): void {
    this.indexCache.forget(seg);
  }

  /**
   * Empties the log and restarts it at `offset`, which may lie past the log
   * end: what a follower does when its log is behind the leader's log start
   * (Kafka's truncateFullyAndStartAt). Crash-safe through an intent file.
   */
  async truncateFullyAndStartAt(offset: number): Promise<void> {
    this.ensureUsable();
    checkInt('offset', offset);
    await this.rw.write(async () => {
      this.ensureUsable();
      this.truncations++;
      try {
        await this.restartAt(offset);
      } catch (err) {
        throw this.fail(`restart of ${this.dir} at ${offset}`, err);
      }
    });
  }

  /** Empties the log and restarts it at `offset`. Caller holds the write lock. */
  private async restartAt(offset: number): Promise<void> {
    // Intent first: a crash part-way is finished by the next open (see finishRestart).
    const marker = path.join(this.dir, RESTART_FILE);
    await this.fs.writeFileAtomic(marker, Buffer.from(`${offset}\n`));
    await this.deleteSegmentFiles(this.segments);
    await this.writeRestartCheckpoints(offset);
    this.producers = new ProducerState();
    const seg = await Segment.create(this.dir, offset, this.fs, this.clock());
    seg.markIndexesForRewrite();
    this.segments = [seg];
    this.setActive(seg);
    this.leo = offset;
    this.startOffset = offset;
    this.commit.durable = { offset, segmentBase: offset, position: 0 };
    await this.fs.syncDir(this.dir);
    await this.fs.unlink(marker);
    await this.fs.syncDir(this.dir);
    this.logger.info({ dir: this.dir, offset }, 'log emptied and restarted');
  }

  private async writeRestartCheckpoints(offset: number): Promise<void> {
    // Nothing of the old log remains, so neither does its producer state (Kafka clears it too).
    await this.snapshots.deleteAll();
    await this.checkpointMutex.run(() => this.writeRecoveryPoint({ offset, segmentBase: offset, position: 0 }));
    await this.logStartFile.write([[offset]]);
    this.epochs.clear();
    await this.epochs.persist();
  }

  /** Completes a truncateFullyAndStartAt that a crash interrupted; returns whether there was one. */
  private async finishRestart(files: string[]): Promise<boolean> {
    if (!files.includes(RESTART_FILE)) return false;
    const data = await this.fs.readFile(path.join(this.dir, RESTART_FILE));
    const offset = data ? Number(data.toString('utf8').trim()) : NaN;
    if (Number.isSafeInteger(offset) && offset >= 0) {
      for (const f of files) {
        if (parseSegmentName(f, LOG_SUFFIX) !== null || parseSegmentName(f, INDEX_SUFFIX) !== null || parseSegmentName(f, TIME_INDEX_SUFFIX) !== null) {
          await this.fs.unlink(path.join(this.dir, f));
        }
      }
      await this.writeRestartCheckpoints(offset);
      this.logger.warn({ dir: this.dir, offset }, 'finished restarting the log at an offset (interrupted by a crash)');
    }
    await this.fs.unlink(path.join(this.dir, RESTART_FILE));
    await this.fs.syncDir(this.dir);
    return true;
  }

  private async deleteSegmentFiles(segs: Segment[]): Promise<void> {
    this.readHints.clear();
    for (const seg of segs) {
      seg.deleted = true;
      this.untouchIndex(seg);
      this.commit.forget(seg.file);
      await seg.close();
      await seg.deleteFiles();
    }
  }

  async deleteRecordsBefore(offset: number): Promise<void> {
    this.ensureUsable();
    checkInt('offset', offset);
    await this.rw.write(async () => {
      this.ensureUsable();
      if (offset > this.leo) {
        throw new MqError('OFFSET_OUT_OF_RANGE', `cannot delete records before ${offset}: the log ends at ${this.leo}`, {
          offset,
          logEndOffset: this.leo,
        });
      }
      if (offset <= this.startOffset) return;
      try {
        await this.advanceStart(offset);
        await this.deleteSegmentsBelow(offset);
      } catch (err) {
        throw this.fail(`deleteRecordsBefore in ${this.dir}`, err);
      }
    });
  }

  private async advanceStart(offset: number): Promise<void> {
    if (offset <= this.startOffset) return;
    this.startOffset = offset;
    await this.logStartFile.write([[offset]]);
    if (this.epochs.truncateFromStart(offset)) await this.epochs.persist();
    await this.snapshots.deleteBelow(offset);
    this.producers.pruneAborted(offset);
  }

  /** Deletes segments holding only offsets below `offset`, rolling the active one first if needed. Returns bytes deleted. */
  private async deleteSegmentsBelow(offset: number): Promise<{ count: number; bytes: number }> {
    let n = 0;
    while (n < this.segments.length - 1 && this.segments[n + 1]!.baseOffset <= offset) n++;
    if (n === this.segments.length - 1 && this.active.size > 0 && this.leo <= offset) {
      await this.appendMutex.run(() => this.rollTo(this.leo, this.clock()));
      n++;
    }
    const doomed = this.segments.slice(0, n);
    if (doomed.length === 0) return { count: 0, bytes: 0 };
    let bytes = 0;
    for (const s of doomed) bytes += s.size;
    this.segments.splice(0, n);
    // Background work queued by a roll must not touch the deleted files.
    await this.deleteSegmentFiles(doomed);
    await this.fs.syncDir(this.dir);
    this.logger.info({ dir: this.dir, segments: doomed.map((s) => s.baseOffset), bytes, logStartOffset: this.startOffset }, 'deleted old segments');
    return { count: doomed.length, bytes };
  }

  async applyRetention(now: number = this.clock(), options: { upToOffset?: number } = {}): Promise<{ deletedSegments: number; deletedBytes: number }> {
    this.ensureUsable();
    if (options.upToOffset !== undefined) checkInt('upToOffset', options.upToOffset);
    return this.rw.write(async () => {
      this.ensureUsable();
      let cut = 0; // segments [0, cut) go
      if (this.opts.retentionMs >= 0) {
        const expired = (s: Segment) => (s.size === 0 ? s !== this.active : now - s.largestTimestamp > this.opts.retentionMs);
        while (cut < this.segments.length && expired(this.segments[cut]!)) cut++;
      }
      if (this.opts.retentionBytes >= 0) {
        let size = 0;
        for (const s of this.segments.slice(cut)) size += s.size;
        while (cut < this.segments.length - 1 && size - this.segments[cut]!.size >= this.opts.retentionBytes) {
          size -= this.segments[cut]!.size;
          cut++;
        }
      }
      if (options.upToOffset !== undefined) {
        // Only segments that end at or below upToOffset (a replica's high watermark) may go.
        const end = (i: number) => (i + 1 < this.segments.length ? this.segments[i + 1]!.baseOffset : this.leo);
        while (cut > 0 && end(cut - 1) > options.upToOffset) cut--;
      }
      if (cut === 0) return { deletedSegments: 0, deletedBytes: 0 };
      const newStart = cut < this.segments.length ? this.segments[cut]!.baseOffset : this.leo;
      try {
        await this.advanceStart(Math.max(newStart, this.startOffset));
        const r = await this.deleteSegmentsBelow(newStart);
        return { deletedSegments: r.count, deletedBytes: r.bytes };
      } catch (err) {
        throw this.fail(`retention in ${this.dir}`, err);
      }
    });
  }

  // ============================================================ compaction

  async compact(options: CompactOptions = {}): Promise<CompactionResult> {
    this.ensureUsable();
    if (options.upToOffset !== undefined) checkInt('upToOffset', options.upToOffset);
    const now = options.now ?? this.clock();
    const maxKeys = options.maxKeys ?? DEFAULT_COMPACTION_MAX_KEYS;
    return this.compactionMutex.run(async () => {
      const result: CompactionResult = { cleanedSegments: 0, removedRecords: 0, removedBatches: 0, unreadableBatches: 0, bytesBefore: 0, bytesAfter: 0 };
      // A batch no reader can decode (stored before produce validated records) is kept as it is, and said once per pass.
      let firstUnreadable: { baseOffset: number; lastOffset: number; err: MqError } | undefined;
      const unreadable = {
        maxDecompressedBytes: this.opts.maxDecompressedBytes,
        onUnreadable: (batch: { baseOffset: number; lastOffset: number }, err: MqError) => {
          result.unreadableBatches++;
          firstUnreadable ??= { ...batch, err };
        },
      };
      try {
        return await this.compactPass(options, now, maxKeys, result, unreadable);
      } finally {
        if (firstUnreadable) {
          const { baseOffset, lastOffset, err } = firstUnreadable;
          this.logger.warn(
            { dir: this.dir, unreadableBatches: result.unreadableBatches, baseOffset, lastOffset, code: err.code, err: err.message },
            'compaction kept batches it cannot decode as they are (the first is named); the rest of the log was cleaned',
          );
        }
      }
    });
  }

  private async compactPass(
    options: CompactOptions,
    now: number,
    maxKeys: number,
    result: CompactionResult,
    unreadable: UnreadableBatches,
  ): Promise<CompactionResult> {
    // Phase 1, without the log's lock (closed segments are immutable; appends,
    // reads and retention go on): write cleaned copies. A truncation meanwhile
    // voids the plan (the key map could name records that no longer exist).
    const version = this.truncations;
    const intact = (seg: Segment) => !this.closed && !seg.deleted && this.segments.includes(seg) && this.truncations === version;
    this.ensureUsable();
    const upTo = Math.min(options.upToOffset ?? Number.MAX_SAFE_INTEGER, this.active.baseOffset);
    const candidates = this.segments.filter((s) => s !== this.active && s.nextOffset <= upTo && s.size > 0);
    if (candidates.length === 0) return result;
    const parts = this.segments.map((segment) => ({ segment, end: segment.size }));
    let map: Map<string, number>;
    try {
      ({ map } = await buildOffsetMap(parts, maxKeys, options.upToOffset ?? Number.MAX_SAFE_INTEGER, unreadable));
    } catch (err) {
      if (parts.every((p) => intact(p.segment))) throw err;
      return result; // the log changed under us (retention, truncation, close): nothing done, try again later
    }
    const planned: Array<{ seg: Segment; cleaned: string; sizeBefore: number; size: number; removedRecords: number; removedBatches: number }> = [];
    for (const seg of candidates) {
      if (!intact(seg)) continue;
      const cleaned = seg.logPath + CLEANED_SUFFIX;
      const file = await this.fs.open(cleaned, true);
      try {
        const sizeBefore = seg.size;
        const r = await cleanSegment(seg, file, map, now - this.opts.deleteRetentionMs, unreadable);
        if (r.removedRecords === 0) await this.fs.unlink(cleaned);
        else planned.push({ seg, cleaned, sizeBefore, ...r });
      } catch (err) {
        await this.fs.unlink(cleaned);
        if (intact(seg)) throw err;
      } finally {
        await file.close();
      }
    }
    // Phase 2, alone: swap each cleaned copy in (indexes first removed, so a crash never pairs a new log with old indexes).
    await this.rw.write(async () => {
      for (const p of planned) {
        if (!intact(p.seg) || p.seg.size !== p.sizeBefore) {
          await this.fs.unlink(p.cleaned);
          continue;
        }
        try {
          await this.swapCleaned(p.seg, p.cleaned);
        } catch (err) {
          throw this.fail(`compaction of ${p.seg.logPath}`, err);
        }
        result.cleanedSegments++;
        result.removedRecords += p.removedRecords;
        result.removedBatches += p.removedBatches;
        result.bytesBefore += p.sizeBefore;
        result.bytesAfter += p.size;
      }
    });
    if (result.cleanedSegments > 0) this.logger.info({ dir: this.dir, ...result }, 'compacted log');
    return result;
  }

  private async swapCleaned(old: Segment, cleaned: string): Promise<void> {
    this.readHints.clear();
    this.untouchIndex(old);
    this.commit.forget(old.file);
    await old.close();
    await this.fs.unlink(old.indexPath);
    await this.fs.unlink(old.timeIndexPath);
    await this.fs.syncDir(this.dir);
    await this.fs.rename(cleaned, old.logPath);
    await this.fs.syncDir(this.dir);
    const seg = await Segment.open(this.dir, old.baseOffset, this.fs, this.clock());
    await seg.rebuildIndexes(Number.MAX_SAFE_INTEGER, this.opts.indexIntervalBytes);
    seg.sealTimeIndex();
    seg.markIndexesForRewrite();
    await seg.persistIndexes();
    await seg.syncIndexes();
    await seg.closeIndexFiles();
    seg.index!.trim();
    seg.nextOffset = old.nextOffset;
    this.segments[this.segments.indexOf(old)] = seg;
    old.deleted = true;
    this.touchIndex(seg);
  }

  // ================================================================= flush

  async flush(): Promise<void> {
    this.ensureUsable();
    await this.rw.read(async () => {
      if (this.closed) return;
      try {
        await this.commit.syncAll();
      } catch (err) {
        throw this.fail('fdatasync', err);
      }
      await this.checkpoint();
    });
  }

  /**
   * Writes the recovery point: index entries of every segment up to the
   * durable point are written and synced first, so everything the
   * checkpoint vouches for is on disk.
   */
  private async checkpoint(): Promise<void> {
    await this.checkpointMutex.run(async () => {
      const target = this.commit.durable;
      const prev = this.lastCheckpoint;
      if (prev && prev.offset === target.offset && prev.segmentBase === target.segmentBase && prev.position === target.position) return;
      try {
        for (const seg of this.segments) {
          if (seg.baseOffset > target.segmentBase) break;
          if (seg.deleted) continue;
          await seg.persistIndexes();
          await seg.syncIndexes();
          if (seg !== this.active) await seg.closeIndexFiles();
        }
        await this.writeRecoveryPoint(target);
      } catch (err) {
        throw this.fail('recovery point checkpoint', err);
      }
    });
    try {
      await this.maybeSnapshotPeriodically();
    } catch (err) {
      // Only replay work is lost: the next checkpoint tries again.
      this.logger.warn({ dir: this.dir, err: (err as Error).message }, 'producer snapshot failed');
    }
  }

  private async writeRecoveryPoint(point: LogPosition): Promise<void> {
    await this.recoveryPointFile.write([[point.offset, point.segmentBase, point.position]]);
    this.lastCheckpoint = point;
  }

  // ================================================================= close

  /** Releases what a failed open took. */
  async abandon(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    for (const seg of this.segments) await seg.close().catch(() => undefined);
    await this.lock.release();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    for (const t of this.timers) clearInterval(t);
    // Let queued background flushes finish before the log stops taking work.
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
    await this.rw.write(async () => {
      if (this.closed) return;
      this.closed = true;
      let error: unknown = null;
      try {
        if (!this.failure) {
          await this.commit.syncAll();
          this.active.sealTimeIndex();
          await this.checkpoint();
          await this.snapshotProducers(this.leo);
          await this.fs.writeFileAtomic(path.join(this.dir, CLEAN_SHUTDOWN_FILE), Buffer.from(`${this.leo}\n`));
        }
      } catch (err) {
        error = err;
      }
      for (const seg of this.segments) {
        this.indexCache.forget(seg);
        try {
          await seg.close();
        } catch (err) {
          error ??= err;
        }
      }
      await this.lock.release();
      this.logger.info({ dir: this.dir, logEndOffset: this.leo, clean: error === null && !this.failure }, 'log closed');
      if (error) throw toStorageError(`close of ${this.dir}`, error);
    });
  }
}

/** Opens (creating when needed) the log in `dir`, recovering it after an unclean stop. */
export async function openLog(dir: string, options: LogOptions = {}, components: LogComponents = {}): Promise<Log> {
  const opts = parseLogOptions(options);
  const fs = components.fs ?? nodeFileSystem;
  const clock = components.clock ?? Date.now;
  const logger = components.logger ?? silentLogger;
  try {
    await fs.mkdir(dir);
  } catch (err) {
    throw toStorageError(`creating log directory ${dir}`, err, { dir });
  }
  const lock = await lockDir(dir, fs);
  const files = new FileHandleCache(fs, opts.maxOpenSegmentFiles, (file, err) =>
    logger.warn({ dir, file, err: (err as Error).message }, 'closing an idle segment file failed'),
  );
  const log = new PartitionLog(dir, opts, files, clock, logger, lock, components.indexCache);
  try {
    await log.load();
  } catch (err) {
    await log.abandon();
    throw toStorageError(`opening log ${dir}`, err, { dir });
  }
  return log;
}
