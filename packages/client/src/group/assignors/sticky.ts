/**
 * Sticky and cooperative-sticky: keep every member's owned partitions where
 * balance allows, hand out the rest to the least loaded eligible members,
 * then move partitions from the most to the least loaded member until no
 * eligible move narrows the spread (with identical subscriptions: counts
 * differ by at most one).
 *
 * Ownership comes from each member's `ownedPartitions`; when two members
 * claim a partition (a member that missed a rebalance), the claim of the
 * higher generation wins.
 *
 * Cooperative-sticky then withholds every partition that changes owner: the
 * new owner gets it only in the follow-up rebalance, after the old owner has
 * revoked it, so no partition ever has two owners and members whose
 * partitions do not move keep consuming throughout.
 */
import { compareTp, tpKey } from '../consumer-protocol.js';
import type { Assignor, AssignorMember, TopicPartition } from '../types.js';
import { memberOrder, topicsOf } from './common.js';

interface Slot {
  member: AssignorMember;
  topics: Set<string>;
  owned: Set<string>;
  assigned: Map<string, TopicPartition>;
}

export function stickyAssign(
  members: readonly AssignorMember[],
  partitionCounts: ReadonlyMap<string, number>,
  cooperative: boolean,
): Map<string, TopicPartition[]> {
  const slots = [...members].sort(memberOrder).map<Slot>((member) => ({
    member,
    topics: new Set(member.topics),
    owned: new Set(member.ownedPartitions.map(tpKey)),
    assigned: new Map(),
  }));
  const exists = (tp: TopicPartition) => Number.isInteger(tp.partition) && tp.partition >= 0 && tp.partition < (partitionCounts.get(tp.topic) ?? 0);

  // 1. Keep valid owned partitions; conflicting claims go to the highest generation.
  const claims = new Map<string, { slot: Slot; generation: number; tp: TopicPartition }>();
  for (const slot of slots) {
    for (const tp of slot.member.ownedPartitions) {
      if (!exists(tp) || !slot.topics.has(tp.topic)) continue;
      const key = tpKey(tp);
      const prev = claims.get(key);
      if (!prev || slot.member.generationId > prev.generation) claims.set(key, { slot, generation: slot.member.generationId, tp });
    }
  }
  for (const [key, c] of claims) c.slot.assigned.set(key, { topic: c.tp.topic, partition: c.tp.partition });

  // 2. Everything else goes to the least loaded eligible member.
  const all: TopicPartition[] = [];
  for (const topic of topicsOf(members, partitionCounts)) {
    for (let partition = 0; partition < partitionCounts.get(topic)!; partition++) all.push({ topic, partition });
  }
  for (const tp of all) {
    const key = tpKey(tp);
    if (claims.has(key)) continue;
    let best: Slot | undefined;
    for (const s of slots) if (s.topics.has(tp.topic) && (!best || s.assigned.size < best.assigned.size)) best = s;
    best?.assigned.set(key, tp);
  }

  // 3. Balance: move from the most loaded to the least loaded member that can take one of its partitions.
  for (;;) {
    const bySize = [...slots].sort((a, b) => b.assigned.size - a.assigned.size);
    let moved = false;
    outer: for (const src of bySize) {
      for (let i = bySize.length - 1; i >= 0; i--) {
        const dst = bySize[i]!;
        if (src.assigned.size - dst.assigned.size <= 1) break;
        // Prefer a partition the receiver owned before; then the highest one (keeps low partitions in place).
        let pick: [string, TopicPartition] | undefined;
        for (const entry of src.assigned) {
          if (!dst.topics.has(entry[1].topic)) continue;
          if (dst.owned.has(entry[0])) {
            pick = entry;
            break;
          }
          if (!pick || compareTp(entry[1], pick[1]) > 0) pick = entry;
        }
        if (!pick) continue;
        src.assigned.delete(pick[0]);
        dst.assigned.set(pick[0], pick[1]);
        moved = true;
        break outer;
      }
    }
    if (!moved) break;
  }

  // 4. Cooperative: a partition another member still owns is withheld until that member revokes it.
  if (cooperative) {
    const owner = new Map<string, Slot>();
    for (const [key, c] of claims) owner.set(key, c.slot);
    for (const slot of slots) {
      for (const tp of slot.member.ownedPartitions) {
        const key = tpKey(tp);
        if (!owner.has(key)) owner.set(key, slot);
      }
    }
    for (const slot of slots) {
      for (const key of [...slot.assigned.keys()]) {
        const o = owner.get(key);
        if (o && o !== slot) slot.assigned.delete(key);
      }
    }
  }

  return new Map(slots.map((s) => [s.member.memberId, [...s.assigned.values()].sort(compareTp)]));
}

export const stickyAssignor: Assignor = {
  name: 'sticky',
  protocols: ['eager'],
  assign: (members, counts) => stickyAssign(members, counts, false),
};

export const cooperativeStickyAssignor: Assignor = {
  name: 'cooperative-sticky',
  protocols: ['cooperative', 'eager'],
  // Under the eager protocol every member has revoked everything already: nothing to withhold.
  assign: (members, counts, context) => stickyAssign(members, counts, (context?.protocol ?? 'cooperative') === 'cooperative'),
};
