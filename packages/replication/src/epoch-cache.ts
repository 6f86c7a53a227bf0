/**
 * Leader-epoch arithmetic over a log's epoch cache, as Kafka's
 * LeaderEpochFileCache answers OffsetForLeaderEpoch (KIP-101, KIP-279) and
 * the fetch-path divergence check (KIP-320).
 */
import { UNDEFINED, type EpochEndOffset, type EpochEntry, type ReplicaLog } from './types.js';

/** The newest epoch in the cache, or -1 when the cache is empty. */
export function latestEpoch(entries: readonly EpochEntry[]): number {
  return entries.length === 0 ? UNDEFINED : entries[entries.length - 1]!.epoch;
}

/**
 * Where `requestedEpoch` ended in a log: the largest epoch at or below it and
 * the start offset of the next higher epoch (the log end offset for the latest
 * epoch). `{-1, -1}` when the requested epoch is newer than anything known or
 * the cache is empty; when it is older than the first entry, the first entry's
 * start offset with the requested epoch.
 */
export function endOffsetForEpoch(
  entries: readonly EpochEntry[],
  requestedEpoch: number,
  logEndOffset: number,
): EpochEndOffset {
  if (requestedEpoch === UNDEFINED || entries.length === 0) return { epoch: UNDEFINED, endOffset: UNDEFINED };
  const latest = entries[entries.length - 1]!;
  if (requestedEpoch === latest.epoch) return { epoch: latest.epoch, endOffset: logEndOffset };
  if (requestedEpoch > latest.epoch) return { epoch: UNDEFINED, endOffset: UNDEFINED };
  // Smallest entry with epoch > requested exists (latest is one).
  let higher = entries.length - 1;
  while (higher > 0 && entries[higher - 1]!.epoch > requestedEpoch) higher--;
  const next = entries[higher]!;
  if (higher === 0) return { epoch: requestedEpoch, endOffset: next.startOffset };
  return { epoch: entries[higher - 1]!.epoch, endOffset: next.startOffset };
}

/** {@link endOffsetForEpoch} on a log. */
export function logEndOffsetForEpoch(log: ReplicaLog, requestedEpoch: number): EpochEndOffset {
  return endOffsetForEpoch(log.leaderEpochs.entries, requestedEpoch, log.logEndOffset);
}

export interface TruncationTarget {
  /** Truncate the log to this offset (no-op when it is at or above the log end). */
  offset: number;
  /** False when another OffsetForLeaderEpoch round is needed (the follower's epoch at that point differs). */
  complete: boolean;
}

/**
 * Where a follower must truncate given the leader's answer for the follower's
 * latest epoch (Kafka's AbstractFetcherThread.getOffsetTruncationState).
 */
export function truncationTarget(
  log: ReplicaLog,
  leader: EpochEndOffset,
  highWatermark: number,
): TruncationTarget {
  const leo = log.logEndOffset;
  if (leader.endOffset === UNDEFINED) {
    // The leader knows nothing of our epochs: fall back to the high watermark.
    return { offset: Math.min(highWatermark, leo), complete: true };
  }
  if (leader.epoch === UNDEFINED) return { offset: Math.min(leader.endOffset, leo), complete: true };
  const mine = logEndOffsetForEpoch(log, leader.epoch);
  if (mine.endOffset === UNDEFINED) return { offset: Math.min(leader.endOffset, leo), complete: true };
  if (mine.epoch !== leader.epoch) {
    // We have no entry for the leader's epoch: cut back to the end of our
    // largest epoch below it and ask again with that epoch.
    return { offset: Math.min(mine.endOffset, leo), complete: false };
  }
  return { offset: Math.min(leader.endOffset, mine.endOffset, leo), complete: true };
}
