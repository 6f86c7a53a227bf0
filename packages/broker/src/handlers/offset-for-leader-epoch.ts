/** OffsetForLeaderEpoch: where a leader epoch ended in the log of a partition led here (followers and consumers detecting divergence). */
import type { mq } from '@mq/protocol/wire';
import { errorNumber } from '@mq/protocol/errors';
import { handleOffsetForLeaderEpoch } from '@mq/replication';
import { whyNotLed, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function offsetForLeaderEpoch(d: HandlerDeps): Handler<'offsetForLeaderEpoch'> {
  return async (req) => {
    const res = handleOffsetForLeaderEpoch(
      {
        replicaId: req.replicaId ?? -1,
        partitions: (req.topics ?? []).flatMap((t) =>
          (t.partitions ?? []).map((p) => ({ topic: t.name ?? '', partition: p.partition ?? 0, currentLeaderEpoch: p.currentLeaderEpoch ?? -1, leaderEpoch: p.leaderEpoch ?? 0 })),
        ),
      },
      { leaders: (t, p) => d.replicas.leaderOf(t, p), hosts: (t, p) => d.replicas.hosts(t, p) },
    );
    const out = new Map<string, mq.OffsetForLeaderEpochPartitionResponse.$Properties[]>();
    for (const p of res.partitions) {
      let list = out.get(p.topic);
      if (!list) out.set(p.topic, (list = []));
      const why = p.errorCode === 'NOT_LEADER' || p.errorCode === 'UNKNOWN_TOPIC_OR_PARTITION' ? whyNotLed(d, p.topic, p.partition) : undefined;
      list.push({ partition: p.partition, errorCode: errorNumber(why?.code ?? p.errorCode), leaderEpoch: p.leaderEpoch, endOffset: p.endOffset });
    }
    return { topics: [...out].map(([name, partitions]) => ({ name, partitions })) };
  };
}
