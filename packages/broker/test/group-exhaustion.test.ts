/**
 * Issue 22, group exhaustion: every JoinGroup with a new group id created a
 * group that lived for days, so one connection could fill the coordinator's
 * maxGroups and lock every new application out. Group creation is now
 * rate-limited per connection (GROUP_CREATE_THROTTLED), new groups stop at a
 * limit below maxGroups (GROUP_LIMIT_REACHED), and empty groups that never
 * committed go away after group.empty.retention.ms; existing groups are
 * served throughout.
 */
import { errorCodeFromNumber, isRetriable } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import { coordinatorReady, createTopic, startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

const metadata = (topic: string) => Buffer.from(mq.ConsumerSubscription.encode({ topics: [topic] }).finish());
const joinRequest = (groupId: string, topic: string, memberId = '') => ({
  groupId,
  memberId,
  sessionTimeoutMs: 10_000,
  protocolType: 'consumer',
  protocols: [{ name: 'range', metadata: metadata(topic) }],
});
const codeOf = (r: { errorCode?: number | null } | null | undefined) => errorCodeFromNumber(r?.errorCode ?? 0);

/** A one-member application: joined, synced and committed; returns what it needs to come back. */
async function application(c: TestClient, groupId: string, topic: string) {
  const first = (await c.request({ joinGroup: joinRequest(groupId, topic) })).joinGroup!;
  expect(codeOf(first)).toBe('MEMBER_ID_REQUIRED');
  const memberId = first.memberId!;
  const member = {
    async rejoinAndCommit(offset: number) {
      const j = (await c.request({ joinGroup: joinRequest(groupId, topic, memberId) })).joinGroup!;
      expect(codeOf(j)).toBe('NONE');
      const assignment = mq.ConsumerAssignment.encode({ assignedPartitions: [{ topic, partitions: [0] }] }).finish();
      const s = (await c.request({ syncGroup: { groupId, generationId: j.generationId, memberId, assignments: [{ memberId, assignment }] } })).syncGroup!;
      expect(codeOf(s)).toBe('NONE');
      const r = await c.request({
        offsetCommit: { groupId, generationId: j.generationId, memberId, topics: [{ name: topic, partitions: [{ partition: 0, committedOffset: offset }] }] },
      });
      return codeOf(r.offsetCommit!.topics![0]!.partitions![0]!);
    },
  };
  expect(await member.rejoinAndCommit(0)).toBe('NONE');
  return member;
}

/** Sends `count` JoinGroups for new group ids on one connection (pipelined); counts the answers by error code. */
async function createGroups(c: TestClient, prefix: string, count: number, topic: string): Promise<Map<string, number>> {
  const codes = new Map<string, number>();
  for (let i = 0; i < count; i += 500) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(500, count - i) }, (_, k) => c.request({ joinGroup: joinRequest(`${prefix}-${i + k}`, topic) }, 30_000)),
    );
    for (const a of answers) codes.set(codeOf(a.joinGroup), (codes.get(codeOf(a.joinGroup)) ?? 0) + 1);
  }
  return codes;
}

describe('group exhaustion', () => {
  let t: TestBroker;
  const clients: TestClient[] = [];
  const connect = async () => {
    const c = await TestClient.connect(t.url);
    clients.push(c);
    return c;
  };
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.close();
    await t.cleanup();
  });

  it('regression: a connection creating thousands of groups gets GROUP_CREATE_THROTTLED while an existing group keeps working', async () => {
    t = await startTestBroker({ 'group.initial.rebalance.delay.ms': '0' });
    const admin = await connect();
    await coordinatorReady(admin);
    const topic = topicName('ge');
    await createTopic(admin, topic, 1);
    const app = await application(await connect(), 'app', topic);

    const attacker = await connect();
    const started = Date.now();
    const codes = await createGroups(attacker, 'spam', 3000, topic);
    const elapsedS = (Date.now() - started) / 1000;
    const created = codes.get('MEMBER_ID_REQUIRED') ?? 0;
    // Default: a burst of 100, then 10 per second.
    expect(created).toBeGreaterThanOrEqual(100);
    expect(created).toBeLessThanOrEqual(100 + Math.ceil(10 * elapsedS) + 1);
    expect(codes.get('GROUP_CREATE_THROTTLED')).toBe(3000 - created);
    expect(isRetriable('GROUP_CREATE_THROTTLED')).toBe(true);

    // The existing application still rejoins and commits; another connection still creates a group.
    expect(await app.rejoinAndCommit(0)).toBe('NONE');
    const other = await connect();
    expect(codeOf((await other.request({ joinGroup: joinRequest('newcomer', topic) })).joinGroup)).toBe('MEMBER_ID_REQUIRED');
  }, 120_000);

  it('regression: new groups stop below maxGroups (GROUP_LIMIT_REACHED) and empty groups expire, so creation works again', async () => {
    t = await startTestBroker({
      'group.initial.rebalance.delay.ms': '0',
      'group.max.groups': '50',
      'group.empty.retention.ms': '1000',
    });
    const admin = await connect();
    await coordinatorReady(admin);
    const topic = topicName('ge');
    await createTopic(admin, topic, 1);
    const app = await application(await connect(), 'app', topic);

    // Five connections, each within its rate, fill the groups up to the limit for new groups (90% of 50 = 45).
    const totals = new Map<string, number>();
    for (let i = 0; i < 5; i++) {
      const codes = await createGroups(await connect(), `fill-${i}`, 20, topic);
      for (const [k, v] of codes) totals.set(k, (totals.get(k) ?? 0) + v);
    }
    expect(totals.get('MEMBER_ID_REQUIRED')).toBe(44); // 'app' is the 45th
    expect(totals.get('GROUP_LIMIT_REACHED')).toBe(56);
    expect(await app.rejoinAndCommit(0)).toBe('NONE');

    // The groups nobody came back to (no members, no offsets) expire within about two retention periods.
    const late = await connect();
    await waitFor(async () => codeOf((await late.request({ joinGroup: joinRequest('late', topic) })).joinGroup) === 'MEMBER_ID_REQUIRED', 10_000);
    const listed = (await admin.request({ listGroups: {} })).listGroups!.groups!.map((g) => g.groupId).sort();
    expect(listed).toEqual(['app', 'late']);
    expect(t.lines.some((l) => l.msg === 'empty groups without offsets expired')).toBe(true);
  }, 60_000);
});
