/**
 * Options of one partition log: the `LogOptions` a caller passes, the
 * DEFAULT_* values and `parseLogOptions()`, which normalises, rejects
 * contradictions and returns a frozen copy the caller cannot mutate later.
 */
import { DEFAULT_MAX_DECOMPRESSED_BYTES } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';
import { DEFAULT_PRODUCER_ID_EXPIRATION_MS } from './producer-state.js';

export type FlushPolicy =
  | { policy: 'always' }
  | { policy: 'interval'; intervalMs?: number; intervalBytes?: number }
  | { policy: 'os' };

export interface LogOptions {
  /** Roll the active segment when it would grow past this many bytes (default 1 GiB, at most 2 GiB - 1). */
  segmentBytes?: number;
  /** Roll the active segment when its first batch is older than this (default 7 days). */
  segmentMs?: number;
  /** One sparse offset-index entry every this many log bytes (default 4096). */
  indexIntervalBytes?: number;
  /** Largest batch accepted, header included (default 1 MiB). */
  maxBatchBytes?: number;
  /**
   * Largest records section a produced batch may decompress to (default:
   * the larger of maxBatchBytes and 32 MiB). A batch past it is refused with
   * RECORD_TOO_LARGE before anything is inflated past the bound.
   */
  maxDecompressedBytes?: number;
  /**
   * Segment `.log` files kept open at once (default 64): the least recently
   * used idle ones are closed and reopened on their next read, as Kafka's
   * file caches do; the active segment's stays open.
   */
  maxOpenSegmentFiles?: number;
  /** When appended bytes are fsynced (default `os`). */
  flush?: FlushPolicy;
  /** Delete old segments while the log is bigger than this; -1 = unlimited (default). */
  retentionBytes?: number;
  /** Delete segments whose newest record is older than this; -1 = unlimited (default 7 days). */
  retentionMs?: number;
  /**
   * How often the recovery-point checkpoint is written under the `always` and
   * `os` policies (under `interval` it is written with every flush). A later
   * checkpoint only means a longer scan after a crash, never lost data.
   * Default 10 s; 0 disables the timer (checkpoints then happen on roll, flush and close).
   */
  checkpointIntervalMs?: number;
  /** Bytes of closed-segment offset indexes kept in memory (LRU); default 8 MiB. */
  indexCacheBytes?: number;
  /** Compaction: how long a tombstone (null value) survives in a cleaned segment (default 1 day). */
  deleteRetentionMs?: number;
  /** producer.id.expiration.ms: forget an idempotent producer whose last batch is older than this (default 1 day). */
  producerIdExpirationMs?: number;
  /**
   * A producer-state snapshot is also written at a checkpoint once this many
   * bytes were appended since the last one (default 16 MiB), so a crash
   * replays at most about this much (plus what came after the checkpoint)
   * instead of the whole active segment. 0 disables it (roll and close only).
   */
  producerSnapshotIntervalBytes?: number;
}

export const DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024;
export const MAX_SEGMENT_BYTES = 0x7fff_ffff;
export const DEFAULT_SEGMENT_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_INDEX_INTERVAL_BYTES = 4096;
export const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024;
export const DEFAULT_FLUSH_INTERVAL_MS = 1000;
export const DEFAULT_MAX_OPEN_SEGMENT_FILES = 64;
export const DEFAULT_RETENTION_BYTES = -1;
export const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 10_000;
export const DEFAULT_INDEX_CACHE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_DELETE_RETENTION_MS = 24 * 3600 * 1000;
export const DEFAULT_PRODUCER_SNAPSHOT_INTERVAL_BYTES = 16 * 1024 * 1024;
export { DEFAULT_PRODUCER_ID_EXPIRATION_MS };

export type ParsedFlushPolicy =
  | { readonly policy: 'always' }
  | { readonly policy: 'interval'; readonly intervalMs: number; readonly intervalBytes: number }
  | { readonly policy: 'os' };

export interface ParsedLogOptions {
  readonly segmentBytes: number;
  readonly segmentMs: number;
  readonly indexIntervalBytes: number;
  readonly maxBatchBytes: number;
  readonly maxDecompressedBytes: number;
  readonly maxOpenSegmentFiles: number;
  readonly flush: ParsedFlushPolicy;
  readonly retentionBytes: number;
  readonly retentionMs: number;
  readonly checkpointIntervalMs: number;
  readonly indexCacheBytes: number;
  readonly deleteRetentionMs: number;
  readonly producerIdExpirationMs: number;
  readonly producerSnapshotIntervalBytes: number;
}

function invalid(message: string): MqError {
  return new MqError('INVALID_CONFIG', message);
}

function int(name: string, value: number | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw invalid(`log option ${name} must be an integer in [${min}, ${max}], got ${String(value)}`);
  }
  return value;
}

function limit(name: string, value: number | undefined, fallback: number): number {
  if (value === -1) return -1;
  return int(name, value, fallback, 0);
}

function parseFlush(flush: FlushPolicy | undefined): ParsedFlushPolicy {
  if (flush === undefined) return Object.freeze({ policy: 'os' });
  switch (flush.policy) {
    case 'always':
      return Object.freeze({ policy: 'always' });
    case 'os':
      return Object.freeze({ policy: 'os' });
    case 'interval': {
      const intervalMs = int('flush.intervalMs', flush.intervalMs, DEFAULT_FLUSH_INTERVAL_MS, 1);
      const intervalBytes = flush.intervalBytes === undefined ? -1 : int('flush.intervalBytes', flush.intervalBytes, -1, 1);
      return Object.freeze({ policy: 'interval', intervalMs, intervalBytes });
    }
    default:
      throw invalid(`unknown flush policy ${JSON.stringify((flush as { policy?: unknown }).policy)} (use always, interval or os)`);
  }
}

/** Normalises `options` over the defaults; throws INVALID_CONFIG on a bad or contradictory value. */
export function parseLogOptions(options: LogOptions = {}): ParsedLogOptions {
  const segmentBytes = int('segmentBytes', options.segmentBytes, DEFAULT_SEGMENT_BYTES, 1024, MAX_SEGMENT_BYTES);
  const maxBatchBytes = int('maxBatchBytes', options.maxBatchBytes, DEFAULT_MAX_BATCH_BYTES, 61, MAX_SEGMENT_BYTES);
  const parsed: ParsedLogOptions = {
    segmentBytes,
    segmentMs: int('segmentMs', options.segmentMs, DEFAULT_SEGMENT_MS, 1),
    indexIntervalBytes: int('indexIntervalBytes', options.indexIntervalBytes, DEFAULT_INDEX_INTERVAL_BYTES, 0),
    maxBatchBytes,
    maxDecompressedBytes: int('maxDecompressedBytes', options.maxDecompressedBytes, Math.max(maxBatchBytes, DEFAULT_MAX_DECOMPRESSED_BYTES), 61),
    maxOpenSegmentFiles: int('maxOpenSegmentFiles', options.maxOpenSegmentFiles, DEFAULT_MAX_OPEN_SEGMENT_FILES, 1),
    flush: parseFlush(options.flush),
    retentionBytes: limit('retentionBytes', options.retentionBytes, DEFAULT_RETENTION_BYTES),
    retentionMs: limit('retentionMs', options.retentionMs, DEFAULT_RETENTION_MS),
    checkpointIntervalMs: int('checkpointIntervalMs', options.checkpointIntervalMs, DEFAULT_CHECKPOINT_INTERVAL_MS, 0),
    indexCacheBytes: int('indexCacheBytes', options.indexCacheBytes, DEFAULT_INDEX_CACHE_BYTES, 0),
    deleteRetentionMs: int('deleteRetentionMs', options.deleteRetentionMs, DEFAULT_DELETE_RETENTION_MS, 0),
    producerIdExpirationMs: int('producerIdExpirationMs', options.producerIdExpirationMs, DEFAULT_PRODUCER_ID_EXPIRATION_MS, 1, 2 ** 31 - 1),
    producerSnapshotIntervalBytes: int('producerSnapshotIntervalBytes', options.producerSnapshotIntervalBytes, DEFAULT_PRODUCER_SNAPSHOT_INTERVAL_BYTES, 0),
  };
  return Object.freeze(parsed);
}
