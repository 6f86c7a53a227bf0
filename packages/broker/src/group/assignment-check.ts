/**
 * Checks the leader's assignment for protocol type "consumer" before the
 * coordinator hands it out: each assignment decodes, names only partitions
 * that exist, of topics its member subscribed to, and no partition twice.
 * Other protocol types are opaque to the broker (as in Kafka).
 */
import { mq } from '@mq/protocol/wire';
import type { Group } from './group.js';
import type { TopicView } from './types.js';

/** A description of the first problem found, or null when the assignment is valid. */
export function checkConsumerAssignment(group: Group, byMember: ReadonlyMap<string, Buffer>, topics: TopicView): string | null {
  const owner = new Map<string, string>();
  for (const [memberId, buf] of byMember) {
    const member = group.members.get(memberId);
    if (!member) return `"${memberId}" is not a member of the group`;
    let subscribed: Set<string>;
    try {
      subscribed = new Set(mq.ConsumerSubscription.decode(group.metadataOf(member)).topics);
    } catch {
      return `the subscription of member "${memberId}" does not decode`;
    }
    if (buf.length === 0) continue;
    let assignment: mq.ConsumerAssignment;
    try {
      assignment = mq.ConsumerAssignment.decode(buf);
    } catch (e) {
      return `the assignment for member "${memberId}" does not decode: ${(e as Error).message}`;
    }
    for (const tp of assignment.assignedPartitions) {
      const topic = tp.topic ?? '';
      if (!subscribed.has(topic)) return `member "${memberId}" is assigned topic "${topic}", which it did not subscribe to`;
      const count = topics.partitionCount(topic);
      if (count === undefined) return `topic "${topic}" does not exist`;
      for (const p of tp.partitions ?? []) {
        if (p >= count) return `partition ${topic}-${p} does not exist (the topic has ${count} partitions)`;
        const key = `${topic}\u0000${p}`;
        const prev = owner.get(key);
        if (prev !== undefined) {
          return prev === memberId
            ? `partition ${topic}-${p} is assigned twice to member "${memberId}"`
            : `partition ${topic}-${p} is assigned to both "${prev}" and "${memberId}"`;
        }
        owner.set(key, memberId);
      }
    }
  }
  return null;
}
