import { MqError, errorCodeFromNumber, isRetriable } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import { createGroupCoordinator, type GroupCoordinator } from './group-coordinator.js';
import { MemoryOffsetsLog } from './offsets-log.js';
import { groupErrorOf } from './replicated-offsets-log.js';
import { partitionForGroup } from './offsets-schema.js';
import { ManualTime } from '@mq/protocol/components';
import type { GroupCoordinatorOptions } from './options.js';
import type { JoinGroupResponse, TopicView } from './types.js';

const SESSION = 10_000;
const REBALANCE = 30_000;
const ctx = { clientId: 'c', clientHost: '/127.0.0.1' };

function code(r: { errorCode?: number | null }): string {
  return errorCodeFromNumber(r.errorCode ?? 0);
}

function subscription(topics: string[]): Uint8Array {
  return mq.ConsumerSubscription.encode({ topics }).finish();
}

function assignment(parts: Record<string, number[]>): Uint8Array {
  return mq.ConsumerAssignment.encode({
    assignedPartitions: Object.entries(parts).map(([topic, partitions]) => ({ topic, partitions })),
  }).finish();
}

function decodeAssignment(buf: Uint8Array | null | undefined): Record<string, number[]> {
  const out: Record<string, number[]> = {};
  for (const tp of mq.ConsumerAssignment.decode(buf ?? new Uint8Array()).assignedPartitions) out[tp.topic!] = tp.partitions!;
  return out;
}

class World {
  time = new ManualTime();
  log = new MemoryOffsetsLog(4);
  ends = new Map<string, number[]>([
    ['orders', [100, 100, 100]],
    ['audit', [5]],
  ]);
  /** Topic ids of the topics in `ends` (none: the view knows no ids). */
  topicIds = new Map<string, string>();
  topics: TopicView = {
    partitionCount: (t) => this.ends.get(t)?.length,
    logEndOffset: (t, p) => this.ends.get(t)?.[p],
    topicId: (t) => (this.ends.has(t) ? this.topicIds.get(t) : undefined),
  };
  ids = 0;
  coordinator!: GroupCoordinator;
  /** Every log line, as level and message. */
  readonly lines: Array<{ level: string; msg: string }> = [];
  private readonly logger = Object.fromEntries(
    (['debug', 'info', 'warn', 'error'] as const).map((level) => [level, (_fields: object, msg: string) => void this.lines.push({ level, msg })]),
  ) as unknown as Record<'debug' | 'info' | 'warn' | 'error', (fields: object, msg: string) => void>;

  async start(options: GroupCoordinatorOptions = {}) {
    this.coordinator?.close();
    this.coordinator = createGroupCoordinator(
      { offsetsTopicPartitions: 4, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0, ...options },
      {
        offsetsLog: this.log,
        topics: this.topics,
        clock: this.time.clock,
        timers: this.time,
        newMemberId: (clientId) => `${clientId}-${++this.ids}`,
        logger: this.logger,
      },
    );
    await this.coordinator.startup();
    return this.coordinator;
  }

  joinRequest(groupId: string, memberId = '', extra: Partial<mq.JoinGroupRequest.$Properties> = {}) {
    return {
      groupId,
      memberId,
      sessionTimeoutMs: SESSION,
      rebalanceTimeoutMs: REBALANCE,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(['orders']) }],
      ...extra,
    };
  }

  /** The MEMBER_ID_REQUIRED round trip, then the real join (returned unresolved, wrapped so `await` does not wait for it). */
  async join(groupId: string, extra: Partial<mq.JoinGroupRequest.$Properties> = {}, c = ctx): Promise<{ done: Promise<JoinGroupResponse> }> {
    if (extra.groupInstanceId) return { done: this.coordinator.joinGroup(this.joinRequest(groupId, '', extra), c) };
    const first = await this.coordinator.joinGroup(this.joinRequest(groupId, '', extra), c);
    expect(code(first)).toBe('MEMBER_ID_REQUIRED');
    return { done: this.coordinator.joinGroup(this.joinRequest(groupId, first.memberId!, extra), c) };
  }
}

async function settle() {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

/** Runs a one-member group to Stable; returns its member id and generation. */
async function stableSingle(w: World, groupId: string, parts: Record<string, number[]> = { orders: [0, 1, 2] }) {
  const { done: joined } = await w.join(groupId);
  const r = await joined;
  expect(code(r)).toBe('NONE');
  const sync = await w.coordinator.syncGroup(
    { groupId, generationId: r.generationId, memberId: r.memberId, assignments: [{ memberId: r.memberId, assignment: assignment(parts) }] },
    ctx,
  );
  expect(code(sync)).toBe('NONE');
  return { memberId: r.memberId!, generationId: r.generationId! };
}

describe('group coordinator: membership', () => {
  let w: World;
  beforeEach(async () => {
    w = new World();
    await w.start();
  });
  afterEach(() => w.coordinator.close());

  it('hands out a member id first (MEMBER_ID_REQUIRED), then completes a one-member rebalance', async () => {
    const first = await w.coordinator.joinGroup(w.joinRequest('g'), ctx);
    expect(code(first)).toBe('MEMBER_ID_REQUIRED');
    expect(first.memberId).toBe('c-1');
    const r = await w.coordinator.joinGroup(w.joinRequest('g', 'c-1'), ctx);
    expect(code(r)).toBe('NONE');
    expect(r).toMatchObject({ generationId: 1, leader: 'c-1', memberId: 'c-1', protocolName: 'range', protocolType: 'consumer' });
    expect(r.members).toHaveLength(1);
    const d = await w.coordinator.describeGroups({ groupIds: ['g'] });
    expect(d.groups![0]!.state).toBe('CompletingRebalance');
    const sync = await w.coordinator.syncGroup(
      { groupId: 'g', generationId: 1, memberId: 'c-1', assignments: [{ memberId: 'c-1', assignment: assignment({ orders: [0, 1, 2] }) }] },
      ctx,
    );
    expect(code(sync)).toBe('NONE');
    expect(decodeAssignment(sync.assignment)).toEqual({ orders: [0, 1, 2] });
    expect((await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!.state).toBe('Stable');
  });

  it('a pending member id that is never used expires after the session timeout', async () => {
    const first = await w.coordinator.joinGroup(w.joinRequest('g'), ctx);
    w.time.advance(SESSION + 1);
    const r = await w.coordinator.joinGroup(w.joinRequest('g', first.memberId!), ctx);
    expect(code(r)).toBe('UNKNOWN_MEMBER_ID');
  });

  it('a second member triggers a rebalance that the first learns of by heartbeat; the follower waits for the leader', async () => {
    const a = await stableSingle(w, 'g');
    const { done: joinB } = await w.join('g');
    const hb = await w.coordinator.heartbeat({ groupId: 'g', generationId: a.generationId, memberId: a.memberId });
    expect(code(hb)).toBe('REBALANCE_IN_PROGRESS');
    const rejoinA = await w.coordinator.joinGroup(w.joinRequest('g', a.memberId), ctx);
    const [ra, rb] = [await rejoinA, await joinB];
    expect(ra.generationId).toBe(2);
    expect(rb.generationId).toBe(2);
    expect(ra.leader).toBe(a.memberId);
    expect(ra.members).toHaveLength(2);
    expect(rb.members).toHaveLength(0);
    const followerSync = w.coordinator.syncGroup({ groupId: 'g', generationId: 2, memberId: rb.memberId }, ctx);
    let followerDone = false;
    void followerSync.then(() => (followerDone = true));
    await settle();
    expect(followerDone).toBe(false);
    const leaderSync = await w.coordinator.syncGroup(
      {
        groupId: 'g',
        generationId: 2,
        memberId: a.memberId,
        assignments: [
          { memberId: a.memberId, assignment: assignment({ orders: [0, 1] }) },
          { memberId: rb.memberId, assignment: assignment({ orders: [2] }) },
        ],
      },
      ctx,
    );
    expect(decodeAssignment(leaderSync.assignment)).toEqual({ orders: [0, 1] });
    expect(decodeAssignment((await followerSync).assignment)).toEqual({ orders: [2] });
  });

  it('refuses bad assignments with INVALID_ASSIGNMENT and keeps the group able to complete', async () => {
    const { done: joinA } = await w.join('g', { protocols: [{ name: 'range', metadata: subscription(['orders']) }] });
    const ra = await joinA;
    const sync = (memberId: string, parts: Record<string, number[]>) =>
      w.coordinator.syncGroup({ groupId: 'g', generationId: ra.generationId, memberId, assignments: [{ memberId: ra.memberId, assignment: assignment(parts) }] }, ctx);
    const twice = await w.coordinator.syncGroup(
      {
        groupId: 'g',
        generationId: 1,
        memberId: ra.memberId,
        assignments: [{ memberId: ra.memberId, assignment: mq.ConsumerAssignment.encode({ assignedPartitions: [{ topic: 'orders', partitions: [0, 0] }] }).finish() }],
      },
      ctx,
    );
    expect(code(twice)).toBe('INVALID_ASSIGNMENT');
    expect(twice.errorMessage).toMatch(/orders-0 is assigned twice/);
    const unsubscribed = await sync(ra.memberId!, { audit: [0] });
    expect(code(unsubscribed)).toBe('INVALID_ASSIGNMENT');
    expect(unsubscribed.errorMessage).toMatch(/did not subscribe/);
    const missing = await sync(ra.memberId!, { orders: [7] });
    expect(code(missing)).toBe('INVALID_ASSIGNMENT');
    expect(missing.errorMessage).toMatch(/orders-7 does not exist/);
    const stranger = await w.coordinator.syncGroup(
      { groupId: 'g', generationId: 1, memberId: ra.memberId, assignments: [{ memberId: 'nobody', assignment: assignment({}) }] },
      ctx,
    );
    expect(code(stranger)).toBe('INVALID_ASSIGNMENT');
    expect((await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!.state).toBe('CompletingRebalance');
    const ok = await sync(ra.memberId!, { orders: [0, 1, 2] });
    expect(code(ok)).toBe('NONE');
  });

  it('refuses assignments from a member that is not the leader', async () => {
    const a = await stableSingle(w, 'g');
    const { done: joinB } = await w.join('g');
    const rejoinA = await w.coordinator.joinGroup(w.joinRequest('g', a.memberId), ctx);
    const [, rb] = [await rejoinA, await joinB];
    const r = await w.coordinator.syncGroup(
      { groupId: 'g', generationId: rb.generationId, memberId: rb.memberId, assignments: [{ memberId: rb.memberId, assignment: assignment({ orders: [0] }) }] },
      ctx,
    );
    expect(code(r)).toBe('INVALID_ASSIGNMENT');
    expect(r.errorMessage).toMatch(/not the group leader/);
  });

  it('fences stale generations and unknown members', async () => {
    const a = await stableSingle(w, 'g');
    expect(code(await w.coordinator.heartbeat({ groupId: 'g', generationId: a.generationId - 1, memberId: a.memberId }))).toBe('ILLEGAL_GENERATION');
    expect(code(await w.coordinator.heartbeat({ groupId: 'g', generationId: a.generationId, memberId: 'ghost' }))).toBe('UNKNOWN_MEMBER_ID');
    expect(code(await w.coordinator.syncGroup({ groupId: 'g', generationId: 99, memberId: a.memberId }, ctx))).toBe('ILLEGAL_GENERATION');
    const commit = await w.coordinator.offsetCommit({
      groupId: 'g',
      generationId: a.generationId + 1,
      memberId: a.memberId,
      topics: [{ name: 'orders', partitions: [{ partition: 0, committedOffset: 5 }] }],
    });
    expect(code(commit.topics![0]!.partitions![0]!)).toBe('ILLEGAL_GENERATION');
    expect(code(await w.coordinator.heartbeat({ groupId: 'nope', generationId: 1, memberId: 'x' }))).toBe('UNKNOWN_MEMBER_ID');
    expect(code(await w.coordinator.joinGroup(w.joinRequest('nope', 'x'), ctx))).toBe('UNKNOWN_MEMBER_ID');
  });

  it('validates session timeouts, group ids and protocols', async () => {
    expect(code(await w.coordinator.joinGroup(w.joinRequest('g', '', { sessionTimeoutMs: 10 }), ctx))).toBe('INVALID_SESSION_TIMEOUT');
    expect(code(await w.coordinator.joinGroup(w.joinRequest(''), ctx))).toBe('INVALID_GROUP_ID');
    expect(code(await w.coordinator.joinGroup(w.joinRequest('g', '', { protocols: [] }), ctx))).toBe('INCONSISTENT_GROUP_PROTOCOL');
    await stableSingle(w, 'g');
    const other = await w.coordinator.joinGroup(w.joinRequest('g', '', { protocols: [{ name: 'roundrobin', metadata: subscription(['orders']) }] }), ctx);
    expect(code(other)).toBe('INCONSISTENT_GROUP_PROTOCOL');
  });

  it('removes a member whose session expires and rebalances the rest', async () => {
    const a = await stableSingle(w, 'g');
    const { done: joinB } = await w.join('g');
    const rejoinA = await w.coordinator.joinGroup(w.joinRequest('g', a.memberId), ctx);
    const [ra, rb] = [await rejoinA, await joinB];
    await w.coordinator.syncGroup(
      {
        groupId: 'g',
        generationId: ra.generationId,
        memberId: ra.memberId,
        assignments: [
          { memberId: ra.memberId, assignment: assignment({ orders: [0, 1] }) },
          { memberId: rb.memberId, assignment: assignment({ orders: [2] }) },
        ],
      },
      ctx,
    );
    // b keeps heartbeating; a goes silent.
    for (let t = 0; t < SESSION + 3000; t += 3000) {
      w.time.advance(3000);
      await w.coordinator.heartbeat({ groupId: 'g', generationId: rb.generationId, memberId: rb.memberId });
    }
    const hb = await w.coordinator.heartbeat({ groupId: 'g', generationId: rb.generationId, memberId: rb.memberId });
    expect(code(hb)).toBe('REBALANCE_IN_PROGRESS');
    const r = await w.coordinator.joinGroup(w.joinRequest('g', rb.memberId!), ctx);
    expect(r).toMatchObject({ errorCode: 0, generationId: 3, leader: rb.memberId });
    expect(r.members!.map((m) => m.memberId)).toEqual([rb.memberId]);
  });

  it('completes a rebalance after the rebalance timeout without the members that did not rejoin', async () => {
    const a = await stableSingle(w, 'g');
    const { done: joinB } = await w.join('g');
    let done = false;
    void joinB.then(() => (done = true));
    // a never rejoins but keeps heartbeating (it is told to rejoin each time).
    for (let t = 3000; t < REBALANCE; t += 3000) {
      w.time.advance(3000);
      await w.coordinator.heartbeat({ groupId: 'g', generationId: a.generationId, memberId: a.memberId });
    }
    await settle();
    expect(done).toBe(false);
    w.time.advance(4000);
    const rb = await joinB;
    expect(rb).toMatchObject({ errorCode: 0, generationId: 2, leader: rb.memberId });
    expect(code(await w.coordinator.heartbeat({ groupId: 'g', generationId: 2, memberId: a.memberId }))).toBe('UNKNOWN_MEMBER_ID');
  });

  it('a member that leaves triggers a rebalance; the last one leaving empties the group', async () => {
    const a = await stableSingle(w, 'g');
    const r = await w.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: a.memberId }] });
    expect(code(r)).toBe('NONE');
    const d = (await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!;
    expect(d.state).toBe('Empty');
    expect(d.members).toHaveLength(0);
    expect(code(await w.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: a.memberId }] }))).toBe('UNKNOWN_MEMBER_ID');
  });

  it('waits the initial rebalance delay of an empty group so members joining together form one generation', async () => {
    await w.start({ groupInitialRebalanceDelayMs: 3000 });
    const { done: joinA } = await w.join('g');
    w.time.advance(1000);
    const { done: joinB } = await w.join('g');
    w.time.advance(2999);
    w.time.advance(3000);
    const [ra, rb] = [await joinA, await joinB];
    expect(ra.generationId).toBe(1);
    expect(rb.generationId).toBe(1);
    expect([ra, rb].find((r) => r.memberId === r.leader)!.members).toHaveLength(2);
  });

  it('static membership: a restart within the session timeout keeps the assignment with no rebalance; the old id is fenced', async () => {
    const { done: joinA } = await w.join('g', { groupInstanceId: 'host-a' });
    const ra = await joinA;
    expect(code(ra)).toBe('NONE');
    await w.coordinator.syncGroup(
      { groupId: 'g', generationId: ra.generationId, memberId: ra.memberId, assignments: [{ memberId: ra.memberId, assignment: assignment({ orders: [0, 1, 2] }) }] },
      ctx,
    );
    w.time.advance(SESSION - 2000);
    const again = await w.coordinator.joinGroup(w.joinRequest('g', '', { groupInstanceId: 'host-a' }), ctx);
    expect(code(again)).toBe('NONE');
    expect(again.memberId).not.toBe(ra.memberId);
    expect(again.generationId).toBe(ra.generationId);
    expect(again.skipAssignment).toBe(true);
    const sync = await w.coordinator.syncGroup({ groupId: 'g', generationId: again.generationId, memberId: again.memberId, groupInstanceId: 'host-a' }, ctx);
    expect(decodeAssignment(sync.assignment)).toEqual({ orders: [0, 1, 2] });
    expect((await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!.state).toBe('Stable');
    const old = await w.coordinator.heartbeat({ groupId: 'g', generationId: ra.generationId, memberId: ra.memberId, groupInstanceId: 'host-a' });
    expect(code(old)).toBe('FENCED_INSTANCE_ID');
  });

  it('regression (issue 12): an assignment not stored because the offsets partition moved answers NOT_COORDINATOR, logged at info, not as an error', async () => {
    const syncFailing = async (groupId: string, failure: Error) => {
      const r = await (await w.join(groupId)).done;
      w.log.failNext(failure);
      const sync = await w.coordinator.syncGroup(
        { groupId, generationId: r.generationId, memberId: r.memberId, assignments: [{ memberId: r.memberId, assignment: assignment({ orders: [0] }) }] },
        ctx,
      );
      return code(sync);
    };
    expect(await syncFailing('moved', groupErrorOf(new MqError('NOT_LEADER', 'this broker no longer leads __consumer_offsets-1'), 1))).toBe('NOT_COORDINATOR');
    expect(w.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(w.lines).toContainEqual({ level: 'info', msg: 'group assignment not stored: the coordinator moved; members rejoin' });
    // Anything else (a failing disk) is still an error.
    expect(await syncFailing('disk', new MqError('STORAGE_ERROR', 'injected append failure'))).toBe('STORAGE_ERROR');
    expect(w.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual(['could not store the group assignment']);
  });

  it('answers NOT_COORDINATOR for partitions it does not hold', async () => {
    w.coordinator.unloadPartition(w.coordinator.partitionFor('g'));
    expect(code(await w.coordinator.joinGroup(w.joinRequest('g'), ctx))).toBe('NOT_COORDINATOR');
    expect(w.coordinator.isCoordinatorFor('g')).toBe(false);
  });

  it('bounds the group size', async () => {
    await w.start({ groupMaxSize: 2 });
    await w.coordinator.joinGroup(w.joinRequest('g'), ctx);
    await w.coordinator.joinGroup(w.joinRequest('g'), ctx);
    expect(code(await w.coordinator.joinGroup(w.joinRequest('g'), ctx))).toBe('GROUP_MAX_SIZE_REACHED');
  });
});

describe('group coordinator: state the offsets schema cannot hold', () => {
  it('a member id past 32,767 bytes: its sync gets a typed error (the store threw out of the coordinator) and other groups are served', async () => {
    const time = new ManualTime();
    const coordinator = createGroupCoordinator(
      { offsetsTopicPartitions: 1, groupMinSessionTimeoutMs: 1000, groupInitialRebalanceDelayMs: 0 },
      {
        offsetsLog: new MemoryOffsetsLog(1),
        topics: { partitionCount: () => 1, logEndOffset: () => 0 },
        clock: time.clock,
        timers: time,
        // What a 40,000-byte client id used to make.
        newMemberId: (clientId) => (clientId === 'huge' ? 'm'.repeat(40_000) : `${clientId}-1`),
      },
    );
    await coordinator.startup();
    const join = { sessionTimeoutMs: 1000, rebalanceTimeoutMs: 1000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(['orders']) }] };
    // A static member joins at once (no member id round trip).
    const joined = await coordinator.joinGroup({ ...join, groupId: 'bad', groupInstanceId: 'host-a' }, { clientId: 'huge', clientHost: '' });
    expect(code(joined)).toBe('NONE');
    const sync = await coordinator.syncGroup(
      { groupId: 'bad', generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: 'host-a', assignments: [] },
      { clientId: 'huge', clientHost: '' },
    );
    expect(code(sync)).toBe('INVALID_REQUEST');
    expect(sync.errorMessage).toMatch(/too long for the offsets schema/);
    // Its session expires in a timer; nothing throws out of it, and every other group is still served.
    expect(() => time.advance(1500)).not.toThrow();
    const other = await coordinator.joinGroup({ ...join, groupId: 'good', groupInstanceId: 'host-b' }, ctx);
    expect(code(other)).toBe('NONE');
    coordinator.close();
  });
});

describe('group coordinator: answer size', () => {
  it('DescribeGroups answers MESSAGE_TOO_LARGE for groups past describeGroupsMaxBytes instead of building them (a 1.1 GB answer blocked the broker)', async () => {
    const w = new World();
    await w.start({ describeGroupsMaxBytes: 4096 });
    const big = Buffer.from(mq.ConsumerSubscription.encode({ topics: ['orders'], userData: Buffer.alloc(3000) }).finish());
    for (const g of ['a', 'b']) {
      const r = await w.coordinator.joinGroup(w.joinRequest(g, '', { groupInstanceId: `host-${g}`, protocols: [{ name: 'range', metadata: big }] }), ctx);
      expect(code(r)).toBe('NONE');
    }
    const d = await w.coordinator.describeGroups({ groupIds: ['a', 'b', 'a'] });
    expect(d.groups!.map((g) => code(g))).toEqual(['NONE', 'MESSAGE_TOO_LARGE']);
    expect(d.groups![1]!.errorMessage).toMatch(/4096-byte answer limit/);
    w.coordinator.close();
  });
});

describe('group coordinator: offsets', () => {
  let w: World;
  beforeEach(async () => {
    w = new World();
    await w.start();
  });
  afterEach(() => w.coordinator.close());

  const commit = (groupId: string, m: { memberId: string; generationId: number } | null, partitions: mq.OffsetCommitPartition.$Properties[], topic = 'orders') =>
    w.coordinator.offsetCommit({
      groupId,
      generationId: m ? m.generationId : -1,
      memberId: m ? m.memberId : '',
      topics: [{ name: topic, partitions }],
    });
  const fetch = async (groupId: string, partition = 0) =>
    (await w.coordinator.offsetFetch({ groupId, topics: [{ name: 'orders', partitions: [partition] }] })).topics![0]!.partitions![0]!;

  it('stores a commit durably with its metadata and leader epoch', async () => {
    const m = await stableSingle(w, 'g');
    const before = w.log.appends;
    const r = await commit('g', m, [{ partition: 1, committedOffset: 42, committedLeaderEpoch: 3, metadata: 'worker-7' }]);
    expect(code(r.topics![0]!.partitions![0]!)).toBe('NONE');
    expect(w.log.appends).toBe(before + 1);
    expect(await fetch('g', 1)).toMatchObject({ committedOffset: 42, committedLeaderEpoch: 3, metadata: 'worker-7' });
    expect(await fetch('g', 2)).toMatchObject({ committedOffset: -1 });
    expect(await fetch('unknown-group')).toMatchObject({ committedOffset: -1 });
  });

  it('refuses commits for missing partitions, beyond the log end, or with oversized metadata, and keeps the valid ones', async () => {
    const m = await stableSingle(w, 'g');
    const r = await commit('g', m, [
      { partition: 0, committedOffset: 100 },
      { partition: 1, committedOffset: 101 },
      { partition: 9, committedOffset: 1 },
      { partition: 2, committedOffset: -5 },
    ]);
    const big = await commit('g', m, [{ partition: 0, committedOffset: 1, metadata: 'x'.repeat(5000) }], 'audit');
    expect(code(big.topics![0]!.partitions![0]!)).toBe('OFFSET_METADATA_TOO_LARGE');
    const codes = r.topics![0]!.partitions!.map((p) => code(p));
    expect(codes).toEqual(['NONE', 'INVALID_COMMIT_OFFSET', 'UNKNOWN_TOPIC_OR_PARTITION', 'INVALID_COMMIT_OFFSET']);
    expect(r.topics![0]!.partitions![1]!.errorMessage).toMatch(/beyond its log end 100/);
    const missingTopic = await commit('g', m, [{ partition: 0, committedOffset: 1 }], 'nope');
    expect(code(missingTopic.topics![0]!.partitions![0]!)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(await fetch('g', 0)).toMatchObject({ committedOffset: 100 });
    expect(await fetch('g', 1)).toMatchObject({ committedOffset: -1 });
  });

  it('answers a commit only once the log append succeeded; a failed append changes nothing', async () => {
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 10 }]);
    w.log.failNext();
    const r = await commit('g', m, [{ partition: 0, committedOffset: 20 }]);
    expect(code(r.topics![0]!.partitions![0]!)).toBe('STORAGE_ERROR');
    expect(await fetch('g')).toMatchObject({ committedOffset: 10 });
  });

  it('coalesces concurrent commits into shared appends; each still answers only once durable', async () => {
    const m = await stableSingle(w, 'g');
    const before = w.log.appends;
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => commit('g', m, [{ partition: i % 3, committedOffset: i }])));
    expect(results.every((r) => code(r.topics![0]!.partitions![0]!) === 'NONE')).toBe(true);
    expect(w.log.appends - before).toBeLessThan(20);
    expect(w.log.appends - before).toBeGreaterThan(0);
    // The last commit of each partition wins, as in the log.
    expect(await fetch('g', 0)).toMatchObject({ committedOffset: 18 });
    expect(await fetch('g', 1)).toMatchObject({ committedOffset: 19 });
    expect(await fetch('g', 2)).toMatchObject({ committedOffset: 17 });
    await w.start();
    expect(await fetch('g', 1)).toMatchObject({ committedOffset: 19 });
  });

  it('a failed shared append fails every commit in it and changes nothing', async () => {
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 1 }]);
    w.log.failNext();
    const results = await Promise.all([2, 3, 4].map((o) => commit('g', m, [{ partition: 0, committedOffset: o }])));
    const codes = results.map((r) => code(r.topics![0]!.partitions![0]!));
    // The first goes alone and fails; the two queued behind it share the next append and succeed.
    expect(codes).toEqual(['STORAGE_ERROR', 'NONE', 'NONE']);
    expect(await fetch('g', 0)).toMatchObject({ committedOffset: 4 });
  });

  it('allows commits from outside the group only while it is empty', async () => {
    const outside = await commit('admin-set', null, [{ partition: 0, committedOffset: 7 }]);
    expect(code(outside.topics![0]!.partitions![0]!)).toBe('NONE');
    expect(await fetch('admin-set')).toMatchObject({ committedOffset: 7 });
    await stableSingle(w, 'busy');
    const refused = await commit('busy', null, [{ partition: 0, committedOffset: 7 }]);
    expect(code(refused.topics![0]!.partitions![0]!)).toBe('NON_EMPTY_GROUP');
  });

  it('rebuilds offsets and group membership from the offsets log after a restart', async () => {
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 11, metadata: 'a' }, { partition: 2, committedOffset: 33 }]);
    await commit('g', m, [{ partition: 0, committedOffset: 12 }]);
    await commit('solo', null, [{ partition: 1, committedOffset: 5 }]);
    await w.start();
    expect(await fetch('g', 0)).toMatchObject({ committedOffset: 12, metadata: '' });
    expect((await w.coordinator.offsetFetch({ groupId: 'g' })).topics).toEqual([
      {
        name: 'orders',
        partitions: [
          { partition: 0, committedOffset: 12, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
          { partition: 2, committedOffset: 33, committedLeaderEpoch: -1, metadata: '', errorCode: 0 },
        ],
      },
    ]);
    expect(await fetch('solo', 1)).toMatchObject({ committedOffset: 5 });
    const d = (await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!;
    expect(d).toMatchObject({ state: 'Stable', generationId: m.generationId, leader: m.memberId });
    expect(decodeAssignment(d.members![0]!.assignment)).toEqual({ orders: [0, 1, 2] });
    // The member carries on against the new coordinator...
    expect(code(await w.coordinator.heartbeat({ groupId: 'g', generationId: m.generationId, memberId: m.memberId }))).toBe('NONE');
    // ...and a member that does not come back is expired after its session timeout.
    w.time.advance(SESSION + 1);
    expect((await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!.state).toBe('Empty');
  });

  it('offsets of topics deleted while no coordinator watched (a failover) are removed when the partition loads, durably; a re-created topic does not inherit them', async () => {
    w.ends.set('kept', [10]);
    w.topicIds = new Map([
      ['orders', 'orders-1'],
      ['audit', 'audit-1'],
      ['kept', 'kept-1'],
    ]);
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 11 }]);
    await commit('g', m, [{ partition: 0, committedOffset: 4 }], 'kept');
    await commit('solo', null, [{ partition: 0, committedOffset: 3 }], 'audit');
    // While no coordinator runs: 'audit' is deleted, 'orders' deleted and created again (another topic id).
    w.coordinator.close();
    w.ends.delete('audit');
    w.topicIds.set('orders', 'orders-2');
    await w.start();
    const offsetsOf = async (groupId: string) => ((await w.coordinator.offsetFetch({ groupId })).topics ?? []).map((t) => `${t.name}:${t.partitions!.map((p) => p.committedOffset).join(',')}`);
    for (let i = 0; i < 50 && (await offsetsOf('g')).length > 1; i++) await new Promise((r) => setImmediate(r));
    expect(await offsetsOf('g')).toEqual(['kept:4']);
    expect(await offsetsOf('solo')).toEqual([]);
    expect(w.lines.filter((l) => l.msg === 'offsets of topics deleted while unwatched removed')).toHaveLength(2);
    // Tombstones were written: a later coordinator finds none, even with the old incarnations back in its view.
    w.ends.set('audit', [5]);
    w.topicIds.set('orders', 'orders-1');
    await w.start();
    expect(await offsetsOf('g')).toEqual(['kept:4']);
    expect(await offsetsOf('solo')).toEqual([]);
  });

  it('deletes only empty groups, durably', async () => {
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 9 }]);
    const busy = await w.coordinator.deleteGroups({ groupIds: ['g', 'missing'] });
    expect(busy.results!.map((r) => code(r))).toEqual(['NON_EMPTY_GROUP', 'GROUP_ID_NOT_FOUND']);
    await w.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: m.memberId }] });
    expect((await w.coordinator.deleteGroups({ groupIds: ['g'] })).results!.map((r) => code(r))).toEqual(['NONE']);
    expect(code((await w.coordinator.describeGroups({ groupIds: ['g'] })).groups![0]!)).toBe('GROUP_ID_NOT_FOUND');
    await w.start();
    expect((await w.coordinator.listGroups({})).groups).toEqual([]);
    expect(await fetch('g')).toMatchObject({ committedOffset: -1 });
  });

  it('expires the offsets of a group empty for longer than offsetsRetentionMs, also after a restart', async () => {
    await w.start({ offsetsRetentionMs: 60_000, offsetsRetentionCheckIntervalMs: 10_000 });
    const m = await stableSingle(w, 'g');
    await commit('g', m, [{ partition: 0, committedOffset: 9 }]);
    const keep = await stableSingle(w, 'active');
    await commit('active', keep, [{ partition: 0, committedOffset: 3 }]);
    await w.coordinator.leaveGroup({ groupId: 'g', members: [{ memberId: m.memberId }] });
    for (let t = 0; t < 50_000; t += 5000) {
      w.time.advance(5000);
      await w.coordinator.heartbeat({ groupId: 'active', generationId: keep.generationId, memberId: keep.memberId });
      await settle();
    }
    expect(await fetch('g')).toMatchObject({ committedOffset: 9 });
    for (let t = 0; t < 20_000; t += 5000) {
      w.time.advance(5000);
      await w.coordinator.heartbeat({ groupId: 'active', generationId: keep.generationId, memberId: keep.memberId });
      await settle();
    }
    expect(await fetch('g')).toMatchObject({ committedOffset: -1 });
    expect(await fetch('active')).toMatchObject({ committedOffset: 3 });
    await w.start();
    expect(await fetch('g')).toMatchObject({ committedOffset: -1 });
    expect((await w.coordinator.listGroups({})).groups!.map((g) => g.groupId)).toEqual(['active']);
  });

  it('summarizes a group with its lag and the owner of each partition', async () => {
    const m = await stableSingle(w, 'g', { orders: [0, 1] });
    await commit('g', m, [{ partition: 0, committedOffset: 60 }]);
    const s = w.coordinator.summarize('g');
    expect(s.members[0]!.assignment).toEqual([{ topic: 'orders', partitions: [0, 1] }]);
    expect(s.offsets).toEqual([
      { topic: 'orders', partition: 0, committedOffset: 60, logEndOffset: 100, lag: 40, metadata: '', owner: m.memberId },
      { topic: 'orders', partition: 1, committedOffset: -1, logEndOffset: 100, lag: null, metadata: '', owner: m.memberId },
    ]);
    expect(() => w.coordinator.summarize('nope')).toThrow(/does not exist/);
  });

  it('lists groups with an optional state filter', async () => {
    await stableSingle(w, 'b');
    await commit('a', null, [{ partition: 0, committedOffset: 1 }]);
    expect((await w.coordinator.listGroups({})).groups!.map((g) => [g.groupId, g.state])).toEqual([
      ['a', 'Empty'],
      ['b', 'Stable'],
    ]);
    expect((await w.coordinator.listGroups({ statesFilter: ['stable'] })).groups!.map((g) => g.groupId)).toEqual(['b']);
  });
});

describe('group coordinator: group exhaustion (issue 22)', () => {
  let w: World;
  beforeEach(() => {
    w = new World();
  });
  afterEach(() => w.coordinator.close());

  const commit = (groupId: string, m: { memberId: string; generationId: number } | null, offset: number, c?: typeof ctx) =>
    w.coordinator.offsetCommit(
      { groupId, generationId: m ? m.generationId : -1, memberId: m ? m.memberId : '', topics: [{ name: 'orders', partitions: [{ partition: 0, committedOffset: offset }] }] },
      c,
    );
  const commitCode = async (...args: Parameters<typeof commit>) => code((await commit(...args)).topics![0]!.partitions![0]!);
  const listed = async () => (await w.coordinator.listGroups({})).groups!.map((g) => g.groupId).sort();
  const advance = async (ms: number, step = 1000) => {
    for (let t = 0; t < ms; t += step) {
      w.time.advance(step);
      await settle();
    }
  };

  it('regression: an empty group that never committed goes away after groupEmptyRetentionMs; groups with offsets stay', async () => {
    await w.start({ groupEmptyRetentionMs: 10_000 });
    // A join that never comes back with its member id, even with the longest session timeout.
    expect(code(await w.coordinator.joinGroup(w.joinRequest('ghost', '', { sessionTimeoutMs: 1_800_000 }), ctx))).toBe('MEMBER_ID_REQUIRED');
    // A group that had a member (its metadata is in the log) and is empty again.
    const left = await stableSingle(w, 'left');
    await w.coordinator.leaveGroup({ groupId: 'left', members: [{ memberId: left.memberId }] });
    // A group that committed offsets: kept for offsetsRetentionMs, not the short bound.
    const kept = await stableSingle(w, 'kept');
    expect(await commitCode('kept', kept, 7)).toBe('NONE');
    await w.coordinator.leaveGroup({ groupId: 'kept', members: [{ memberId: kept.memberId }] });
    expect(await listed()).toEqual(['ghost', 'kept', 'left']);
    await advance(21_000);
    expect(await listed()).toEqual(['kept']);
    expect(w.lines.some((l) => l.msg === 'empty groups without offsets expired')).toBe(true);
    // The stored empty group was tombstoned: it does not come back on a reload.
    await w.start({ groupEmptyRetentionMs: 10_000 });
    expect(await listed()).toEqual(['kept']);
    const fetched = await w.coordinator.offsetFetch({ groupId: 'kept', topics: [{ name: 'orders', partitions: [0] }] });
    expect(fetched.topics![0]!.partitions![0]!.committedOffset).toBe(7);
  });

  it('regression: new groups stop at groupCreateLimit while existing groups keep joining and committing, also after a reload', async () => {
    await w.start({ maxGroups: 10, groupCreateLimit: 4 });
    const a = await stableSingle(w, 'a');
    for (const g of ['b', 'c']) expect(await commitCode(g, null, 1)).toBe('NONE');
    const first = await w.coordinator.joinGroup(w.joinRequest('d'), ctx);
    expect(code(first)).toBe('MEMBER_ID_REQUIRED');
    const refused = await w.coordinator.joinGroup(w.joinRequest('new'), ctx);
    expect(code(refused)).toBe('GROUP_LIMIT_REACHED');
    expect(isRetriable('GROUP_LIMIT_REACHED')).toBe(true);
    expect(refused.errorMessage).toMatch(/holds 4 groups/);
    expect(await commitCode('new-by-commit', null, 1)).toBe('GROUP_LIMIT_REACHED');
    // Existing groups are served: a member commits, a new member joins, outside commits to an empty group.
    expect(await commitCode('a', a, 5)).toBe('NONE');
    const d = await w.coordinator.joinGroup(w.joinRequest('d', first.memberId!), ctx);
    expect(code(d)).toBe('NONE');
    const sync = await w.coordinator.syncGroup(
      { groupId: 'd', generationId: d.generationId, memberId: d.memberId, assignments: [{ memberId: d.memberId, assignment: assignment({ orders: [0] }) }] },
      ctx,
    );
    expect(code(sync)).toBe('NONE');
    expect(await commitCode('b', null, 2)).toBe('NONE');
    // Groups loaded from the log are never refused, even past the limit: the reserve up to maxGroups holds them.
    await w.start({ maxGroups: 10, groupCreateLimit: 2 });
    expect(await listed()).toEqual(['a', 'b', 'c', 'd']);
    expect(await commitCode('c', null, 3)).toBe('NONE');
    expect(code(await w.coordinator.joinGroup(w.joinRequest('new'), ctx))).toBe('GROUP_LIMIT_REACHED');
    await expect(w.start({ maxGroups: 10, groupCreateLimit: 11 })).rejects.toThrow(/groupCreateLimit/);
  });

  it('regression: one connection creating groups too fast gets GROUP_CREATE_THROTTLED; other connections and existing groups are served', async () => {
    await w.start({ groupCreateRatePerConnection: 2, groupCreateBurstPerConnection: 5 });
    const conn1 = { ...ctx, connectionId: 1 };
    const conn2 = { ...ctx, connectionId: 2 };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await w.coordinator.joinGroup(w.joinRequest(`spam-${i}`), conn1);
      expect(code(r)).toBe('MEMBER_ID_REQUIRED');
      ids.push(r.memberId!);
    }
    const throttled = await w.coordinator.joinGroup(w.joinRequest('spam-5'), conn1);
    expect(code(throttled)).toBe('GROUP_CREATE_THROTTLED');
    expect(isRetriable('GROUP_CREATE_THROTTLED')).toBe(true);
    expect(await commitCode('spam-by-commit', null, 1, conn1)).toBe('GROUP_CREATE_THROTTLED');
    // The same connection still joins an existing group; another connection still creates one.
    expect(code(await w.coordinator.joinGroup(w.joinRequest('spam-0', ids[0]), conn1))).toBe('NONE');
    expect(code(await w.coordinator.joinGroup(w.joinRequest('other'), conn2))).toBe('MEMBER_ID_REQUIRED');
    // The bucket refills at the configured rate.
    w.time.advance(500);
    expect(code(await w.coordinator.joinGroup(w.joinRequest('spam-5'), conn1))).toBe('MEMBER_ID_REQUIRED');
    expect(code(await w.coordinator.joinGroup(w.joinRequest('spam-6'), conn1))).toBe('GROUP_CREATE_THROTTLED');
  });
});

describe('group coordinator: offsets committed in open transactions (KIP-447 require_stable)', () => {
  let w: World;
  beforeEach(async () => {
    w = new World();
    await w.start();
  });
  afterEach(() => w.coordinator.close());

  const commit = (partition: number, offset: number, txn?: { producerId: number; producerEpoch: number }) =>
    w.coordinator.offsetCommit({ groupId: 'g', generationId: -1, memberId: '', topics: [{ name: 'orders', partitions: [{ partition, committedOffset: offset }] }] }, undefined, txn);
  const fetched = async (requireStable: boolean, all = false) => {
    const r = await w.coordinator.offsetFetch({ groupId: 'g', topics: all ? [] : [{ name: 'orders', partitions: [0, 1] }], requireStable });
    return Object.fromEntries(r.topics![0]!.partitions!.map((p) => [p.partition!, code(p) === 'NONE' ? Number(p.committedOffset) : code(p)]));
  };

  it('answers UNSTABLE_OFFSET_COMMIT for a partition with a pending transactional commit only when asked to', async () => {
    expect(code((await commit(0, 5)).topics![0]!.partitions![0]!)).toBe('NONE');
    expect(code((await commit(1, 7)).topics![0]!.partitions![0]!)).toBe('NONE');
    expect(code((await commit(0, 9, { producerId: 4000, producerEpoch: 0 })).topics![0]!.partitions![0]!)).toBe('NONE');
    // Without require_stable: the offset before the open transaction (Kafka's behaviour too).
    expect(await fetched(false)).toEqual({ 0: 5, 1: 7 });
    expect(await fetched(true)).toEqual({ 0: 'UNSTABLE_OFFSET_COMMIT', 1: 7 });
    expect(await fetched(true, true)).toEqual({ 0: 'UNSTABLE_OFFSET_COMMIT', 1: 7 });
    const partition = partitionForGroup('g', 4);
    // Another producer's transaction ending changes nothing.
    w.coordinator.completeTxn(partition, 4001, true);
    expect(await fetched(true)).toEqual({ 0: 'UNSTABLE_OFFSET_COMMIT', 1: 7 });
    w.coordinator.completeTxn(partition, 4000, true);
    expect(await fetched(true)).toEqual({ 0: 9, 1: 7 });
    // An aborted transaction leaves the offset before it, stable again.
    await commit(1, 11, { producerId: 4000, producerEpoch: 1 });
    expect(await fetched(true)).toEqual({ 0: 9, 1: 'UNSTABLE_OFFSET_COMMIT' });
    w.coordinator.completeTxn(partition, 4000, false);
    expect(await fetched(true)).toEqual({ 0: 9, 1: 7 });
  });
});
