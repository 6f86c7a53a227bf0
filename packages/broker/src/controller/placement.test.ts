import { assignReplicas, rackAlternatingOrder } from './placement.js';

describe('placement', () => {
  it('alternates racks', () => {
    const brokers = [
      { id: 1, rack: 'a' },
      { id: 2, rack: 'a' },
      { id: 3, rack: 'b' },
      { id: 4, rack: 'b' },
      { id: 5, rack: 'c' },
      { id: 6, rack: 'c' },
    ];
    expect(rackAlternatingOrder(brokers)).toEqual([1, 3, 5, 2, 4, 6]);
    const rackOf = new Map(brokers.map((b) => [b.id, b.rack]));
    for (const replicas of assignReplicas(brokers, 12, 3, 0)) {
      expect(new Set(replicas.map((id) => rackOf.get(id))).size).toBe(3);
    }
  });

  it('spreads preferred leaders and replicas evenly without racks', () => {
    const brokers = [1, 2, 3, 4].map((id) => ({ id, rack: '' }));
    const a = assignReplicas(brokers, 12, 3, 5);
    const leaders = new Map<number, number>();
    const load = new Map<number, number>();
    for (const r of a) {
      expect(new Set(r).size).toBe(3);
      leaders.set(r[0]!, (leaders.get(r[0]!) ?? 0) + 1);
      for (const id of r) load.set(id, (load.get(id) ?? 0) + 1);
    }
    expect([...leaders.values()]).toEqual([3, 3, 3, 3]);
    expect([...load.values()].every((n) => n === 9)).toBe(true);
  });

  it('refuses a replication factor above the broker count', () => {
    expect(() => assignReplicas([{ id: 1, rack: '' }], 1, 2, 0)).toThrow(/replication factor 2/);
  });
});
