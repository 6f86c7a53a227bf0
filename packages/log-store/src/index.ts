export { openLog, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP } from './log.js';
export { parseLogOptions } from './options.js';
export {
  DEFAULT_CHECKPOINT_INTERVAL_MS,
  DEFAULT_DELETE_RETENTION_MS,
  DEFAULT_FLUSH_INTERVAL_MS,
  DEFAULT_INDEX_CACHE_BYTES,
  DEFAULT_INDEX_INTERVAL_BYTES,
  DEFAULT_MAX_BATCH_BYTES,
  DEFAULT_PRODUCER_ID_EXPIRATION_MS,
  DEFAULT_PRODUCER_SNAPSHOT_INTERVAL_BYTES,
  DEFAULT_RETENTION_BYTES,
  DEFAULT_RETENTION_MS,
  DEFAULT_SEGMENT_BYTES,
  DEFAULT_SEGMENT_MS,
} from './options.js';
export { nodeFileSystem } from './file-system.js';
export { IndexCache } from './index-cache.js';
export { ReadBufferPool, DEFAULT_MAX_IDLE_BYTES, DEFAULT_MAX_POOLED_BYTES, DEFAULT_MIN_POOLED_BYTES, type ReadBufferPoolOptions, type ReadBufferPoolStats } from './read-buffer-pool.js';
export { LOCK_FILE, lockDir } from './dir-lock.js';
export { UNDEFINED_EPOCH, UNDEFINED_OFFSET } from './leader-epoch-cache.js';

export type {
  AppendOptions,
  AppendResult,
  Log,
  LogComponents,
  ProducerInfo,
  ReadOptions,
  ReadResult,
  RecoveryReport,
  RecoveryTruncation,
} from './types.js';
export type { CompactOptions, CompactionResult } from './compaction.js';
export type { FlushPolicy, LogOptions, ParsedLogOptions } from './options.js';
export type { FileInfo, LogFile, LogFileSystem } from './file-system.js';
export type { CachedIndexes } from './index-cache.js';
export type { DirLock } from './dir-lock.js';
export type { EpochEntry, LeaderEpochCache } from './leader-epoch-cache.js';
