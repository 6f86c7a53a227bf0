/**
 * Preferred-leader election: which partitions would move leadership back to
 * their preferred replica (the first of `replicas`) now. One mechanism for
 * the automatic election of the active controller (auto.leader.rebalance)
 * and for ElectLeaders on demand (mq cluster elect-leaders): both propose the
 * `electPreferred` command built from this list.
 */
import type { ErrorCode } from '@mq/protocol/errors';
import type { MetadataState } from './metadata-state.js';

export interface PreferredElection {
  topic: string;
  partition: number;
  leaderEpoch: number;
  /** Absent: the preferred replica can take over now. */
  code?: ErrorCode;
  message?: string;
}

/**
 * Every partition of `only` (all partitions when absent; a topic name mapped
 * to undefined: every partition of that topic) with its election status.
 */
export function preferredElections(md: MetadataState, only?: ReadonlyMap<string, readonly number[] | undefined>): PreferredElection[] {
  const out: PreferredElection[] = [];
  const live = (id: number) => md.broker(id)?.fenced === false;
  const topics = only ? [...only.keys()].map((name) => ({ name, t: md.topic(name) })) : md.topics().map((t) => ({ name: t.name, t }));
  for (const { name, t } of topics) {
    const asked = only?.get(name);
    if (!t) {
      for (const partition of asked ?? [-1]) out.push({ topic: name, partition, leaderEpoch: -1, code: 'UNKNOWN_TOPIC_OR_PARTITION', message: `topic "${name}" does not exist` });
      continue;
    }
    const partitions = asked ?? t.partitions.map((_, i) => i);
    for (const partition of partitions) {
      const p = t.partitions[partition];
      if (!p) {
        out.push({ topic: name, partition, leaderEpoch: -1, code: 'UNKNOWN_TOPIC_OR_PARTITION', message: `topic "${name}" has no partition ${partition}` });
        continue;
      }
      const preferred = p.replicas[0]!;
      const base = { topic: name, partition, leaderEpoch: p.leaderEpoch };
      if (p.leader === preferred) out.push({ ...base, code: 'ELECTION_NOT_NEEDED', message: `broker ${preferred}, the preferred replica, already leads ${name}-${partition}` });
      else if (!live(preferred)) out.push({ ...base, code: 'PREFERRED_LEADER_NOT_AVAILABLE', message: `the preferred replica of ${name}-${partition}, broker ${preferred}, is not alive` });
      else if (!p.isr.includes(preferred)) out.push({ ...base, code: 'PREFERRED_LEADER_NOT_AVAILABLE', message: `the preferred replica of ${name}-${partition}, broker ${preferred}, is not in the ISR [${p.isr.join(', ')}]` });
      else out.push(base);
    }
  }
  return out;
}

/** The `electPreferred` entries for the partitions whose preferred replica can take over now. */
export function electable(list: readonly PreferredElection[]): { topic: string; partition: number; leaderEpoch: number }[] {
  return list.filter((e) => e.code === undefined).map(({ topic, partition, leaderEpoch }) => ({ topic, partition, leaderEpoch }));
}
