/**
 * Serves an OffsetForLeaderEpoch request over this broker's partition
 * leaders: for each partition, where the asked epoch ended in the leader's
 * log (after checking the asker's current leader epoch).
 */
import type { LeaderLookup } from './fetch-handler.js';
import { UNDEFINED, type OffsetForLeaderEpochRequest, type OffsetForLeaderEpochResponse } from './types.js';

export function handleOffsetForLeaderEpoch(
  request: OffsetForLeaderEpochRequest,
  components: { leaders: LeaderLookup; hosts?: (topic: string, partition: number) => boolean },
): OffsetForLeaderEpochResponse {
  return {
    partitions: request.partitions.map((p) => {
      const leader = components.leaders(p.topic, p.partition);
      if (!leader) {
        const hosted = components.hosts?.(p.topic, p.partition) ?? true;
        return {
          topic: p.topic,
          topicId: p.topicId ?? '',
          partition: p.partition,
          errorCode: hosted ? ('NOT_LEADER' as const) : ('UNKNOWN_TOPIC_OR_PARTITION' as const),
          leaderEpoch: UNDEFINED,
          endOffset: UNDEFINED,
        };
      }
      const r = leader.offsetForLeaderEpoch(p.currentLeaderEpoch, p.leaderEpoch, p.topicId);
      return { topic: p.topic, topicId: p.topicId || leader.topicId, partition: p.partition, errorCode: r.errorCode, leaderEpoch: r.epoch, endOffset: r.endOffset };
    }),
  };
}
