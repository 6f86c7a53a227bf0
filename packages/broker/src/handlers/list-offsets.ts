/**
 * ListOffsets: earliest (-2), latest (-1, the high watermark), log end (-3)
 * or the first offset at or after a timestamp. Every answer also carries the
 * partition's log start offset and high watermark, so one request gives the
 * watermarks {low, high}.
 */
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, LOG_END_TIMESTAMP } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';

/** Where a partition's offsets stand, as the leader sees them. */
export interface OffsetMarks {
  readonly logStartOffset: number;
  readonly highWatermark: number;
  readonly logEndOffset: number;
}

/**
 * Answers one ListOffsets query against a partition's marks and log (a
 * PartitionLeader and its log). A
 * timestamp lookup never answers an offset at or above the high watermark.
 */
export async function lookupOffset(
  marks: OffsetMarks,
  log: { offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null> },
  timestamp: number,
): Promise<{ offset: number; timestamp: number }> {
  if (timestamp === EARLIEST_TIMESTAMP) return { offset: marks.logStartOffset, timestamp: -1 };
  if (timestamp === LATEST_TIMESTAMP) return { offset: marks.highWatermark, timestamp: -1 };
  if (timestamp === LOG_END_TIMESTAMP) return { offset: marks.logEndOffset, timestamp: -1 };
  if (!Number.isSafeInteger(timestamp) || timestamp < 0) {
    throw new MqError('INVALID_REQUEST', `timestamp ${timestamp} is neither a time in ms nor -1 (latest), -2 (earliest) or -3 (log end)`);
  }
  const found = await log.offsetForTimestamp(timestamp);
  if (!found || found.offset >= marks.highWatermark) return { offset: -1, timestamp: -1 };
  return found;
}
