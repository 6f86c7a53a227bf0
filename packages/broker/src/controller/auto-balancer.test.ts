import type { MetadataCommand } from './commands.js';
import { decodeCommand, encodeCommand } from './commands.js';
import { MetadataState } from './metadata-state.js';
import { AutoBalancer, DEFAULT_AUTO_BALANCE, planAutoBalance, type AutoBalanceOptions } from './auto-balancer.js';

function cluster(brokers: number[], partitions = 6, rf = 2) {
  const s = new MetadataState();
  let index = 0;
  const run = (cmd: MetadataCommand) => s.applyCommand(decodeCommand(encodeCommand(cmd)), ++index);
  const add = (id: number) => {
    run({ type: 'registerBroker', id, host: '127.0.0.1', port: 9000 + id, httpPort: 8000 + id, rack: '', incarnation: `run-${id}` });
    run({ type: 'unfenceBroker', id, brokerEpoch: s.broker(id)!.brokerEpoch });
  };
  const fence = (id: number) => run({ type: 'fenceBroker', id, brokerEpoch: s.broker(id)!.brokerEpoch, reason: 'test' });
  for (const id of brokers) add(id);
  expect(run({ type: 'createTopic', name: 't', topicId: 'id-t', numPartitions: partitions, replicationFactor: rf, configs: {} })).toMatchObject({ ok: true });
  const load = (id: number) => s.topics().reduce((n, t) => n + t.partitions.filter((p) => (p.targetReplicas ?? p.replicas).includes(id)).length, 0);
  return { s, run, add, fence, load };
}

const lines: string[] = [];
const logger = Object.fromEntries(['debug', 'info', 'warn', 'error'].map((l) => [l, (_f: object, msg: string) => void lines.push(`${l}: ${msg}`)])) as never;
const opts = (o: Partial<AutoBalanceOptions>): AutoBalanceOptions => ({ ...DEFAULT_AUTO_BALANCE, checkIntervalMs: 1, ...o });

test('node_add: a joining broker gets replicas, at most max.concurrent.moves partitions moving at once, until balanced', () => {
  const c = cluster([1, 2, 3]);
  const b = new AutoBalancer(opts({ mode: 'node_add', maxConcurrentMoves: 2 }), logger);
  let now = 0;
  b.activate(c.s, now);
  expect(b.check(c.s, (now += 10), () => 0)).toEqual([]); // balanced, no newcomer
  c.add(4);
  const moves = b.check(c.s, (now += 10), () => 0);
  expect(moves).toHaveLength(2);
  for (const m of moves) expect(m.replicas).toContain(4);
  c.run({ type: 'alterReassignments', partitions: moves });
  // The cap counts the moves in progress.
  expect(b.check(c.s, (now += 10), () => 0)).toEqual([]);
  expect(c.load(4)).toBe(2);
  expect(lines.some((l) => /broker 4 joined/.test(l))).toBe(true);
});

test('off: nothing moves, a newcomer stays empty', () => {
  const c = cluster([1, 2, 3]);
  const b = new AutoBalancer(opts({ mode: 'off' }), logger);
  b.activate(c.s, 0);
  c.add(4);
  expect(b.check(c.s, 100, () => 0)).toEqual([]);
  expect(planAutoBalance(c.s, opts({ mode: 'off' }), () => 0).moves).toEqual([]);
});

test('node_add: a live broker holding no replica starts an episode; none without one', () => {
  const c = cluster([1, 2, 3]);
  c.add(4);
  const b = new AutoBalancer(opts({ mode: 'node_add' }), logger);
  b.activate(c.s, 0);
  expect(b.check(c.s, 10, () => 0).length).toBeGreaterThan(0);
  const balanced = cluster([1, 2, 3]);
  const quiet = new AutoBalancer(opts({ mode: 'node_add' }), logger);
  quiet.activate(balanced.s, 0);
  expect(quiet.check(balanced.s, 10, () => 0)).toEqual([]);
});

test('continuous: a broker down for less than the timeout keeps its replicas (and nothing is balanced around it); after it, they move', () => {
  const c = cluster([1, 2, 3, 4], 8, 2);
  c.fence(3);
  const o = opts({ mode: 'continuous', maxConcurrentMoves: 100, nodeAvailabilityTimeoutMs: 60_000 });
  expect(planAutoBalance(c.s, o, () => 30_000).moves).toEqual([]);
  const step = planAutoBalance(c.s, o, () => 61_000);
  expect(step.moves.length).toBe(c.load(3));
  for (const m of step.moves) {
    expect(m.from).toContain(3);
    expect(m.to).not.toContain(3);
  }
  expect(step.why).toMatch(/broker 3 has been unavailable/);
});

test('continuous: refused with one warning while the live brokers cannot hold the replication factor', () => {
  const c = cluster([1, 2], 2, 2);
  c.fence(2);
  lines.length = 0;
  const b = new AutoBalancer(opts({ mode: 'continuous', nodeAvailabilityTimeoutMs: 1000 }), logger);
  b.activate(c.s, 0);
  expect(b.check(c.s, 10, () => 5000)).toEqual([]);
  expect(b.check(c.s, 20, () => 6000)).toEqual([]);
  expect(lines.filter((l) => l.startsWith('warn')).length).toBe(1);
});

test('node_add: a broker that stays empty because there is nothing to give it starts one episode, not one per check', () => {
  const c = cluster([1, 2, 3], 1, 3);
  c.add(4);
  lines.length = 0;
  const b = new AutoBalancer(opts({ mode: 'node_add' }), logger);
  b.activate(c.s, 0);
  for (let now = 10; now <= 50; now += 10) expect(b.check(c.s, now, () => 0)).toEqual([]);
  expect(lines.filter((l) => /joined/.test(l))).toHaveLength(1);
});

test('continuous: a move onto a broker unavailable past the timeout is cancelled (it could never complete), then its replicas move off', () => {
  const c = cluster([1, 2, 3], 6, 2);
  c.add(4);
  const o = opts({ mode: 'continuous', maxConcurrentMoves: 2, nodeAvailabilityTimeoutMs: 1000 });
  const first = planAutoBalance(c.s, o, () => 0).moves;
  expect(first.length).toBeGreaterThan(0);
  c.run({ type: 'alterReassignments', partitions: first.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.to })) });
  c.fence(4); // dies before its moves complete
  expect(planAutoBalance(c.s, o, () => 500)).toMatchObject({ moves: [] }); // not past the timeout: nothing
  const step = planAutoBalance(c.s, o, () => 2000);
  expect(step.cancels).toEqual(first.map((m) => ({ topic: m.topic, partition: m.partition })));
  const b = new AutoBalancer(o, logger);
  b.activate(c.s, 0);
  const changes = b.check(c.s, 10, () => 2000);
  expect(changes.every((ch) => ch.replicas === null)).toBe(true);
  c.run({ type: 'alterReassignments', partitions: changes });
  expect(c.s.reassignments()).toEqual([]);
  expect(c.load(4)).toBe(0);
});
