import type { AssignorMember } from '../types.js';

/** Members in a stable order: by group instance id when static (so restarts keep their place), else by member id. */
export function memberOrder(a: AssignorMember, b: AssignorMember): number {
  const ka = a.groupInstanceId ?? a.memberId;
  const kb = b.groupInstanceId ?? b.memberId;
  return ka < kb ? -1 : ka > kb ? 1 : a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0;
}

/** Sorted topics that some member subscribes to and that exist. */
export function topicsOf(members: readonly AssignorMember[], partitionCounts: ReadonlyMap<string, number>): string[] {
  const topics = new Set<string>();
  for (const m of members) for (const t of m.topics) if ((partitionCounts.get(t) ?? 0) > 0) topics.add(t);
  return [...topics].sort();
}
