/**
 * Replica placement: spread replicas and preferred leaders evenly over the
 * brokers, and over racks when brokers declare one. Brokers are put in a
 * rack-alternating order (r1-a, r2-a, r3-a, r1-b, ...); partition p's
 * replicas are the `rf` brokers that follow position start+p in that order,
 * so consecutive replicas sit on different racks whenever there are enough
 * racks, and each broker is the first (preferred leader) of about the same
 * number of partitions. Deterministic: the state machine calls it.
 */
import { MqError } from '@mq/protocol/errors';

export interface PlacementBroker {
  id: number;
  rack: string;
}

/** The brokers in rack-alternating order (ids ascending within a rack, racks by name). */
export function rackAlternatingOrder(brokers: readonly PlacementBroker[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of [...brokers].sort((x, y) => x.id - y.id)) {
    let l = byRack.get(b.rack);
    if (!l) byRack.set(b.rack, (l = []));
    l.push(b.id);
  }
  const racks = [...byRack.keys()].sort();
  const out: number[] = [];
  for (let i = 0; out.length < brokers.length; i++) {
    for (const r of racks) {
      const id = byRack.get(r)![i];
      if (id !== undefined) out.push(id);
    }
  }
  return out;
}

/** Replica lists for `count` partitions; the first replica of each is its preferred leader. */
export function assignReplicas(brokers: readonly PlacementBroker[], count: number, replicationFactor: number, start: number): number[][] {
  if (replicationFactor > brokers.length) {
    throw new MqError(
      'INVALID_REPLICATION_FACTOR',
      `replication factor ${replicationFactor} is larger than the ${brokers.length} live broker(s)`,
    );
  }
  const order = rackAlternatingOrder(brokers);
  const n = order.length;
  const racks = new Set(brokers.map((b) => b.rack)).size;
  const out: number[][] = [];
  for (let p = 0; p < count; p++) {
    const first = (start + p) % n;
    // Without racks, shift followers by a step that changes every n partitions, so follower load spreads too (as Kafka does).
    const shift = racks > 1 ? 1 : 1 + (Math.floor((start + p) / n) % Math.max(1, n - 1));
    const replicas = [order[first]!];
    for (let j = 1; j < replicationFactor; j++) {
      let k = (first + j * shift) % n;
      while (replicas.includes(order[k]!)) k = (k + 1) % n;
      replicas.push(order[k]!);
    }
    out.push(replicas);
  }
  return out;
}
