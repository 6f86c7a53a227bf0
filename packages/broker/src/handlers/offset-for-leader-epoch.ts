/** OffsetForLeaderEpoch: from the log's leader-epoch cache, for followers and consumers detecting truncation. */
import type { mq } from '@mq/protocol/wire';
import { wireError } from '../errors.js';
import type { Handler } from './types.js';

export const offsetForLeaderEpoch: Handler<'offsetForLeaderEpoch'> = async (req, ctx) => {
  const b = ctx.broker;
  const topics: mq.OffsetForLeaderEpochTopicResponse.$Properties[] = [];
  for (const t of req.topics ?? []) {
    const name = t.name ?? '';
    const partitions: mq.OffsetForLeaderEpochPartitionResponse.$Properties[] = [];
    for (const q of t.partitions ?? []) {
      const index = q.partition ?? 0;
      try {
        const p = b.topics.partition(name, index);
        p.checkLeaderEpoch(q.currentLeaderEpoch ?? -1);
        const r = p.log.leaderEpochs.endOffsetFor(q.leaderEpoch ?? 0);
        // The latest epoch ends at the log end, but only another broker's replica may see past the high
        // watermark (consumers send -1, or leave replica_id unset, which proto3 reads as 0).
        const replicaId = req.replicaId ?? -1;
        const follower = replicaId >= 0 && replicaId !== b.brokerId;
        const endOffset = !follower && r.epoch === p.leaderEpoch && r.endOffset > p.highWatermark ? p.highWatermark : r.endOffset;
        partitions.push({ partition: index, errorCode: 0, leaderEpoch: r.epoch, endOffset });
      } catch (err) {
        partitions.push({ partition: index, errorCode: wireError(err).errorCode, leaderEpoch: -1, endOffset: -1 });
      }
    }
    topics.push({ name, partitions });
  }
  return { topics };
};
