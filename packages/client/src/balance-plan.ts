/**
 * A rebalance plan (pure, deterministic): replica moves that even out the
 * replicas per broker (each ends within one of the others), and replica-order
 * changes that even out preferred leaders per broker, moving as few replicas
 * as possible: a replica moves only from a broker above the mean to one below
 * it, and keeps its position in the list. With racks declared, a move never
 * puts two replicas of a partition on one rack when it could avoid it.
 * Partitions being reassigned are left alone. Disk-aware when the brokers'
 * free bytes and the partitions' sizes are given: a replica never moves to a
 * broker without room for it (less `reserveBytes`); the room a move takes is
 * counted for the moves after it, and the room it frees is not (both copies
 * exist until the move completes).
 */

export interface PlanBroker {
  id: number;
  rack?: string;
  /** Bytes still free on the broker's log directory (DescribeLogDirs usableBytes); absent or negative: not limited. */
  freeBytes?: number;
}

export interface PlanPartition {
  topic: string;
  partition: number;
  replicas: readonly number[];
  /** Being reassigned now: not touched. */
  moving?: boolean;
  /** Bytes a new replica needs (the leader's replica size); absent: 0. */
  sizeBytes?: number;
}

export interface PlannedReassignment {
  topic: string;
  partition: number;
  from: number[];
  to: number[];
  /** `replica`: a replica changes broker (data is copied); `leader`: only the order (preferred leader) changes. */
  kind: 'replica' | 'leader';
}

export interface RebalancePlan {
  moves: PlannedReassignment[];
  /** Replicas and preferred leaders per broker before and after the plan. */
  before: Record<number, { replicas: number; leaders: number }>;
  after: Record<number, { replicas: number; leaders: number }>;
  /** Brokers a replica would have moved to but that had no room for it (the plan is less even than it could be). */
  noRoom: number[];
}

function counts(brokers: readonly PlanBroker[], parts: readonly { replicas: readonly number[] }[]): Record<number, { replicas: number; leaders: number }> {
  const out: Record<number, { replicas: number; leaders: number }> = {};
  for (const b of brokers) out[b.id] = { replicas: 0, leaders: 0 };
  for (const p of parts) {
    p.replicas.forEach((id, i) => {
      const c = (out[id] ??= { replicas: 0, leaders: 0 });
      c.replicas++;
      if (i === 0) c.leaders++;
    });
  }
  return out;
}

/** `maxMoves`: the most replica moves in the plan (leader-order changes are not counted: they copy nothing). */
export function planRebalance(brokers: readonly PlanBroker[], partitions: readonly PlanPartition[], options: { maxMoves?: number; reserveBytes?: number } = {}): RebalancePlan {
  const maxMoves = options.maxMoves ?? Number.MAX_SAFE_INTEGER;
  const reserve = options.reserveBytes ?? 0;
  // Room left per broker with a known free space (Infinity: not limited).
  const room = new Map(brokers.map((b) => [b.id, b.freeBytes !== undefined && b.freeBytes >= 0 ? b.freeBytes - reserve : Infinity]));
  const noRoom = new Set<number>();
  const ids = brokers.map((b) => b.id).sort((a, b) => a - b);
  const rackOf = new Map(brokers.map((b) => [b.id, b.rack ?? '']));
  const racks = new Set(brokers.map((b) => b.rack ?? '')).size > 1;
  const parts = partitions.map((p) => ({ ...p, replicas: [...p.replicas], original: [...p.replicas] }));
  const before = counts(brokers, parts);
  const load = new Map(ids.map((id) => [id, 0]));
  for (const p of parts) for (const id of p.replicas) load.set(id, (load.get(id) ?? 0) + 1);
  const movable = parts.filter((p) => !p.moving);
  let replicaMoves = 0;
  // Replicas: from the most loaded broker to the least loaded, while they differ by more than one.
  for (let guard = 0; guard < 100_000 && replicaMoves < maxMoves; guard++) {
    // Brokers no longer eligible (not in `brokers`) are emptied whatever the spread; else the most loaded one.
    const foreign = [...load.keys()].find((id) => !rackOf.has(id) && load.get(id)! > 0);
    const from = foreign ?? [...ids].sort((a, b) => load.get(b)! - load.get(a)! || a - b)[0]!;
    const targets = [...ids].filter((id) => id !== from && (foreign !== undefined || load.get(id)! < load.get(from)! - 1)).sort((a, b) => load.get(a)! - load.get(b)! || a - b);
    let moved = false;
    for (const low of targets) {
      const all = movable.filter((p) => p.replicas.includes(from) && !p.replicas.includes(low));
      const candidates = all.filter((p) => (p.sizeBytes ?? 0) <= room.get(low)!);
      if (candidates.length < all.length) noRoom.add(low);
      const rackClean = (p: (typeof parts)[number]) => {
        if (!racks) return true;
        const others = p.replicas.filter((id) => id !== from).map((id) => rackOf.get(id));
        return !others.includes(rackOf.get(low));
      };
      // Prefer a replica that is not the preferred leader (its move changes no leadership), then rack-clean.
      const pick =
        candidates.find((p) => rackClean(p) && p.replicas[0] !== from) ?? candidates.find((p) => rackClean(p)) ?? candidates.find((p) => p.replicas[0] !== from) ?? candidates[0];
      if (!pick) continue;
      pick.replicas = pick.replicas.map((id) => (id === from ? low : id));
      room.set(low, room.get(low)! - (pick.sizeBytes ?? 0));
      load.set(from, load.get(from)! - 1);
      load.set(low, load.get(low)! + 1);
      replicaMoves++;
      moved = true;
      break;
    }
    if (!moved) break;
  }
  // Preferred leaders: reorder replica lists so each broker is first of about as many partitions as the others.
  const leaders = new Map(ids.map((id) => [id, 0]));
  for (const p of parts) leaders.set(p.replicas[0]!, (leaders.get(p.replicas[0]!) ?? 0) + 1);
  for (let guard = 0; guard < 100_000; guard++) {
    const byCount = [...leaders.entries()].filter(([id]) => rackOf.has(id)).sort((a, b) => a[1] - b[1] || a[0] - b[0]);
    const [low, lowN] = byCount[0]!;
    const [high, highN] = byCount[byCount.length - 1]!;
    if (highN - lowN <= 1) break;
    const pick = movable.find((p) => p.replicas[0] === high && p.replicas.includes(low));
    if (!pick) {
      // No partition led by `high` has a replica on `low`: step through a broker in between.
      const via = movable.find((p) => p.replicas[0] === high && p.replicas.some((id) => id !== high && leaders.get(id)! < highN - 1));
      if (!via) break;
      const to = via.replicas.find((id) => id !== high && leaders.get(id)! < highN - 1)!;
      via.replicas = [to, ...via.replicas.filter((id) => id !== to)];
      leaders.set(high, highN - 1);
      leaders.set(to, leaders.get(to)! + 1);
      continue;
    }
    pick.replicas = [low, ...pick.replicas.filter((id) => id !== low)];
    leaders.set(high, highN - 1);
    leaders.set(low, lowN + 1);
  }
  const moves: PlannedReassignment[] = [];
  for (const p of parts) {
    if (p.replicas.join() === p.original.join()) continue;
    const sameSet = p.replicas.length === p.original.length && p.replicas.every((id) => p.original.includes(id));
    moves.push({ topic: p.topic, partition: p.partition, from: p.original, to: p.replicas, kind: sameSet ? 'leader' : 'replica' });
  }
  return { moves, before, after: counts(brokers, parts), noRoom: [...noRoom].sort((a, b) => a - b) };
}
