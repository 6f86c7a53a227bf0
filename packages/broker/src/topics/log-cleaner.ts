/**
 * One partition log's cleanup, for the cluster's cleaner: key compaction below a high watermark
 * (cleanup.policy=compact; tombstones go after delete.retention.ms, which the
 * log was opened with) and time/size retention (the log was opened with the
 * topic's retention, -1 for a compact-only topic). With `upToOffset` (a
 * replica's high watermark) nothing at or above it decides or goes.
 */
import type { Logger } from 'pino';

export interface CleanableLog {
  applyRetention(now?: number, options?: { upToOffset?: number }): Promise<{ deletedSegments: number; deletedBytes: number }>;
  compact?(options: { upToOffset?: number }): Promise<{ removedRecords: number; bytesBefore: number; bytesAfter: number }>;
}

export interface CleanedPartition {
  topic: string;
  partition: number;
}

/** Compacts the closed segments below `upToOffset`; logs a line (`message`) when records went. */
export async function compactPartitionLog(
  log: CleanableLog,
  upToOffset: number,
  where: CleanedPartition,
  logger: Logger,
  message = 'compacted',
): Promise<{ removedRecords: number }> {
  if (!log.compact) return { removedRecords: 0 };
  const r = await log.compact({ upToOffset });
  if (r.removedRecords > 0) {
    logger.info({ ...where, upToOffset, removedRecords: r.removedRecords, bytesBefore: r.bytesBefore, bytesAfter: r.bytesAfter }, message);
  }
  return { removedRecords: r.removedRecords };
}

/** Applies time and size retention, only to segments ending at or below `upToOffset` when given. */
export async function retainPartitionLog(
  log: CleanableLog,
  now: number,
  upToOffset: number | undefined,
): Promise<{ deletedSegments: number; deletedBytes: number }> {
  return upToOffset === undefined ? log.applyRetention(now) : log.applyRetention(now, { upToOffset });
}
