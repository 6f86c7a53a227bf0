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
        // The latest epoch ends at the log end for the log, but consumers must not see past the high watermark.
        const endOffset = r.epoch === p.leaderEpoch && r.endOffset > p.highWatermark && req.replicaId === -1 ? p.highWatermark : r.endOffset;
        partitions.push({ partition: index, errorCode: 0, leaderEpoch: r.epoch, endOffset });
      } catch (err) {
        partitions.push({ partition: index, errorCode: wireError(err).errorCode, leaderEpoch: -1, endOffset: -1 });
      }
    }
    topics.push({ name, partitions });
  }
  return { topics };
};
