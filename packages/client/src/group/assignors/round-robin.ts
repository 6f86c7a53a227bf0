/**
 * Round-robin: every partition of every subscribed topic, in (topic,
 * partition) order, dealt to the members in turn, skipping members not
 * subscribed to the partition's topic.
 */
import type { Assignor, AssignorMember, TopicPartition } from '../types.js';
import { memberOrder, topicsOf } from './common.js';

export const roundRobinAssignor: Assignor = {
  name: 'roundrobin',
  protocols: ['eager'],
  assign(members: readonly AssignorMember[], partitionCounts: ReadonlyMap<string, number>) {
    const out = new Map<string, TopicPartition[]>(members.map((m) => [m.memberId, []]));
    const ordered = [...members].sort(memberOrder);
    let next = 0;
    for (const topic of topicsOf(members, partitionCounts)) {
      const count = partitionCounts.get(topic)!;
      for (let partition = 0; partition < count; partition++) {
        for (let tries = 0; tries < ordered.length; tries++) {
          const m = ordered[next % ordered.length]!;
          next++;
          if (m.topics.includes(topic)) {
            out.get(m.memberId)!.push({ topic, partition });
            break;
          }
        }
      }
    }
    return out;
  },
};
