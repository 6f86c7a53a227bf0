/**
 * Replica moves planned from the metadata (pure, deterministic): moving every
 * replica off a broker (decommission). A replacement is the live,
 * non-decommissioned broker with the fewest replicas that the partition does
 * not already use, preferring one on a rack the partition's other replicas
 * do not use (when racks are declared). The replaced broker's position is
 * kept, so the preferred-leader order of the others is unchanged.
 */
import { MqError } from '@mq/protocol/errors';
import type { MetadataState } from './metadata-state.js';

export interface PlannedMove {
  topic: string;
  partition: number;
  from: number[];
  to: number[];
}

/** Replicas per broker as they will be once the moves in progress complete (target sets). */
export function replicaLoad(md: MetadataState): Map<number, number> {
  const load = new Map<number, number>();
  for (const t of md.topics()) for (const p of t.partitions) for (const id of p.targetReplicas ?? p.replicas) load.set(id, (load.get(id) ?? 0) + 1);
  return load;
}

/**
 * The moves that take every replica off `brokerId`; INVALID_REPLICATION_FACTOR
 * when a partition's replication factor is more than the other placeable brokers.
 * `skipped`: partitions moving right now whose target includes the broker (decommission again once they finish).
 */
export function planDecommission(md: MetadataState, brokerId: number): { moves: PlannedMove[]; skipped: { topic: string; partition: number }[] } {
  const candidates = md.placeable().filter((b) => b.id !== brokerId);
  const rack = new Map(md.brokers().map((b) => [b.id, b.rack]));
  const load = replicaLoad(md);
  for (const b of candidates) if (!load.has(b.id)) load.set(b.id, 0);
  const moves: PlannedMove[] = [];
  const skipped: { topic: string; partition: number }[] = [];
  for (const t of md.topics()) {
    t.partitions.forEach((p, partition) => {
      const set = p.targetReplicas ?? p.replicas;
      if (!set.includes(brokerId)) return;
      if (p.targetReplicas) {
        skipped.push({ topic: t.name, partition });
        return;
      }
      if (set.length > candidates.length) {
        throw new MqError(
          'INVALID_REPLICATION_FACTOR',
          `broker ${brokerId} cannot be decommissioned: ${t.name}-${partition} has ${set.length} replicas and only ${candidates.length} other live broker(s) can hold replicas (${candidates.map((b) => b.id).join(', ') || 'none'}); add a broker first`,
        );
      }
      const others = set.filter((id) => id !== brokerId);
      const usedRacks = new Set(others.map((id) => rack.get(id) ?? ''));
      const pick = candidates
        .filter((b) => !others.includes(b.id))
        .sort((a, b) => Number(usedRacks.has(a.rack) && a.rack !== '') - Number(usedRacks.has(b.rack) && b.rack !== '') || load.get(a.id)! - load.get(b.id)! || a.id - b.id)[0]!;
      load.set(pick.id, load.get(pick.id)! + 1);
      load.set(brokerId, (load.get(brokerId) ?? 1) - 1);
      moves.push({ topic: t.name, partition, from: [...set], to: set.map((id) => (id === brokerId ? pick.id : id)) });
    });
  }
  return { moves, skipped };
}
