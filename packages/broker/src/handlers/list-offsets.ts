/**
 * ListOffsets: earliest (-2), latest (-1, the high watermark; the last stable
 * offset for isolation level 1, read_committed), log end (-3)
 * or the first offset at or after a timestamp. Every answer also carries the
 * partition's log start offset and high watermark, so one request gives the
 * watermarks {low, high}.
 */
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, LOG_END_TIMESTAMP } from '@mq/protocol/wire';
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import { logRefusal, notLeader, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

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

/** ListOffsets on the partitions this broker leads (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH for a stale or future epoch). */
export function listOffsets(d: HandlerDeps): Handler<'listOffsets'> {
  return async (req, ctx) => {
    const topics: mq.ListOffsetsTopicResponse.$Properties[] = [];
    for (const t of req.topics ?? []) {
      const name = t.name ?? '';
      const partitions: mq.ListOffsetsPartitionResponse.$Properties[] = [];
      for (const lp of t.partitions ?? []) {
        const index = lp.partition ?? 0;
        try {
          const leader = d.replicas.leaderOf(name, index);
          const hosted = d.replicas.hostedPartition(name, index);
          if (!leader || !hosted) throw notLeader(d, name, index);
          const asked = lp.currentLeaderEpoch ?? -1;
          if (asked >= 0 && asked < leader.leaderEpoch) throw new MqError('FENCED_LEADER_EPOCH', `leader epoch ${asked} is older than ${leader.leaderEpoch} for ${name}-${index}`);
          if (asked > leader.leaderEpoch) throw new MqError('UNKNOWN_LEADER_EPOCH', `leader epoch ${asked} is newer than ${leader.leaderEpoch} for ${name}-${index}`);
          const hw = leader.highWatermark;
          // read_committed (isolation level 1): "latest" and time lookups stop at the last stable offset, as in Kafka.
          const bound = req.isolationLevel === 1 ? leader.lastStableOffset : hw;
          const found = await lookupOffset({ logStartOffset: leader.logStartOffset, highWatermark: bound, logEndOffset: leader.logEndOffset }, hosted.log, Number(lp.timestamp ?? LATEST_TIMESTAMP));
          partitions.push({ partition: index, errorCode: 0, timestamp: found.timestamp, offset: found.offset, leaderEpoch: leader.leaderEpoch, logStartOffset: leader.logStartOffset, highWatermark: hw });
        } catch (err) {
          logRefusal(ctx, 'list offsets', name, index, err);
          partitions.push({ partition: index, ...wireError(err), timestamp: -1, offset: -1, leaderEpoch: -1, logStartOffset: -1, highWatermark: -1 });
        }
      }
      topics.push({ name, partitions });
    }
    return { topics };
  };
}
