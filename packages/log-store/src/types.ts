/**
 * The public types of a partition log: the `Log` interface (the contract in
 * docs/CONTRACTS.md plus additions), its options per call, its results and
 * the recovery report, and the components `openLog` takes.
 */
import type { Clock, Logger } from '@mq/protocol/components';
import type { CompactOptions, CompactionResult } from './compaction.js';
import type { LogFileSystem } from './file-system.js';
import type { IndexCache } from './index-cache.js';
import type { LeaderEpochCache } from './leader-epoch-cache.js';
import type { ReadBufferPool } from './read-buffer-pool.js';
import type { LogOptions } from './options.js';

export interface LogComponents {
  logger?: Logger;
  /** Milliseconds since the epoch; drives rolling, retention and log-append time. */
  clock?: Clock;
  /** All file I/O goes through this (tests inject faults here). */
  fs?: LogFileSystem;
  /** A cache shared by many logs (one budget per broker); default: one of `indexCacheBytes` for this log. */
  indexCache?: IndexCache;
}

export interface AppendOptions {
  /** Default true (leader): patch base offsets in place. False (follower): append the batches exactly as given. */
  assignOffsets?: boolean;
  /** Patch partitionLeaderEpoch in every batch and record the epoch in the epoch cache. */
  leaderEpoch?: number;
  /**
   * Default true: check every batch before anything changes. A leader append
   * (`assignOffsets`) checks what a producer sent as Kafka's LogValidator
   * does: CRC-32C, header consistency (lastOffsetDelta = recordCount - 1,
   * producer fields, timestamps), and every record's framing, decompressed
   * within `maxDecompressedBytes`. A follower append checks length, magic and
   * CRC-32C. False checks length and magic only (the caller vouches).
   */
  validate?: boolean;
  /** Leader: mark every batch LogAppendTime, stamped with the log's clock (a topic's message.timestamp.type). */
  logAppendTime?: boolean;
  /** The largest batch this append accepts (a topic's current max.message.bytes); default the log's `maxBatchBytes`. */
  maxBatchBytes?: number;
  /**
   * Check idempotent producers' epochs and sequences before appending
   * (default: when `assignOffsets`, i.e. on the leader). A batch repeating
   * one of a producer's last 5 is not written: the append answers its
   * original offsets with `duplicate`. Followers only record the state.
   */
  checkProducers?: boolean;
  /**
   * A coordinator's append through the partition leader, never a producer's:
   * the transaction coordinator's markers (control batches; each ends its
   * producer's open transaction in this log) and the group coordinator's
   * transactional offset commits (transactional batches without a sequence:
   * only the producer epoch is checked).
   */
  coordinator?: boolean;
  /**
   * The produce request named its transactional id (a transactional producer):
   * transactional batches are accepted. Without it they are INVALID_RECORD.
   */
  transactional?: boolean;
}

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  /** The broker time stamped into log-append-time batches, or -1 when every batch uses create time. */
  logAppendTime: number;
  batches: number;
  bytes: number;
  /** Every batch repeated one already in the log: nothing was written, the offsets are the originals'. */
  duplicate?: boolean;
  /**
   * Set only when the batches do not lie back to back from `baseOffset`: an
   * idempotent producer's retry whose repeated batches answer their original
   * offsets while its new ones were written at the log end. The base offset of
   * each batch of the append, in the order given. When absent, batch i starts
   * where batch i-1 ended.
   */
  batchBaseOffsets?: number[];
}

/** What a log knows of one idempotent producer. */
export interface ProducerInfo {
  producerId: number;
  epoch: number;
  lastSequence: number;
  /** The sequence its next batch must start with. */
  nextSequence: number;
  lastOffset: number;
  /** Largest batch max timestamp: producer.id.expiration.ms counts from it. */
  lastTimestamp: number;
  /** Batches remembered for duplicate detection (at most 5). */
  batches: number;
  /** First offset of its open transaction in this log, -1 when none. */
  txnFirstOffset: number;
}

export interface ReadOptions {
  /** Only batches whose last offset is below this (the high watermark). */
  maxOffset?: number;
  /**
   * Reads into buffers of this pool. The returned `records` then lies in a
   * pooled buffer: release it to the pool once nothing reads it any more.
   */
  pool?: ReadBufferPool;
}

export interface ReadResult {
  records: Buffer;
  nextOffset: number;
}

export interface RecoveryTruncation {
  segment: string;
  position: number;
  offset: number;
  bytes: number;
  reason: string;
}

export interface RecoveryReport {
  /** True when the log was closed cleanly and opened without a scan. */
  clean: boolean;
  /** Offset recovery started verifying from (the recovery point), or null after a clean shutdown. */
  recoveredFrom: number | null;
  /** Bytes checked (header + CRC) during recovery. */
  scannedBytes: number;
  scannedBatches: number;
  /** Where the log was cut, when a torn or corrupt batch was found. */
  truncated: RecoveryTruncation | null;
  /** Whole segments dropped because they followed the cut. */
  deletedSegments: string[];
  /** Index files that were missing or damaged and were rebuilt. */
  rebuiltIndexes: string[];
  /** Checkpoint files that were unreadable (and ignored). */
  badCheckpoints: string[];
  durationMs: number;
}

export interface Log {
  readonly dir: string;
  readonly logStartOffset: number;
  /** The next offset to assign. */
  readonly logEndOffset: number;
  /** Bytes of the segment .log files on disk. */
  readonly size: number;
  readonly segmentCount: number;
  /** Everything below this offset has been fdatasync'ed. */
  readonly durableOffset: number;
  readonly leaderEpochs: LeaderEpochCache;
  /** What opening the log found and repaired. */
  readonly recovery: RecoveryReport;
  append(batches: Buffer, options?: AppendOptions): Promise<AppendResult>;
  read(fromOffset: number, maxBytes: number, options?: ReadOptions): Promise<ReadResult>;
  truncateTo(offset: number): Promise<void>;
  /** Empties the log and restarts it at `offset` (may lie past the log end): a follower behind the leader's log start. Crash-safe. */
  truncateFullyAndStartAt(offset: number): Promise<void>;
  offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null>;
  deleteRecordsBefore(offset: number): Promise<void>;
  /** New values of some options while the log is open (a topic's configs changed); the others keep theirs. */
  reconfigure(options: LogOptions): void;
  /** Time and size retention; with `upToOffset` (a replica's high watermark) only segments ending at or below it go. */
  applyRetention(now?: number, options?: { upToOffset?: number }): Promise<{ deletedSegments: number; deletedBytes: number }>;
  /** Rolls the active segment now (when it holds data). */
  roll(): Promise<void>;
  /**
   * Key-based compaction of the closed segments (cleanup.policy=compact):
   * keeps the latest record per key, drops tombstones older than
   * `deleteRetentionMs`. Offsets do not change. Reads, appends and retention
   * continue while the cleaned copies are written; the swap runs alone; a
   * truncation in between voids the plan.
   */
  compact(options?: CompactOptions): Promise<CompactionResult>;
  /** The idempotent-producer state of one producer id, as of the log end. */
  producer(producerId: number): ProducerInfo | undefined;
  /** Producer ids the log currently tracks. */
  readonly producerCount: number;
  /**
   * The first offset of the oldest transaction still unstable in this log:
   * open (transactional batches appended, no marker yet), or ended by a
   * marker the high watermark has not passed (a leader change could lose
   * the marker and reopen it; see onHighWatermarkUpdated). Undefined: none.
   * The last stable offset of a partition is the lower of it and the high
   * watermark.
   */
  readonly firstUnstableOffset: number | undefined;
  /**
   * The replica's high watermark reached `highWatermark` (leader or
   * follower, on every advance and when it starts): transactions whose
   * marker lies below it stop counting as unstable.
   */
  onHighWatermarkUpdated(highWatermark: number): void;
  /**
   * The log's aborted-transactions index: transactions aborted whose records
   * may lie in [from, to) (abort marker at or after `from`, first offset
   * before `to`). Kept with the producer state (snapshots, rebuilt from batch
   * headers and markers after a crash); forgotten below the log start.
   */
  abortedTransactions(from: number, to: number): Array<{ producerId: number; firstOffset: number; lastOffset: number }>;
  /** Drops producers idle past `producerIdExpirationMs` (also done every 10 minutes); returns how many. */
  expireProducers(now?: number): number;
  flush(): Promise<void>;
  close(): Promise<void>;
}
