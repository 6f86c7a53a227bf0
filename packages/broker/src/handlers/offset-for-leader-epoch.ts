/** OffsetForLeaderEpoch: where a leader epoch ended in the log of a partition led here (followers and consumers detecting divergence). */
import type { mq } from '@mq/protocol/wire';
import { errorNumber } from '@mq/protocol/errors';
import { handleOffsetForLeaderEpoch } from '@mq/replication';
import { whyNotLed, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function offsetForLeaderEpoch(d: HandlerDeps): Handler<'offsetForLeaderEpoch'> {
  return async (req) => {
    const request = {
      replicaId: req.replicaId ?? -1,
      partitions: (req.topics ?? []).flatMap((t) =>
        (t.partitions ?? []).map((p) => ({
          topic: t.name ?? '',
          topicId: t.topicId ?? '',
          partition: p.partition ?? 0,
          currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
          leaderEpoch: p.leaderEpoch ?? 0,
        })),
      ),
    };
    const res = handleOffsetForLeaderEpoch(request, { leaders: (t, p) => d.replicas.leaderOf(t, p), hosts: (t, p) => d.replicas.hosts(t, p) });
    // One entry per topic name and the topic id asked about (as Fetch).
    const out = new Map<string, { name: string; topicId: string; partitions: mq.OffsetForLeaderEpochPartitionResponse.$Properties[] }>();
    res.partitions.forEach((p, i) => {
      const asked = request.partitions[i]!.topicId;
      const k = `${p.topic}\u0000${asked}`;
      let entry = out.get(k);
      if (!entry) out.set(k, (entry = { name: p.topic, topicId: asked, partitions: [] }));
      const why = p.errorCode === 'NOT_LEADER' || p.errorCode === 'UNKNOWN_TOPIC_OR_PARTITION' ? whyNotLed(d, p.topic, p.partition, asked) : undefined;
      entry.partitions.push({ partition: p.partition, errorCode: errorNumber(why?.code ?? p.errorCode), leaderEpoch: p.leaderEpoch, endOffset: p.endOffset });
    });
    return { topics: [...out.values()] };
  };
}
