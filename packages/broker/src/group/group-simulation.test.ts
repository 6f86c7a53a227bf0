/**
 * Deterministic simulation: real group members (the client's GroupMember)
 * against the real coordinator, on one manual clock, with the network as
 * direct calls that can be cut. After every step: no partition has two
 * owners.
 */
import { MqError } from '@mq/protocol/errors';
// The client's group member (test-only import: the broker's code never depends on it).
import { GroupMember, type GroupRpc, type TopicPartition } from '../../../client/src/group/index.js';
import { createGroupCoordinator, type GroupCoordinator } from './group-coordinator.js';
import { MemoryOffsetsLog } from './offsets-log.js';
import { ManualTime } from '@mq/protocol/components';

const SESSION = 10_000;

interface SimMember {
  name: string;
  member: GroupMember;
  /** false: every request fails as if the process died or the network is cut. */
  up: boolean;
  revoked: number;
  lost: number;
  /** Steps at which the member owned nothing although it had partitions before (a consumption gap). */
  gaps: number;
}

class Sim {
  time = new ManualTime();
  log = new MemoryOffsetsLog(4);
  counts = new Map<string, number>([['orders', 6]]);
  coordinator: GroupCoordinator;
  members: SimMember[] = [];
  violations: string[] = [];

  constructor(initialDelayMs = 0) {
    this.coordinator = createGroupCoordinator(
      { offsetsTopicPartitions: 4, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: initialDelayMs },
      {
        offsetsLog: this.log,
        topics: { partitionCount: (t) => this.counts.get(t), logEndOffset: () => 1000 },
        clock: this.time.clock,
        timers: this.time,
      },
    );
  }

  rpc(sm: () => SimMember, name: string): GroupRpc {
    const call = async <T>(fn: () => Promise<T>): Promise<T> => {
      await Promise.resolve();
      if (!sm().up) throw new MqError('CONNECTION_ERROR', `${name} is unreachable`);
      const r = await fn();
      await Promise.resolve();
      if (!sm().up) throw new MqError('CONNECTION_ERROR', `${name} is unreachable`);
      return r;
    };
    const ctx = { clientId: name, clientHost: '/sim' };
    return {
      joinGroup: (req) => call(() => this.coordinator.joinGroup(req, ctx)),
      syncGroup: (req) => call(() => this.coordinator.syncGroup(req, ctx)),
      heartbeat: (req) => call(() => this.coordinator.heartbeat(req)),
      leaveGroup: (req) => call(() => this.coordinator.leaveGroup(req)),
    };
  }

  async start() {
    await this.coordinator.startup();
    return this;
  }

  add(name: string, options: { assignors?: string[]; instanceId?: string; topics?: string[] } = {}): SimMember {
    const sm: SimMember = { name, member: undefined as never, up: true, revoked: 0, lost: 0, gaps: 0 };
    sm.member = new GroupMember(
      {
        groupId: 'g',
        groupInstanceId: options.instanceId,
        sessionTimeoutMs: SESSION,
        rebalanceTimeoutMs: 20_000,
        heartbeatIntervalMs: 1000,
        maxPollIntervalMs: 0,
        partitionAssigners: options.assignors ?? ['cooperative-sticky'],
      },
      {
        rpc: this.rpc(() => sm, name),
        metadata: {
          partitionCounts: async (topics) => new Map(topics.filter((t) => this.counts.has(t)).map((t) => [t, this.counts.get(t)!])),
          listTopics: async () => [...this.counts.keys()],
        },
        listener: {
          onPartitionsRevoked: (tps) => void (sm.revoked += tps.length),
          onPartitionsLost: (tps) => void (sm.lost += tps.length),
        },
        clock: this.time.clock,
        timers: this.time,
        random: () => 0.5,
      },
    );
    sm.member.subscribe(options.topics ?? ['orders']);
    this.members.push(sm);
    return sm;
  }

  async settle() {
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
  }

  /** Advances time in 100 ms steps, checking the single-owner invariant after each. */
  async run(ms: number) {
    for (let t = 0; t < ms; t += 100) {
      this.time.advance(100);
      await this.settle();
      this.check();
    }
  }

  check() {
    const owner = new Map<string, string>();
    for (const sm of this.members) {
      if (!sm.up) continue; // a dead process owns nothing
      for (const tp of sm.member.assignment()) {
        const key = `${tp.topic}-${tp.partition}`;
        const prev = owner.get(key);
        if (prev) this.violations.push(`${key} owned by ${prev} and ${sm.name} at ${this.time.now()}`);
        owner.set(key, sm.name);
      }
    }
  }

  owned(sm: SimMember): string[] {
    return sm.member.assignment().map((tp: TopicPartition) => `${tp.topic}-${tp.partition}`);
  }

  allStable(list = this.members.filter((m) => m.up)) {
    return list.every((m) => m.member.state === 'stable');
  }

  async until(cond: () => boolean, maxMs = 120_000) {
    for (let t = 0; t < maxMs; t += 100) {
      if (cond()) return;
      await this.run(100);
    }
    throw new Error(`condition not reached within ${maxMs} simulated ms`);
  }

  async close() {
    for (const sm of this.members) if (sm.up) await sm.member.close();
    this.coordinator.close();
  }
}

function sizes(sim: Sim, list = sim.members.filter((m) => m.up)) {
  return list.map((m) => m.member.assignment().length).sort();
}

describe.each([['cooperative-sticky'], ['range']])('group simulation with %s', (assignor) => {
  it('three members share six partitions; a fourth joins; one dies: every partition always has at most one owner', async () => {
    const sim = await new Sim().start();
    const [a, b, c] = ['a', 'b', 'c'].map((n) => sim.add(n, { assignors: [assignor] }));
    await sim.until(() => sim.allStable() && sizes(sim).join() === '2,2,2');
    const before = new Map([a, b, c].map((m) => [m.name, sim.owned(m!)]));
    const revokedBefore = new Map([a, b, c].map((m) => [m.name, m!.revoked]));

    const d = sim.add('d', { assignors: [assignor] });
    // Track, per step, whether members that keep all their partitions ever stop owning them.
    const dropped = new Set<string>();
    const watch = () => {
      for (const m of [a, b, c]) {
        const now = new Set(sim.owned(m!));
        if (before.get(m!.name)!.some((p) => !now.has(p))) dropped.add(m!.name);
      }
    };
    for (let i = 0; i < 1200 && !(sim.allStable() && sizes(sim).join() === '1,1,2,2'); i++) {
      await sim.run(100);
      watch();
    }
    expect(sizes(sim)).toEqual([1, 1, 2, 2]);
    expect(sim.owned(d).length).toBe(1);
    if (assignor === 'cooperative-sticky') {
      // Only the member that gave a partition up ever stopped consuming one; the other two never revoked anything.
      expect(dropped.size).toBe(1);
      for (const untouched of [a, b, c].filter((m) => !dropped.has(m!.name))) {
        expect(untouched!.revoked).toBe(revokedBefore.get(untouched!.name));
        expect(sim.owned(untouched!).sort()).toEqual(before.get(untouched!.name)!.sort());
      }
    } else {
      // Eager: everyone revoked everything.
      for (const m of [a, b, c]) expect(m!.revoked).toBeGreaterThan(revokedBefore.get(m!.name)!);
    }

    // Kill b (SIGKILL: it stops answering). Its partitions move after the session timeout.
    const bParts = sim.owned(b!);
    b!.up = false;
    await sim.run(SESSION - 1000);
    const others = [a, c, d].map((m) => m!);
    expect(others.flatMap((m) => sim.owned(m)).filter((p) => bParts.includes(p))).toEqual([]);
    await sim.until(() => sim.allStable(others) && sizes(sim, others).join() === '2,2,2');
    expect(others.flatMap((m) => sim.owned(m)).sort()).toEqual(['orders-0', 'orders-1', 'orders-2', 'orders-3', 'orders-4', 'orders-5']);
    expect(sim.violations).toEqual([]);
    await sim.close();
  });
});

describe('group simulation', () => {
  it('twelve members on ten partitions: ten get one each, two stay idle', async () => {
    const sim = await new Sim(3000).start();
    sim.counts.set('orders', 10);
    for (let i = 0; i < 12; i++) sim.add(`m${i}`);
    await sim.until(() => sim.allStable() && sizes(sim).join() === '0,0,1,1,1,1,1,1,1,1,1,1');
    const d = (await sim.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!;
    expect(d.members).toHaveLength(12);
    expect(sim.violations).toEqual([]);
    await sim.close();
  });

  it('a static member that restarts within the session timeout gets its partitions back without a rebalance', async () => {
    const sim = await new Sim().start();
    const a = sim.add('a', { instanceId: 'host-a' });
    const b = sim.add('b', { instanceId: 'host-b' });
    await sim.until(() => sim.allStable() && sizes(sim).join() === '3,3');
    const aParts = sim.owned(a).sort();
    const generation = a.member.generation()!.generationId;
    const bRebalances = b.member.rebalanceCount;
    // A static member's close does not leave the group.
    await a.member.close();
    a.up = false;
    await sim.run(SESSION / 2);
    const a2 = sim.add('a2', { instanceId: 'host-a' });
    await sim.until(() => a2.member.state === 'stable');
    expect(sim.owned(a2).sort()).toEqual(aParts);
    expect(a2.member.generation()!.generationId).toBe(generation);
    await sim.run(5000);
    expect(b.member.rebalanceCount).toBe(bRebalances);
    expect(b.lost + b.revoked).toBe(0);
    expect(sim.violations).toEqual([]);
    await sim.close();
  });

  it('a member cut off from the coordinator reports its partitions lost, then rejoins when the network heals', async () => {
    const sim = await new Sim().start();
    const a = sim.add('a');
    const b = sim.add('b');
    await sim.until(() => sim.allStable() && sizes(sim).join() === '3,3');
    a.up = false;
    await sim.run(SESSION + 500);
    expect(a.member.assignment()).toEqual([]);
    expect(a.lost).toBe(3);
    a.up = true;
    await sim.until(() => sim.allStable() && sizes(sim).join() === '3,3');
    expect(sim.violations).toEqual([]);
    expect(b.lost).toBe(0);
    await sim.close();
  });

  it('a closing member revokes its partitions and leaves, so the others take over at once', async () => {
    const sim = await new Sim().start();
    const a = sim.add('a');
    const b = sim.add('b');
    await sim.until(() => sim.allStable() && sizes(sim).join() === '3,3');
    await a.member.close();
    expect(a.revoked).toBe(3);
    a.up = false;
    await sim.until(() => sim.owned(b).length === 6, 5000);
    expect(sim.violations).toEqual([]);
    await sim.close();
  });

  it('a pattern subscription follows new topics', async () => {
    const sim = await new Sim().start();
    const a = sim.add('a');
    a.member.subscribe(/^ord/);
    await sim.until(() => sim.allStable() && sim.owned(a).length === 6);
    sim.counts.set('ordinals', 2);
    await a.member.checkMetadata();
    await sim.until(() => sim.allStable() && sim.owned(a).length === 8);
    await sim.close();
  });
});
