import { MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { decodeAssignment, decodeSubscription, encodeAssignment, encodeSubscription } from './consumer-protocol.js';
import { GroupMember } from './group-member.js';
import { parseGroupMemberOptions } from './options.js';
import { ManualTime } from '@mq/protocol/components';
import type { GroupRpc, TopicPartition } from './types.js';

const tp = (partition: number, topic = 'orders'): TopicPartition => ({ topic, partition });

/**
 * A scripted coordinator for one member: it answers joins with the member as
 * leader and syncs with whatever the member assigned, and can be told to
 * answer heartbeats with a given error.
 */
class ScriptedRpc implements GroupRpc {
  calls: string[] = [];
  heartbeatError: ErrorCode = 'NONE';
  joinError: ErrorCode | null = null;
  failAll = false;
  generation = 0;
  leaves = 0;
  lastJoin: mq.JoinGroupRequest.$Properties | null = null;

  private check(name: string) {
    this.calls.push(name);
    if (this.failAll) throw new MqError('CONNECTION_ERROR', 'network down');
  }

  async joinGroup(req: mq.JoinGroupRequest.$Properties): Promise<mq.JoinGroupResponse.$Properties> {
    this.check('join');
    this.lastJoin = req;
    if (this.joinError) return { errorCode: errorNumber(this.joinError), errorMessage: `scripted ${this.joinError}` };
    if (!req.memberId) return { errorCode: errorNumber('MEMBER_ID_REQUIRED'), memberId: 'm-1' };
    this.generation++;
    return {
      errorCode: 0,
      generationId: this.generation,
      memberId: req.memberId,
      leader: req.memberId,
      protocolName: req.protocols![0]!.name,
      members: [{ memberId: req.memberId, metadata: req.protocols![0]!.metadata }],
    };
  }

  async syncGroup(req: mq.SyncGroupRequest.$Properties): Promise<mq.SyncGroupResponse.$Properties> {
    this.check('sync');
    return { errorCode: 0, assignment: req.assignments?.[0]?.assignment ?? new Uint8Array() };
  }

  async heartbeat(): Promise<mq.HeartbeatResponse.$Properties> {
    this.check('heartbeat');
    return { errorCode: errorNumber(this.heartbeatError) };
  }

  async leaveGroup(): Promise<mq.LeaveGroupResponse.$Properties> {
    this.check('leave');
    this.leaves++;
    return { errorCode: 0 };
  }
}

async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

function setup(options: Partial<ConstructorParameters<typeof GroupMember>[0]> = {}) {
  const time = new ManualTime();
  const rpc = new ScriptedRpc();
  const events: string[] = [];
  const fatal: MqError[] = [];
  const member = new GroupMember(
    { groupId: 'g', sessionTimeoutMs: 10_000, heartbeatIntervalMs: 1000, maxPollIntervalMs: 0, ...options },
    {
      rpc,
      metadata: { partitionCounts: async (ts) => new Map(ts.map((t) => [t, 3])), listTopics: async () => ['orders', 'other'] },
      listener: {
        onPartitionsAssigned: (ps) => void events.push(`assigned ${ps.map((p) => p.partition).join(',')}`),
        onPartitionsRevoked: (ps) => void events.push(`revoked ${ps.map((p) => p.partition).join(',')}`),
        onPartitionsLost: (ps) => void events.push(`lost ${ps.map((p) => p.partition).join(',')}`),
      },
      clock: time.clock,
      timers: time,
      onFatal: (e) => fatal.push(e),
      random: () => 0.5,
    },
  );
  const advance = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      time.advance(100);
      await settle();
    }
  };
  return { time, rpc, events, fatal, member, advance };
}

describe('group member', () => {
  it('joins with the member-id round trip, assigns as leader and heartbeats', async () => {
    const { rpc, events, member, advance } = setup();
    member.subscribe(['orders']);
    await member.waitForStable();
    expect(rpc.calls.slice(0, 3)).toEqual(['join', 'join', 'sync']);
    expect(member.assignment()).toEqual([tp(0), tp(1), tp(2)]);
    expect(member.generation()).toMatchObject({ generationId: 1, memberId: 'm-1', protocolName: 'cooperative-sticky' });
    expect(events).toEqual(['assigned 0,1,2']);
    await advance(3000);
    expect(rpc.calls.filter((c) => c === 'heartbeat').length).toBe(3);
    await member.close();
    expect(events).toEqual(['assigned 0,1,2', 'revoked 0,1,2']);
    expect(rpc.leaves).toBe(1);
  });

  it('cooperative: rejoins keeping its partitions and reports them as owned', async () => {
    const { rpc, events, member, advance } = setup();
    member.subscribe(['orders']);
    await member.waitForStable();
    rpc.heartbeatError = 'REBALANCE_IN_PROGRESS';
    await advance(1000);
    rpc.heartbeatError = 'NONE';
    await member.waitForStable();
    expect(decodeSubscription(rpc.lastJoin!.protocols![0]!.metadata).ownedPartitions).toEqual([tp(0), tp(1), tp(2)]);
    expect(member.generation()!.generationId).toBe(2);
    // Nothing moved: nothing revoked, nothing newly assigned.
    expect(events).toEqual(['assigned 0,1,2', 'assigned ']);
    await member.close();
  });

  it('eager: revokes everything before rejoining', async () => {
    const { rpc, events, member, advance } = setup({ partitionAssigners: ['range'] });
    member.subscribe(['orders']);
    await member.waitForStable();
    rpc.heartbeatError = 'REBALANCE_IN_PROGRESS';
    await advance(1000);
    rpc.heartbeatError = 'NONE';
    await member.waitForStable();
    expect(events).toEqual(['assigned 0,1,2', 'revoked 0,1,2', 'assigned 0,1,2']);
    await member.close();
  });

  it('reports partitions lost on UNKNOWN_MEMBER_ID and rejoins as a new member', async () => {
    const { rpc, events, member, advance } = setup();
    member.subscribe(['orders']);
    await member.waitForStable();
    rpc.heartbeatError = 'UNKNOWN_MEMBER_ID';
    await advance(1000);
    rpc.heartbeatError = 'NONE';
    await member.waitForStable();
    expect(events).toEqual(['assigned 0,1,2', 'lost 0,1,2', 'assigned 0,1,2']);
    expect(decodeSubscription(rpc.lastJoin!.protocols![0]!.metadata).ownedPartitions).toEqual([]);
    await member.close();
  });

  it('gives its partitions up as lost when heartbeats fail for a whole session timeout', async () => {
    const { rpc, events, member, advance } = setup();
    member.subscribe(['orders']);
    await member.waitForStable();
    rpc.failAll = true;
    await advance(9000);
    expect(member.assignment()).toHaveLength(3);
    await advance(2000);
    expect(member.assignment()).toEqual([]);
    expect(events).toEqual(['assigned 0,1,2', 'lost 0,1,2']);
    rpc.failAll = false;
    await advance(2000);
    await member.waitForStable();
    await member.close();
  });

  it('stops with a fatal error when fenced by a newer instance', async () => {
    const { rpc, fatal, member, events, advance } = setup({ groupInstanceId: 'host-a' });
    member.subscribe(['orders']);
    await member.waitForStable();
    rpc.heartbeatError = 'FENCED_INSTANCE_ID';
    await advance(1000);
    expect(member.state).toBe('failed');
    expect(fatal.map((e) => e.code)).toEqual(['FENCED_INSTANCE_ID']);
    expect(events).toEqual(['assigned 0,1,2', 'lost 0,1,2']);
    await expect(member.waitForStable()).rejects.toMatchObject({ code: 'FENCED_INSTANCE_ID' });
    await member.close();
    expect(rpc.leaves).toBe(0);
  });

  it('stops on a join error retrying cannot fix', async () => {
    const { rpc, fatal, member } = setup();
    rpc.joinError = 'INCONSISTENT_GROUP_PROTOCOL';
    member.subscribe(['orders']);
    await expect(member.waitForStable()).rejects.toMatchObject({ code: 'INCONSISTENT_GROUP_PROTOCOL' });
    expect(fatal).toHaveLength(1);
    await member.close();
  });

  it('retries retriable join errors with backoff', async () => {
    const { rpc, member, advance } = setup();
    rpc.joinError = 'COORDINATOR_LOAD_IN_PROGRESS';
    member.subscribe(['orders']);
    await advance(1000);
    const attempts = rpc.calls.filter((c) => c === 'join').length;
    expect(attempts).toBeGreaterThan(2);
    expect(attempts).toBeLessThan(15);
    rpc.joinError = null;
    await advance(1000);
    await member.waitForStable();
    await member.close();
  });

  it('leaves the group when the application stops polling for maxPollIntervalMs, and rejoins on the next poll', async () => {
    const { rpc, member, events, advance } = setup({ maxPollIntervalMs: 5000 });
    member.subscribe(['orders']);
    await member.waitForStable();
    await advance(6000);
    expect(rpc.leaves).toBe(1);
    expect(member.assignment()).toEqual([]);
    expect(events).toEqual(['assigned 0,1,2', 'lost 0,1,2']);
    member.notePoll();
    await member.waitForStable();
    expect(member.assignment()).toHaveLength(3);
    await member.close();
  });

  it('a static member does not leave on close', async () => {
    const { rpc, member } = setup({ groupInstanceId: 'host-a' });
    member.subscribe(['orders']);
    await member.waitForStable();
    await member.close();
    expect(rpc.leaves).toBe(0);
  });

  it('a subscription changed while a join is in flight is not lost', async () => {
    const { rpc, member, advance } = setup();
    member.subscribe(['orders']);
    member.subscribe(['other']);
    await member.waitForStable();
    await advance(500);
    await member.waitForStable();
    expect(decodeSubscription(rpc.lastJoin!.protocols![0]!.metadata).topics).toEqual(['other']);
    expect(member.assignment().every((tp) => tp.topic === 'other')).toBe(true);
    await member.close();
  });

  it('a pattern subscription joins with the matching topics', async () => {
    const { rpc, member } = setup();
    member.subscribe(/^ord/);
    await member.waitForStable();
    expect(decodeSubscription(rpc.lastJoin!.protocols![0]!.metadata).topics).toEqual(['orders']);
    await member.close();
  });

  it('validates its options and subscriptions', () => {
    expect(() => parseGroupMemberOptions({ groupId: '' })).toThrow(/groupId/);
    expect(() => parseGroupMemberOptions({ groupId: 'g', sessionTimeoutMs: 3000, heartbeatIntervalMs: 3000 })).toThrow(/below sessionTimeoutMs/);
    expect(() => parseGroupMemberOptions({ groupId: 'g', partitionAssigners: [] })).not.toThrow();
    const { member } = setup();
    expect(() => member.subscribe([])).toThrow(/at least one/);
    expect(() => new GroupMember({ groupId: 'g', partitionAssigners: ['fair'] }, { rpc: new ScriptedRpc(), metadata: { partitionCounts: async () => new Map(), listTopics: async () => [] } })).toThrow(/unknown partition assignor/);
  });

  it('encodes the consumer protocol both ways and refuses garbage', () => {
    const s = { topics: ['b', 'a'], ownedPartitions: [tp(2), tp(0, 'a')], generationId: 4 };
    expect(decodeSubscription(encodeSubscription(s))).toMatchObject({ topics: ['a', 'b'], ownedPartitions: [tp(0, 'a'), tp(2)], generationId: 4 });
    expect(decodeAssignment(encodeAssignment([tp(1), tp(0)]))).toEqual([tp(0), tp(1)]);
    expect(() => decodeAssignment(Buffer.from([0xff, 0xff, 0xff]))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
  });
});
