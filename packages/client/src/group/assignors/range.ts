/**
 * Range: per topic, the partitions are split into contiguous ranges over the
 * subscribed members in id order; the first `partitions % members` get one
 * more. Co-partitioned topics line up (member i gets partition k of each).
 */
import type { Assignor, AssignorMember, TopicPartition } from '../types.js';
import { memberOrder, topicsOf } from './common.js';

export const rangeAssignor: Assignor = {
  name: 'range',
  protocols: ['eager'],
  assign(members: readonly AssignorMember[], partitionCounts: ReadonlyMap<string, number>) {
    const out = new Map<string, TopicPartition[]>(members.map((m) => [m.memberId, []]));
    const ordered = [...members].sort(memberOrder);
    for (const topic of topicsOf(members, partitionCounts)) {
      const subscribers = ordered.filter((m) => m.topics.includes(topic));
      const count = partitionCounts.get(topic)!;
      const per = Math.floor(count / subscribers.length);
      const extra = count % subscribers.length;
      subscribers.forEach((m, i) => {
        const start = per * i + Math.min(i, extra);
        const length = per + (i < extra ? 1 : 0);
        for (let p = start; p < start + length; p++) out.get(m.memberId)!.push({ topic, partition: p });
      });
    }
    return out;
  },
};
