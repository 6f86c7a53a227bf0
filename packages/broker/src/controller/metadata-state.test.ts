import type { MetadataCommand } from './commands.js';
import { decodeCommand, encodeCommand } from './commands.js';
import { MetadataState } from './metadata-state.js';

/** A metadata state driven by a script of commands, as the Raft log would apply them. */
function harness() {
  const s = new MetadataState();
  let index = 0;
  const deltas: Array<{ unclean: number }> = [];
  s.onChange((d) => deltas.push({ unclean: d.uncleanElections.length }));
  const run = (cmd: MetadataCommand) => s.applyCommand(decodeCommand(encodeCommand(cmd)), ++index);
  const register = (id: number, incarnation = `run-${id}`, rack = '') =>
    run({ type: 'registerBroker', id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack, incarnation });
  const epochOf = (id: number) => s.broker(id)!.brokerEpoch;
  const unfence = (id: number) => run({ type: 'unfenceBroker', id, brokerEpoch: epochOf(id) });
  const fence = (id: number) => run({ type: 'fenceBroker', id, brokerEpoch: epochOf(id), reason: 'test' });
  const part = (topic: string, p: number) => s.topic(topic)!.partitions[p]!;
  return { s, run, register, unfence, fence, part, deltas, epochOf };
}

function threeBrokers(configs: Record<string, string> = {}) {
  const h = harness();
  for (const id of [1, 2, 3]) {
    h.register(id);
    h.unfence(id);
  }
  expect(h.run({ type: 'createTopic', name: 'orders', topicId: 'id-orders', numPartitions: 3, replicationFactor: 3, configs })).toMatchObject({ ok: true });
  return h;
}

describe('MetadataState', () => {
  it('registers brokers fenced, and places replicas and preferred leaders evenly once they are unfenced', () => {
    const h = harness();
    h.register(1);
    expect(h.s.broker(1)).toMatchObject({ fenced: true, brokerEpoch: 1 });
    expect(h.run({ type: 'createTopic', name: 't', topicId: 'x', numPartitions: 1, replicationFactor: 1, configs: {} })).toMatchObject({
      ok: false,
      code: 'INVALID_REPLICATION_FACTOR',
    });
    h.unfence(1);
    h.register(2);
    h.unfence(2);
    h.register(3);
    h.unfence(3);
    h.run({ type: 'createTopic', name: 't', topicId: 'x', numPartitions: 6, replicationFactor: 3, configs: {} });
    const parts = h.s.topic('t')!.partitions;
    const leaders = parts.map((p) => p.leader);
    for (const id of [1, 2, 3]) expect(leaders.filter((l) => l === id)).toHaveLength(2);
    for (const p of parts) {
      expect(new Set(p.replicas).size).toBe(3);
      expect(p.isr).toEqual(p.replicas);
      expect(p.leader).toBe(p.replicas[0]);
      expect(p).toMatchObject({ leaderEpoch: 0, partitionEpoch: 0 });
    }
  });

  it('a retried registration of the same run keeps its epoch; other endpoints for the same run are refused', () => {
    const h = harness();
    expect(h.register(1)).toEqual({ ok: true, value: { brokerEpoch: 1 } });
    expect(h.register(1)).toEqual({ ok: true, value: { brokerEpoch: 1 } });
    expect(h.run({ type: 'registerBroker', id: 1, host: 'elsewhere', port: 1, httpPort: 2, rack: '', incarnation: 'run-1' })).toMatchObject({
      ok: false,
      code: 'DUPLICATE_BROKER_REGISTRATION',
    });
  });

  it('fencing a leader elects the next ISR member in replica order and drops the fenced broker from the ISR', () => {
    const h = threeBrokers();
    const before = h.part('orders', 0);
    expect(before.leader).toBe(before.replicas[0]);
    h.fence(before.leader);
    const after = h.part('orders', 0);
    expect(after.leader).toBe(before.replicas[1]);
    expect(after.isr).toEqual(before.replicas.slice(1));
    expect(after.leaderEpoch).toBe(before.leaderEpoch + 1);
    expect(after.partitionEpoch).toBe(before.partitionEpoch + 1);
    // Every partition changed in the one command (regression: later partitions overwrote earlier ones).
    for (let p = 0; p < 3; p++) expect(h.part('orders', p).isr).not.toContain(before.leader);
  });

  it('never elects outside the ISR: with the last ISR member fenced the partition goes offline, and comes back with it', () => {
    const h = threeBrokers();
    const r = h.part('orders', 0).replicas;
    // Shrink the ISR to the leader alone (followers fell behind).
    const p0 = h.part('orders', 0);
    expect(h.run({ type: 'alterPartition', topic: 'orders', partition: 0, leaderId: p0.leader, leaderEpoch: p0.leaderEpoch, partitionEpoch: p0.partitionEpoch, isr: [r[0]!] })).toMatchObject({ ok: true });
    h.fence(r[0]!);
    expect(h.part('orders', 0)).toMatchObject({ leader: -1, isr: [r[0]] });
    expect(h.deltas.some((d) => d.unclean > 0)).toBe(false);
    h.unfence(r[0]!);
    expect(h.part('orders', 0)).toMatchObject({ leader: r[0], isr: [r[0]] });
  });

  it('elects outside the ISR only when the topic allows unclean election, and reports it', () => {
    const h = threeBrokers({ 'unclean.leader.election.enable': 'true' });
    const r = h.part('orders', 0).replicas;
    const p0 = h.part('orders', 0);
    h.run({ type: 'alterPartition', topic: 'orders', partition: 0, leaderId: p0.leader, leaderEpoch: p0.leaderEpoch, partitionEpoch: p0.partitionEpoch, isr: [r[0]!] });
    h.fence(r[0]!);
    expect(h.part('orders', 0)).toMatchObject({ leader: r[1], isr: [r[1]] });
    expect(h.deltas.some((d) => d.unclean > 0)).toBe(true);
  });

  it('checks AlterPartition against the leader epoch, the partition epoch, the replica set and fencing', () => {
    const h = threeBrokers();
    const p = h.part('orders', 1);
    const base = { type: 'alterPartition' as const, topic: 'orders', partition: 1, leaderId: p.leader, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch };
    expect(h.run({ ...base, leaderEpoch: p.leaderEpoch + 1, isr: [p.leader] })).toMatchObject({ ok: false, code: 'FENCED_LEADER_EPOCH' });
    expect(h.run({ ...base, leaderId: p.replicas[1]!, isr: [p.replicas[1]!] })).toMatchObject({ ok: false, code: 'FENCED_LEADER_EPOCH' });
    expect(h.run({ ...base, partitionEpoch: p.partitionEpoch + 5, isr: [p.leader] })).toMatchObject({ ok: false, code: 'INCONSISTENT_PARTITION_EPOCH' });
    expect(h.run({ ...base, isr: [p.replicas[1]!] })).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(h.run({ ...base, isr: [p.leader, 99] })).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    expect(h.run({ ...base, isr: [p.leader] })).toMatchObject({ ok: true, value: { partitionEpoch: p.partitionEpoch + 1, isr: [p.leader] } });
    // The same proposal again is stale now.
    expect(h.run({ ...base, isr: [p.leader] })).toMatchObject({ ok: false, code: 'INCONSISTENT_PARTITION_EPOCH' });
    // A fenced broker cannot rejoin.
    const follower = p.replicas[1]!;
    h.fence(follower);
    const q = h.part('orders', 1);
    expect(h.run({ ...base, leaderEpoch: q.leaderEpoch, partitionEpoch: q.partitionEpoch, isr: [q.leader, follower] })).toMatchObject({ ok: false, code: 'REPLICA_NOT_AVAILABLE' });
  });

  it('deleting and recreating a topic copies the old topic\'s records into the new one: AlterPartition from the leader of the deleted incarnation is refused', () => {
    const h = threeBrokers();
    h.run({ type: 'deleteTopic', name: 'orders' });
    h.run({ type: 'createTopic', name: 'orders', topicId: 'id-orders-2', numPartitions: 3, replicationFactor: 3, configs: {} });
    // Same name, leader, leader epoch and partition epoch as the deleted incarnation's partition 0.
    const p = h.part('orders', 0);
    const base = { type: 'alterPartition' as const, topic: 'orders', partition: 0, leaderId: p.leader, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, isr: [p.leader] };
    expect(h.run({ ...base, topicId: 'id-orders' })).toMatchObject({ ok: false, code: 'UNKNOWN_TOPIC_ID' });
    expect(h.part('orders', 0).isr).toEqual(p.isr);
    expect(h.run({ ...base, topicId: 'id-orders-2' })).toMatchObject({ ok: true, value: { isr: [p.leader] } });
    // A command written before topic ids were sent (replayed from an older log) is still applied by name.
    expect(decodeCommand(encodeCommand(base))).not.toHaveProperty('topicId');
  });

  it('a broker that restarts (new run) leaves the ISRs and leads nothing until it is back in sync', () => {
    const h = threeBrokers();
    const leaderOf0 = h.part('orders', 0).leader;
    h.register(leaderOf0, 'second-run');
    expect(h.s.broker(leaderOf0)).toMatchObject({ fenced: true });
    for (let p = 0; p < 3; p++) {
      expect(h.part('orders', p).isr).not.toContain(leaderOf0);
      expect(h.part('orders', p).leader).not.toBe(leaderOf0);
    }
  });

  it('moves leadership back to the preferred replica only when it is live and in the ISR, and only in the expected epoch', () => {
    const h = threeBrokers();
    const preferred = h.part('orders', 0).leader;
    h.fence(preferred);
    h.unfence(preferred);
    const moved = h.part('orders', 0);
    expect(moved.leader).not.toBe(preferred);
    // Not in the ISR yet: stays.
    h.run({ type: 'electPreferred', partitions: [{ topic: 'orders', partition: 0, leaderEpoch: moved.leaderEpoch }] });
    expect(h.part('orders', 0).leader).toBe(moved.leader);
    // Back in the ISR (the leader's AlterPartition), then the election happens.
    h.run({ type: 'alterPartition', topic: 'orders', partition: 0, leaderId: moved.leader, leaderEpoch: moved.leaderEpoch, partitionEpoch: moved.partitionEpoch, isr: [...moved.isr, preferred] });
    h.run({ type: 'electPreferred', partitions: [{ topic: 'orders', partition: 0, leaderEpoch: moved.leaderEpoch - 1 }] });
    expect(h.part('orders', 0).leader).toBe(moved.leader);
    h.run({ type: 'electPreferred', partitions: [{ topic: 'orders', partition: 0, leaderEpoch: moved.leaderEpoch }] });
    expect(h.part('orders', 0)).toMatchObject({ leader: preferred, leaderEpoch: moved.leaderEpoch + 1 });
  });

  it('creates partitions, deletes topics, refuses duplicates and accepts a retried create', () => {
    const h = threeBrokers();
    expect(h.run({ type: 'createTopic', name: 'orders', topicId: 'other', numPartitions: 1, replicationFactor: 1, configs: {} })).toMatchObject({ ok: false, code: 'TOPIC_ALREADY_EXISTS' });
    expect(h.run({ type: 'createTopic', name: 'orders', topicId: 'id-orders', numPartitions: 3, replicationFactor: 3, configs: {} })).toMatchObject({ ok: true });
    expect(h.run({ type: 'createPartitions', name: 'orders', count: 2 })).toMatchObject({ ok: false, code: 'INVALID_PARTITIONS' });
    expect(h.run({ type: 'createPartitions', name: 'orders', count: 5 })).toMatchObject({ ok: true });
    expect(h.s.topic('orders')!.partitions).toHaveLength(5);
    expect(h.run({ type: 'deleteTopic', name: 'orders' })).toMatchObject({ ok: true });
    expect(h.s.topic('orders')).toBeUndefined();
    expect(h.run({ type: 'deleteTopic', name: 'orders' })).toMatchObject({ ok: false, code: 'UNKNOWN_TOPIC_OR_PARTITION' });
  });

  it('a broker fenced by its controlled shutdown stays fenced until it registers again', () => {
    const h = threeBrokers();
    const leader = h.part('orders', 0).leader;
    expect(h.run({ type: 'fenceBroker', id: leader, brokerEpoch: h.epochOf(leader), reason: 'controlled shutdown' })).toMatchObject({ ok: true });
    expect(h.part('orders', 0).leader).not.toBe(leader);
    expect(h.unfence(leader)).toMatchObject({ ok: false, code: 'STALE_BROKER_EPOCH' });
    h.register(leader, 'next-run');
    expect(h.unfence(leader)).toMatchObject({ ok: true });
  });

  it('hands out disjoint producer id blocks', () => {
    const h = harness();
    expect(h.run({ type: 'allocateProducerIds', brokerId: 1, count: 1000 })).toEqual({ ok: true, value: { firstProducerId: 0, count: 1000 } });
    expect(h.run({ type: 'allocateProducerIds', brokerId: 2, count: 1000 })).toEqual({ ok: true, value: { firstProducerId: 1000, count: 1000 } });
  });

  it('alterTopicConfigs sets and removes keys of the topic with that id only, and the change is in the snapshot', () => {
    const h = threeBrokers({ 'retention.ms': '1000', 'segment.ms': '60000' });
    const id = h.s.topic('orders')!.topicId;
    expect(h.run({ type: 'alterTopicConfigs', name: 'orders', topicId: id, set: { 'retention.ms': '5000', 'max.message.bytes': '2048' }, delete: ['segment.ms'] })).toMatchObject({
      ok: true,
      value: { configs: { 'retention.ms': '5000', 'max.message.bytes': '2048' } },
    });
    expect(h.s.topic('orders')!.configs).toEqual({ 'retention.ms': '5000', 'max.message.bytes': '2048' });
    // A command for an older topic of the same name (deleted and re-created since) changes nothing.
    expect(h.run({ type: 'alterTopicConfigs', name: 'orders', topicId: 'older-id', set: { 'retention.ms': '1' }, delete: [] })).toMatchObject({ ok: false, code: 'UNKNOWN_TOPIC_OR_PARTITION' });
    const copy = new MetadataState();
    copy.restore(h.s.snapshot(), 7);
    expect(copy.topic('orders')!.configs).toEqual({ 'retention.ms': '5000', 'max.message.bytes': '2048' });
  });

  it('alterTopicConfigs with an unknown key, a bad value or a key both set and deleted does not decode', () => {
    const cmd = (set: Record<string, string>, del: string[]) => ({ type: 'alterTopicConfigs', name: 'orders', topicId: 'id-orders', set, delete: del }) as MetadataCommand;
    expect(() => decodeCommand(encodeCommand(cmd({ 'no.such.key': '1' }, [])))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => decodeCommand(encodeCommand(cmd({ 'retention.ms': 'soon' }, [])))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => decodeCommand(encodeCommand(cmd({}, ['no.such.key'])))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect(() => decodeCommand(encodeCommand(cmd({ 'retention.ms': '1' }, ['retention.ms'])))).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
  });

  it('restores from its snapshot to the same state', () => {
    const h = threeBrokers();
    h.fence(2);
    const copy = new MetadataState();
    copy.restore(h.s.snapshot(), 42);
    expect(copy.brokers()).toEqual(h.s.brokers());
    expect(copy.topics()).toEqual(h.s.topics());
    expect(copy.lastApplied).toBe(42);
    expect(Buffer.from(copy.snapshot()).toString()).toBe(Buffer.from(h.s.snapshot()).toString());
  });

  it('keeps each controller\'s registered endpoint (the last one wins), in its snapshot too', () => {
    const h = harness();
    expect(h.run({ type: 'registerController', id: 6, host: '10.0.0.6', port: 29096 })).toEqual({ ok: true });
    expect(h.run({ type: 'registerController', id: 5, host: '10.0.0.5', port: 29095 })).toEqual({ ok: true });
    expect(h.run({ type: 'registerController', id: 6, host: '10.0.0.16', port: 29097 })).toEqual({ ok: true });
    expect(h.s.controllerEndpoints()).toEqual([
      { id: 5, host: '10.0.0.5', port: 29095 },
      { id: 6, host: '10.0.0.16', port: 29097 },
    ]);
    const copy = new MetadataState();
    copy.restore(h.s.snapshot(), 3);
    expect(copy.controllerEndpoint(6)).toEqual({ id: 6, host: '10.0.0.16', port: 29097 });
    expect(() => decodeCommand(encodeCommand({ type: 'registerController', id: 0, host: 'h', port: 1 }))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    expect(() => decodeCommand(encodeCommand({ type: 'registerController', id: 1, host: 'a b', port: 1 }))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
    expect(() => decodeCommand(encodeCommand({ type: 'registerController', id: 1, host: 'h', port: 70000 }))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }));
  });

  it('refuses malformed commands without changing anything', () => {
    const h = threeBrokers();
    const before = Buffer.from(h.s.snapshot()).toString();
    for (const bad of ['nope', '{"type":"createTopic"}', '{"type":"alterPartition","topic":"orders","partition":-1}', '{"type":"format-disk"}']) {
      expect(h.s.apply({ term: 1, index: 100, type: 0 as never, data: Buffer.from(bad) })).toMatchObject({ ok: false, code: 'INVALID_REQUEST' });
    }
    expect(Buffer.from(h.s.snapshot()).toString()).toBe(before);
  });
});

describe('MetadataState: the first-user exception', () => {
  it("an upsert made through it is refused once any user exists (a broker with stale metadata cannot reset a user's password)", () => {
    const h = harness();
    const cred = (user: string, fill: number) => ({
      type: 'upsertScramCredential' as const,
      user,
      mechanism: 'SCRAM-SHA-256' as const,
      iterations: 4096,
      salt: Buffer.alloc(16, fill).toString('base64'),
      storedKey: Buffer.alloc(32, fill).toString('base64'),
      serverKey: Buffer.alloc(32, fill + 1).toString('base64'),
    });
    expect(h.run({ ...cred('admin', 1), onlyIfNoUsers: true })).toMatchObject({ ok: true });
    // The same bootstrap request's other mechanism for the same new user.
    expect(h.run({ ...cred('admin', 1), mechanism: 'SCRAM-SHA-512', storedKey: Buffer.alloc(64, 1).toString('base64'), serverKey: Buffer.alloc(64, 2).toString('base64'), onlyIfNoUsers: true })).toMatchObject({ ok: true });
    const before = Buffer.from(h.s.scramCredential('admin', 'SCRAM-SHA-256')!.storedKey).toString('base64');
    expect(h.run({ ...cred('admin', 7), onlyIfNoUsers: true })).toMatchObject({ ok: false, code: 'CLUSTER_AUTHORIZATION_FAILED' });
    expect(h.run({ ...cred('other', 7), onlyIfNoUsers: true })).toMatchObject({ ok: false, code: 'CLUSTER_AUTHORIZATION_FAILED' });
    expect(Buffer.from(h.s.scramCredential('admin', 'SCRAM-SHA-256')!.storedKey).toString('base64')).toBe(before);
    // An authenticated change (no condition) goes through as before.
    expect(h.run(cred('other', 7))).toMatchObject({ ok: true });
  });
});

describe('MetadataState: delegated logins (HTTP consumer instances, valid on every broker)', () => {
  const hash = (n: number) => Buffer.alloc(32, n).toString('base64');
  const delegate = (h: ReturnType<typeof harness>, n: number, brokerId = 1, incarnation = 'run-1') =>
    h.run({ type: 'delegateLogin', tokenHash: hash(n), principal: `User:u${n}`, brokerId, incarnation });

  it('keeps a login of a registered run until revoked; a restart of that broker ends its logins, not others', () => {
    const h = harness();
    h.register(1);
    h.register(2);
    expect(delegate(h, 1)).toEqual({ ok: true });
    expect(delegate(h, 2, 2, 'run-2')).toEqual({ ok: true });
    expect(h.s.delegatedLogin(hash(1))).toBe('User:u1');
    expect(h.run({ type: 'revokeLogin', tokenHash: hash(1) })).toEqual({ ok: true });
    expect(h.s.delegatedLogin(hash(1))).toBeUndefined();
    expect(delegate(h, 3)).toEqual({ ok: true });
    // A retried registration of the same run keeps them; a new run of broker 1 ends its logins only.
    h.register(1);
    expect(h.s.delegatedLogin(hash(3))).toBe('User:u3');
    h.register(1, 'run-1b');
    expect(h.s.delegatedLogin(hash(3))).toBeUndefined();
    expect(h.s.delegatedLogin(hash(2))).toBe('User:u2');
    // A login of a run that is not (or no longer) registered is refused.
    expect(delegate(h, 4, 1, 'run-1')).toMatchObject({ ok: false, code: 'BROKER_NOT_AVAILABLE' });
    expect(delegate(h, 5, 9, 'run-9')).toMatchObject({ ok: false, code: 'BROKER_NOT_AVAILABLE' });
  });

  it('survives a snapshot; a malformed command is refused before it is applied', () => {
    const h = harness();
    h.register(1);
    delegate(h, 7);
    const copy = new MetadataState();
    copy.restore(h.s.snapshot(), 10);
    expect(copy.delegatedLogin(hash(7))).toBe('User:u7');
    for (const bad of [
      { type: 'delegateLogin', tokenHash: 'short', principal: 'User:x', brokerId: 1, incarnation: 'run-1' },
      { type: 'delegateLogin', tokenHash: hash(1), principal: 'alice', brokerId: 1, incarnation: 'run-1' },
      { type: 'revokeLogin', tokenHash: 'a b' },
    ]) {
      expect(() => decodeCommand(encodeCommand(bad as MetadataCommand))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }) as Error);
    }
  });
});
