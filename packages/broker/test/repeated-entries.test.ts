/**
 * Issue 22, work amplification: one existing topic or group named N times in
 * one request was answered N times (DescribeGroups of a 50-member group
 * x20,000: a 140 KB request, a 1.1 GB answer, the event loop blocked for
 * minutes). Repeats are answered once, and a request naming more than
 * request.max.entries entries is refused before any work.
 */
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import { REQUEST_VALUES_PER_ENTRY } from '../src/server/request-entries.js';
import { coordinatorReady, createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

const N = 20_000;

describe('repeated entries', () => {
  let t: TestBroker;
  let c: TestClient;
  let topic: string;
  const group = 'g-repeated';

  beforeAll(async () => {
    t = await startTestBroker({ 'group.initial.rebalance.delay.ms': '0', 'request.max.entries': String(N) });
    c = await TestClient.connect(t.url);
    await coordinatorReady(c);
    topic = topicName('rep');
    await createTopic(c, topic, 1);
    // Ten members with 1 KiB of subscription metadata each.
    const metadata = Buffer.from(mq.ConsumerSubscription.encode({ topics: [topic], userData: Buffer.alloc(1024, 1) }).finish());
    const join = { groupId: group, sessionTimeoutMs: 30_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata }] };
    const members = await Promise.all(
      Array.from({ length: 10 }, async () => {
        const m = await TestClient.connect(t.url);
        const first = (await m.request({ joinGroup: join })).joinGroup!;
        return { m, memberId: first.memberId };
      }),
    );
    const joined = await Promise.all(members.map(({ m, memberId }) => m.request({ joinGroup: { ...join, memberId } })));
    for (const j of joined) expect(j.joinGroup!.errorCode).toBe(0);
    await c.request({ offsetCommit: { groupId: 'g-offsets', generationId: -1, topics: [{ name: topic, partitions: [{ partition: 0, committedOffset: 0 }] }] } });
  });

  afterAll(async () => {
    await t.cleanup();
  });

  const timed = async <T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> => {
    const started = Date.now();
    const value = await fn();
    return { value, ms: Date.now() - started };
  };

  it(`DescribeGroups naming one group ${N} times describes it once`, async () => {
    const { value, ms } = await timed(() => c.request({ describeGroups: { groupIds: Array(N).fill(group) } }, 30_000));
    expect(value.describeGroups!.groups).toHaveLength(1);
    expect(value.describeGroups!.groups[0]!.members).toHaveLength(10);
    expect(ms).toBeLessThan(5000);
  });

  it(`Metadata, DescribeConfigs, ListOffsets and OffsetFetch naming one entry ${N} times answer it once`, async () => {
    const md = await c.request({ metadata: { topics: Array(N).fill(topic) } }, 30_000);
    expect(md.metadata!.topics).toHaveLength(1);
    const dc = await c.request({ describeConfigs: { topics: Array(N).fill(topic) } }, 30_000);
    expect(dc.describeConfigs!.results).toHaveLength(1);
    const lo = await c.request({ listOffsets: { topics: Array(N).fill({ name: topic, partitions: [{ partition: 0, timestamp: -1 }] }) } }, 30_000);
    expect(lo.listOffsets!.topics).toHaveLength(1);
    expect(lo.listOffsets!.topics[0]!.partitions).toHaveLength(1);
    const of = await c.request({ offsetFetch: { groupId: 'g-offsets', topics: Array(N).fill({ name: topic, partitions: [0] }) } }, 30_000);
    expect(of.offsetFetch!.topics).toHaveLength(1);
    expect(of.offsetFetch!.topics[0]!.partitions).toHaveLength(1);
  });

  it('the same partition asked for twice with different ListOffsets queries is INVALID_REQUEST', async () => {
    const r = await c.request({ listOffsets: { topics: [{ name: topic, partitions: [{ partition: 0, timestamp: -1 }, { partition: 0, timestamp: -2 }] }] } });
    expect(r.errorCode).toBe(errorNumber('INVALID_REQUEST'));
  });

  it(`Fetch and OffsetForLeaderEpoch naming one partition ${N} times read it once (5,000 fetch entries took 2.3 s)`, async () => {
    const p = await c.request({ produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'once' }]) }] }] } });
    expect(p.produce!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    const { value: f, ms } = await timed(() => c.request({ fetch: { maxWaitMs: 0, topics: Array(N).fill({ name: topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }) } }, 30_000));
    expect(f.fetch!.topics).toHaveLength(1);
    expect(f.fetch!.topics[0]!.partitions).toHaveLength(1);
    expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect(ms).toBeLessThan(2000);
    const e = await c.request({ offsetForLeaderEpoch: { replicaId: -1, topics: Array(N).fill({ name: topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }] }) } }, 30_000);
    expect(e.offsetForLeaderEpoch!.topics).toHaveLength(1);
    expect(e.offsetForLeaderEpoch!.topics[0]!.partitions).toHaveLength(1);
    const conflicting = await c.request({ offsetForLeaderEpoch: { replicaId: -1, topics: [{ name: topic, partitions: [{ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0 }, { partition: 0, currentLeaderEpoch: -1, leaderEpoch: 1 }] }] } });
    expect(conflicting.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    // One name as two incarnations (topic ids) is not merged into one entry under the first id.
    const twoIds = await c.request({
      fetch: { maxWaitMs: 0, topics: ['AAAAAAAAAAAAAAAAAAAAAA', 'BBBBBBBBBBBBBBBBBBBBBB'].map((topicId) => ({ name: topic, topicId, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] })) },
    });
    expect(twoIds.errorCode).toBe(errorNumber('INVALID_REQUEST'));
  });

  it('a produce request naming one partition twice is refused as a whole, with one answer and nothing written', async () => {
    const before = await c.request({ listOffsets: { topics: [{ name: topic, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    const batch = encodeBatchSync([{ value: 'twice' }]);
    const r = await c.request({ produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records: batch }] }, { name: topic, partitions: [{ partition: 0, records: batch }] }] } });
    expect(r.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(r.errorMessage).toMatch(/same partition more than once/);
    const after = await c.request({ listOffsets: { topics: [{ name: topic, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    expect(after.listOffsets!.topics[0]!.partitions[0]!.offset).toBe(before.listOffsets!.topics[0]!.partitions[0]!.offset);
  });

  it(`a request naming more than request.max.entries (${N}) distinct entries is INVALID_REQUEST, and the connection keeps serving`, async () => {
    const names = Array.from({ length: N + 1 }, (_, i) => `many-${i}`);
    const r = await c.request({ metadata: { topics: names } }, 30_000);
    expect(r.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(r.errorMessage).toMatch(/names 20001 entries; the limit is 20000 \(request.max.entries\)/);
    const ok = await c.request({ metadata: { topics: [topic] } });
    expect(ok.metadata!.topics[0]!.errorCode).toBe(0);
  });

  it(`a frame holding more than ${REQUEST_VALUES_PER_ENTRY} x request.max.entries values is refused before it is decoded whole, and the connection keeps serving`, async () => {
    // One name repeated: merged, it would be one entry; the frame's decode alone is what grows (issue 22: multi-MB frames).
    const r = await c.request({ metadata: { topics: Array.from({ length: REQUEST_VALUES_PER_ENTRY * N + 1 }, () => topic) } }, 30_000);
    expect(r.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(r.errorMessage).toMatch(new RegExp(`more than ${REQUEST_VALUES_PER_ENTRY * N} values`));
    const ok = await c.request({ metadata: { topics: [topic] } });
    expect(ok.metadata!.topics[0]!.errorCode).toBe(0);
  });

  it('a group-level OffsetCommit refusal answers every partition with a short message (a long member id x many partitions was a GB-sized answer)', async () => {
    // Found by fuzzing (seed 20261203, frame ~171,684): each partition's message quoted the whole member or instance id.
    const memberId = 'm'.repeat(30_000);
    const partitions = Array.from({ length: 5000 }, (_, partition) => ({ partition, committedOffset: 0 }));
    const { value: r, ms } = await timed(() => c.request({ offsetCommit: { groupId: group, generationId: 1, memberId, topics: [{ name: topic, partitions }] } }, 30_000));
    const answered = r.offsetCommit!.topics[0]!.partitions;
    expect(answered).toHaveLength(5000);
    expect(new Set(answered.map((p) => p.errorCode))).toEqual(new Set([errorNumber('UNKNOWN_MEMBER_ID')]));
    expect(answered[0]!.errorMessage).toContain('…(30000 characters)');
    expect(mq.ResponseFrame.encode(r).finish().length).toBeLessThan(1024 * 1024);
    expect(ms).toBeLessThan(5000);
  });

  it('an OffsetCommit naming one partition twice is INVALID_REQUEST; a member id over the protocol limit is refused before any partition', async () => {
    const twice = await c.request({ offsetCommit: { groupId: 'g-offsets', generationId: -1, topics: [{ name: topic, partitions: [{ partition: 0, committedOffset: 0 }, { partition: 0, committedOffset: 1 }] }] } });
    expect(twice.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(twice.errorMessage).toMatch(/same partition more than once/);
    const huge = await c.request({ offsetCommit: { groupId: group, generationId: 1, memberId: 'm'.repeat(300_000), topics: [{ name: topic, partitions: [{ partition: 0, committedOffset: 0 }] }] } }, 30_000);
    const p = huge.offsetCommit!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(errorNumber('UNKNOWN_MEMBER_ID'));
    expect(p.errorMessage).toMatch(/member id is 300000 UTF-8 bytes; the limit is 32767/);
  });
});
