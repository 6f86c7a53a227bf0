import { planRebalance, type PlanPartition } from './balance-plan.js';

/** 12 partitions RF 2 spread over brokers 1-3 the way the controller places them. */
function threeBrokerTopic(): PlanPartition[] {
  const out: PlanPartition[] = [];
  for (let p = 0; p < 12; p++) out.push({ topic: 't', partition: p, replicas: [1 + (p % 3), 1 + ((p + 1) % 3)] });
  return out;
}

describe('planRebalance', () => {
  it('evens out replicas and preferred leaders when a fourth broker joins, moving only what it must', () => {
    const parts = threeBrokerTopic();
    const plan = planRebalance([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], parts);
    expect(plan.before[4]).toEqual({ replicas: 0, leaders: 0 });
    for (const id of [1, 2, 3, 4]) {
      expect(plan.after[id]!.replicas).toBe(6);
      expect(plan.after[id]!.leaders).toBe(3);
    }
    const replicaMoves = plan.moves.filter((m) => m.kind === 'replica');
    // 24 replicas, 6 must land on broker 4: exactly 6 replica moves, each one replica of one partition.
    expect(replicaMoves).toHaveLength(6);
    for (const m of replicaMoves) expect(m.to.filter((id) => !m.from.includes(id))).toEqual([4]);
    for (const m of plan.moves) expect(new Set(m.to).size).toBe(m.to.length);
  });

  it('does nothing on a balanced cluster and leaves partitions that are moving alone', () => {
    const parts = threeBrokerTopic();
    expect(planRebalance([{ id: 1 }, { id: 2 }, { id: 3 }], parts).moves).toEqual([]);
    const moving = parts.map((p) => ({ ...p, moving: true }));
    expect(planRebalance([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], moving).moves).toEqual([]);
  });

  it('caps the replica moves and keeps racks apart', () => {
    const parts = threeBrokerTopic();
    expect(planRebalance([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }], parts, { maxMoves: 2 }).moves.filter((m) => m.kind === 'replica')).toHaveLength(2);
    const racked = [
      { id: 1, rack: 'a' },
      { id: 2, rack: 'b' },
      { id: 3, rack: 'a' },
      { id: 4, rack: 'b' },
    ];
    const rackParts: PlanPartition[] = [];
    for (let p = 0; p < 8; p++) rackParts.push({ topic: 'r', partition: p, replicas: p % 2 ? [1, 2] : [2, 1] });
    const plan = planRebalance(racked, rackParts);
    for (const id of [1, 2, 3, 4]) expect(plan.after[id]!.replicas).toBe(4);
    for (const m of plan.moves) expect(new Set(m.to.map((id) => racked.find((b) => b.id === id)!.rack)).size).toBe(2);
  });

  it('empties brokers that may no longer hold replicas', () => {
    const plan = planRebalance([{ id: 1 }, { id: 2 }, { id: 4 }], threeBrokerTopic());
    expect(plan.after[3]).toBeUndefined();
    const all = new Map<string, number[]>();
    for (const p of threeBrokerTopic()) all.set(`${p.partition}`, [...p.replicas]);
    for (const m of plan.moves) all.set(`${m.partition}`, m.to);
    for (const r of all.values()) expect(r).not.toContain(3);
  });

  it('is disk-aware: no replica moves to a broker without room for it, and the room taken counts for later moves', () => {
    // Partitions of 100 MB; the new broker has room for 2.5 of them (3 with no reserve, 2 with 50 MB kept free).
    const parts = threeBrokerTopic().map((p) => ({ ...p, sizeBytes: 100e6 }));
    const brokers = [{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4, freeBytes: 300e6 }];
    const roomy = planRebalance(brokers, parts);
    expect(roomy.after[4]!.replicas).toBe(3);
    expect(roomy.noRoom).toEqual([4]);
    const reserved = planRebalance(brokers, parts, { reserveBytes: 50e6 });
    expect(reserved.after[4]!.replicas).toBe(2);
    expect(reserved.noRoom).toEqual([4]);
    // Room for all of it (or no sizes known): the plain plan.
    expect(planRebalance([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4, freeBytes: 10e9 }], parts).after[4]!.replicas).toBe(6);
    expect(planRebalance(brokers, threeBrokerTopic()).noRoom).toEqual([]);
  });
});
