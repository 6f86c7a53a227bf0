/**
 * `startBroker` with no cluster settings: a one-node cluster (process.roles
 * broker,controller; the quorum's only voter) serving through the same
 * controller, replica manager and handlers as a cluster, with no Raft and no
 * inter-broker listener. Leader epochs grow across restarts (fence and
 * unfence), so a request that does not say which epoch it knows is not
 * checked, while one naming an old epoch is fenced.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import { startBroker } from '../src/index.js';
import { createTopic, httpJson, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

describe('a broker with no cluster settings', () => {
  let t: TestBroker | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('is the active controller of a one-voter quorum, broker 1, with no inter-broker listener', async () => {
    t = await startTestBroker();
    expect(t.broker.brokerId).toBe(1);
    const status = (await httpJson(`${t.httpUrl}/cluster`)).body;
    expect(status).toMatchObject({ brokerId: 1, controllerId: 1, activeController: true, voters: [1], brokers: [expect.objectContaining({ id: 1, fenced: false })] });
    const listening = t.lines.find((l) => l.msg === 'broker listening')!;
    expect(listening.interBrokerPort).toBeUndefined();
    expect(t.lines.some((l) => l.msg === 'process.roles=broker,controller')).toBe(true);
    // ControllerForward is neither served nor advertised: no other broker exists to send it.
    const c = await TestClient.connect(t.url);
    const hs = await c.request({ handshake: {} });
    expect(hs.handshake!.apiVersions.map((v) => v.api)).not.toContain(mq.ApiKey.CONTROLLER_FORWARD);
    const refused = await c.request({ controllerForward: { brokerId: 2 } });
    expect(refused.errorCode).toBe(errorNumber('UNSUPPORTED_VERSION'));
    await c.close();
  });

  it('serves consumer groups from its first request (__consumer_offsets created and loaded before it listens)', async () => {
    t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const join = { groupId: 'first', sessionTimeoutMs: 10_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.alloc(0) }] };
    expect((await c.request({ joinGroup: join })).joinGroup!.errorCode).toBe(errorNumber('MEMBER_ID_REQUIRED'));
    await c.close();
  });

  it('refuses broker.id 0 with INVALID_CONFIG', async () => {
    t = await startTestBroker();
    await t.broker.close();
    await expect(startBroker({ dataDir: `${t.dataDir}/zero`, port: 0, httpPort: 0, brokerId: 0 })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/broker.id 0 cannot be used/) });
    await t.restart();
  });

  it("renumbers an old single broker's data directory (broker 0) to broker 1 and says so once", async () => {
    t = await startTestBroker();
    const clusterId = t.broker.clusterId;
    await t.broker.close();
    await writeFile(path.join(t.dataDir, 'meta.properties'), `version=1\nbroker.id=0\ncluster.id=${clusterId}\n`);
    await t.restart();
    expect(t.broker).toMatchObject({ brokerId: 1, clusterId });
    expect(t.lines.filter((l) => /renumbered to broker 1/.test(l.msg))).toHaveLength(1);
  });

  it('after a restart (a new leader epoch) serves requests that omit the leader epoch, and fences one naming the old epoch', async () => {
    t = await startTestBroker();
    let c = await TestClient.connect(t.url);
    const name = topicName('epochs');
    await createTopic(c, name, 1);
    await c.request({ produce: { acks: -1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'a' }]) }] }] } });
    const epoch = async () => (await c.request({ metadata: { topics: [name] } })).metadata!.topics[0]!.partitions[0]!.leaderEpoch;
    const before = await epoch();
    await c.close();
    await t.restart();
    c = await TestClient.connect(t.url);
    const after = await epoch();
    expect(after).toBeGreaterThan(before);
    // Omitted (what a proto3 client sends for "unknown") and -1: no check.
    const omitted = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(omitted.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, offset: 1 });
    const unknown = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, currentLeaderEpoch: -1 }] }] } });
    expect(unknown.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    // An explicit old epoch, 0 included, is fenced; the current one is served.
    const stale = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, currentLeaderEpoch: 0 }] }] } });
    expect(stale.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('FENCED_LEADER_EPOCH'));
    const staleLo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1, currentLeaderEpoch: 0 }] }] } });
    expect(staleLo.listOffsets!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('FENCED_LEADER_EPOCH'));
    const current = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, currentLeaderEpoch: after }] }] } });
    expect(current.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    await c.close();
  });
});
