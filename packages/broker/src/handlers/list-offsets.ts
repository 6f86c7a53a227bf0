/**
 * ListOffsets: earliest (-2), latest (-1, the high watermark), log end (-3)
 * or the first offset at or after a timestamp. Every answer also carries the
 * partition's log start offset and high watermark, so one request gives the
 * watermarks {low, high}.
 */
import type { mq } from '@mq/protocol/wire';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, LOG_END_TIMESTAMP } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import type { Handler } from './types.js';

/** Where a partition's offsets stand, as the leader sees them. */
export interface OffsetMarks {
  readonly logStartOffset: number;
  readonly highWatermark: number;
  readonly logEndOffset: number;
}

/**
 * Answers one ListOffsets query against a partition's marks and log (the
 * single broker's Partition, or a cluster PartitionLeader and its log). A
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

export const listOffsets: Handler<'listOffsets'> = async (req, ctx) => {
  const b = ctx.broker;
  const topics: mq.ListOffsetsTopicResponse.$Properties[] = [];
  for (const t of req.topics ?? []) {
    const name = t.name ?? '';
    const partitions: mq.ListOffsetsPartitionResponse.$Properties[] = [];
    for (const lp of t.partitions ?? []) {
      const index = lp.partition ?? 0;
      try {
        const p = b.topics.partition(name, index);
        p.checkLeaderEpoch(lp.currentLeaderEpoch ?? -1);
        if (p.offline) throw p.offline.error();
        const found = await lookupOffset(p, p.log, lp.timestamp ?? LATEST_TIMESTAMP);
        partitions.push({
          partition: index,
          errorCode: 0,
          timestamp: found.timestamp,
          offset: found.offset,
          leaderEpoch: p.leaderEpoch,
          logStartOffset: p.logStartOffset,
          highWatermark: p.highWatermark,
        });
      } catch (err) {
        ctx.logger.warn({ conn: ctx.connection.id, topic: name, partition: index, err: (err as Error).message }, 'list offsets refused');
        partitions.push({ partition: index, ...wireError(err), timestamp: -1, offset: -1, leaderEpoch: -1, logStartOffset: -1, highWatermark: -1 });
      }
    }
    topics.push({ name, partitions });
  }
  return { topics };
};
