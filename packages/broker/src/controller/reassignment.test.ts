import type { MetadataCommand } from './commands.js';
import { decodeCommand, encodeCommand } from './commands.js';
import { MetadataState } from './metadata-state.js';
import type { PartitionRecord } from './types.js';

/** Four brokers, topic `t` of 2 partitions RF 2 placed on brokers 1-3 (broker 4 joined after). */
function cluster() {
  const s = new MetadataState();
  let index = 0;
  const run = (cmd: MetadataCommand) => s.applyCommand(decodeCommand(encodeCommand(cmd)), ++index);
  const register = (id: number) => run({ type: 'registerBroker', id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation: `run-${id}` });
  const unfence = (id: number) => run({ type: 'unfenceBroker', id, brokerEpoch: s.broker(id)!.brokerEpoch });
  const fence = (id: number) => run({ type: 'fenceBroker', id, brokerEpoch: s.broker(id)!.brokerEpoch, reason: 'test' });
  for (const id of [1, 2, 3]) {
    register(id);
    unfence(id);
  }
  expect(run({ type: 'createTopic', name: 't', topicId: 'id-t', numPartitions: 2, replicationFactor: 2, configs: {} })).toMatchObject({ ok: true });
  register(4);
  unfence(4);
  const part = (p = 0): PartitionRecord => s.topic('t')!.partitions[p]!;
  const reassign = (replicas: number[] | null, extra: { partition?: number; topic?: string; allowReplicationFactorChange?: boolean } = {}) => {
    const r = run({ type: 'alterReassignments', partitions: [{ topic: extra.topic ?? 't', partition: extra.partition ?? 0, replicas, ...(extra.allowReplicationFactorChange ? { allowReplicationFactorChange: true } : {}) }] });
    expect(r.ok).toBe(true);
    return (r as { value: { results: { code?: string; message?: string }[] } }).value.results[0]!;
  };
  /** The leader's ISR proposal, as PartitionLeader sends it. */
  const alterIsr = (isr: number[], p = 0) => {
    const rec = part(p);
    return run({ type: 'alterPartition', topic: 't', partition: p, leaderId: rec.leader, leaderEpoch: rec.leaderEpoch, partitionEpoch: rec.partitionEpoch, isr });
  };
  return { s, run, part, reassign, alterIsr, fence, unfence, register };
}

describe('partition reassignment in the metadata state', () => {
  it('adds the new replicas outside the ISR, completes when they are in sync, and drops the removed ones', () => {
    const c = cluster();
    const before = c.part();
    const [a, b] = before.replicas as [number, number];
    const newcomer = [1, 2, 3, 4].find((id) => !before.replicas.includes(id) && id !== 3) ?? 4;
    expect(c.reassign([a, newcomer])).toEqual({ topic: expect.any(String), partition: expect.any(Number) });
    const moving = c.part();
    expect(moving).toMatchObject({ replicas: [a, b, newcomer], isr: [a, b], leader: a, targetReplicas: [a, newcomer], adding: [newcomer], removing: [b] });
    expect(moving.partitionEpoch).toBe(before.partitionEpoch + 1);
    expect(moving.leaderEpoch).toBe(before.leaderEpoch);
    // A second reassignment of a moving partition is refused, nothing changed.
    expect(c.reassign([a, b])).toMatchObject({ code: 'REASSIGNMENT_IN_PROGRESS' });
    expect(c.part()).toEqual(moving);
    // The leader lets the newcomer in: the move completes in the same step.
    expect(c.alterIsr([a, b, newcomer])).toMatchObject({ ok: true, value: { replicas: [a, newcomer], isr: [a, newcomer] } });
    const done = c.part();
    expect(done).toMatchObject({ replicas: [a, newcomer], isr: [a, newcomer], leader: a, leaderEpoch: before.leaderEpoch });
    expect(done.targetReplicas).toBeUndefined();
    expect(done.adding).toBeUndefined();
    expect(done.removing).toBeUndefined();
    expect(c.s.reassignments()).toEqual([]);
  });

  it('moves leadership to the new set when the leader is removed', () => {
    const c = cluster();
    const before = c.part();
    const others = [1, 2, 3, 4].filter((id) => !before.replicas.includes(id));
    expect(c.reassign(others)).toEqual({ topic: expect.any(String), partition: expect.any(Number) });
    expect(c.part().leader).toBe(before.leader);
    expect(c.alterIsr([...before.isr, others[0]!])).toMatchObject({ ok: true });
    expect(c.part().targetReplicas).toEqual(others); // one adding replica still out of the ISR
    expect(c.alterIsr([...before.isr, ...others])).toMatchObject({ ok: true });
    expect(c.part()).toMatchObject({ replicas: others, isr: others, leader: others[0], leaderEpoch: before.leaderEpoch + 1 });
  });

  it('completes at once when nothing is added (a reorder, or fewer replicas when allowed)', () => {
    const c = cluster();
    const before = c.part();
    const reversed = [...before.replicas].reverse();
    expect(c.reassign(reversed)).toEqual({ topic: expect.any(String), partition: expect.any(Number) });
    expect(c.part()).toMatchObject({ replicas: reversed, leader: before.leader });
    expect(c.reassign([reversed[0]!])).toMatchObject({ code: 'INVALID_REPLICATION_FACTOR' });
    expect(c.reassign([reversed[0]!], { allowReplicationFactorChange: true })).toEqual({ topic: expect.any(String), partition: expect.any(Number) });
    expect(c.part()).toMatchObject({ replicas: [reversed[0]], isr: [reversed[0]], leader: reversed[0] });
  });

  it('cancel restores the original set and leadership', () => {
    const c = cluster();
    const before = c.part();
    const others = [1, 2, 3, 4].filter((id) => !before.replicas.includes(id));
    c.reassign(others);
    expect(c.reassign(null)).toEqual({ topic: expect.any(String), partition: expect.any(Number) });
    expect(c.part()).toMatchObject({ replicas: before.replicas, isr: before.isr, leader: before.leader, leaderEpoch: before.leaderEpoch });
    expect(c.part().targetReplicas).toBeUndefined();
    expect(c.reassign(null)).toMatchObject({ code: 'NO_REASSIGNMENT_IN_PROGRESS' });
  });

  it('refuses bad input with typed errors and changes nothing', () => {
    const c = cluster();
    const before = c.s.topic('t');
    expect(c.reassign([1, 2], { topic: 'nope' })).toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(c.reassign([1, 2], { partition: 9 })).toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(c.reassign([1, 9])).toMatchObject({ code: 'INVALID_REPLICA_ASSIGNMENT', message: expect.stringContaining('9') });
    expect(c.reassign([4, 4])).toMatchObject({ code: 'INVALID_REPLICA_ASSIGNMENT', message: expect.stringContaining('more than once') });
    expect(c.reassign([])).toMatchObject({ code: 'INVALID_REPLICA_ASSIGNMENT' });
    expect(c.reassign([1, 2, 4])).toMatchObject({ code: 'INVALID_REPLICATION_FACTOR' });
    expect(c.s.topic('t')).toBe(before);
  });

  it('survives a snapshot (controller failover, broker restart) and completes afterwards', () => {
    const c = cluster();
    const before = c.part();
    const others = [1, 2, 3, 4].filter((id) => !before.replicas.includes(id));
    c.reassign(others);
    const copy = new MetadataState();
    copy.restore(c.s.snapshot(), 100);
    expect(copy.topic('t')!.partitions[0]).toEqual(c.part());
    expect(copy.reassignments().map((r) => r.partition)).toEqual([0]);
  });

  it('the leader failing over within the original set keeps the move going', () => {
    const c = cluster();
    const before = c.part();
    const others = [1, 2, 3, 4].filter((id) => !before.replicas.includes(id));
    c.reassign(others);
    c.fence(before.leader);
    const after = c.part();
    expect(after.leader).toBe(before.replicas.find((id) => id !== before.leader));
    expect(after.targetReplicas).toEqual(others);
    expect(c.alterIsr([after.leader, ...others])).toMatchObject({ ok: true });
    expect(c.part()).toMatchObject({ replicas: others, leader: others[0] });
  });

  it('decommissioned brokers take no new replicas', () => {
    const c = cluster();
    expect(c.run({ type: 'decommissionBroker', id: 4, decommissioned: true })).toMatchObject({ ok: true });
    const before = c.part();
    const target = [before.replicas[0]!, 4];
    expect(c.reassign(target)).toMatchObject({ code: 'BROKER_DECOMMISSIONED' });
    expect(c.run({ type: 'createTopic', name: 'u', topicId: 'id-u', numPartitions: 8, replicationFactor: 1, configs: {} })).toMatchObject({ ok: true });
    expect(c.s.topic('u')!.partitions.flatMap((p) => p.replicas)).not.toContain(4);
    c.register(4); // a new run keeps the mark
    expect(c.s.broker(4)!.decommissioned).toBe(true);
  });
});
