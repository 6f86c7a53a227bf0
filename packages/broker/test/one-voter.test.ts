/**
 * A one-node cluster (controller.quorum.voters naming only this broker, the
 * lone KRaft node of combined mode): it pays for nothing a quorum of one does
 * not need. Its Raft listener is open (controllers can be added to it) but no
 * election timeout passes before it is the active controller, and when startBroker resolves it is
 * registered, unfenced and serving: a topic created at once is led here and
 * acks=all answers at once.
 */
import net from 'node:net';
import { readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { openLog } from '@mq/log-store';
import { decodeBatchSync, encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { freePort } from '../src/test-support/net.js';
import { createTopic, httpJson, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';


function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

describe('a one-voter cluster', () => {
  let t: TestBroker | undefined;
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
  });

  it('serves as soon as it starts: active controller of a quorum of one, its Raft listener open (it can grow), acks=all answered at once', async () => {
    const raftPort = await freePort();
    const started = Date.now();
    // Ticks of 10 s: an election timeout would be 100-200 s and a liveness round 10 s. Serving within one tick
    // shows the broker waited for neither (not a speed test: the bound is ten times a loaded machine's start-up).
    t = await startTestBroker({
      'broker.id': '1',
      'controller.quorum.voters': `1@127.0.0.1:${raftPort}`,
      'controller.fsync': 'false',
      'controller.tick.ms': '10000',
      'broker.session.timeout.ms': '150000',
    });
    const startMs = Date.now() - started;
    expect(startMs).toBeLessThan(10_000);
    // Configured with its Raft address, it listens there: controllers can be added (a one-node cluster started with no settings does not).
    expect(await listening(raftPort)).toBe(true);

    const status = (await httpJson(`${t.httpUrl}/cluster`)).body;
    expect(status).toMatchObject({ brokerId: 1, controllerId: 1, activeController: true, brokers: [expect.objectContaining({ id: 1, fenced: false })] });

    const c = await TestClient.connect(t.url);
    const name = topicName('one-voter');
    await createTopic(c, name, 2);
    // Created means led here: the first produce needs no retry.
    const r = await c.request({ produce: { acks: -1, timeoutMs: 5000, topics: [{ name, partitions: [{ partition: 1, records: encodeBatchSync([{ value: 'a' }, { value: 'b' }]) }] }] } });
    expect(r.produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, baseOffset: 0 });
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 1, timestamp: -1 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]!.highWatermark).toBe(2);
    await c.close();
  });

  it("hands the broker's clock to its replicas' logs: log-append time is the broker's clock in the answer and in the log", async () => {
    const NOW = 1_500_000_000_000;
    t = await startTestBroker({ 'broker.id': '1', 'controller.quorum.voters': `1@127.0.0.1:${await freePort()}`, 'controller.fsync': 'false' }, { clock: () => NOW });
    const c = await TestClient.connect(t.url);
    const name = topicName('clock');
    await createTopic(c, name, 1, { 'message.timestamp.type': 'LogAppendTime' });
    const r = await c.request({ produce: { acks: -1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'x', timestamp: 1 }]) }] }] } });
    expect(r.produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, logAppendTime: NOW });
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    const p = f.fetch!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(decodeBatchSync(Buffer.from(p.records), 0).records[0]!.timestamp).toBe(NOW);
    await c.close();
  });

  it("opens its replicas' logs through the broker's openLog component", async () => {
    const opened: string[] = [];
    t = await startTestBroker(
      { 'broker.id': '1', 'controller.quorum.voters': `1@127.0.0.1:${await freePort()}`, 'controller.fsync': 'false' },
      {
        openLog: (dir, options) => {
          opened.push(path.basename(dir));
          return openLog(dir, options);
        },
      },
    );
    const c = await TestClient.connect(t.url);
    const name = topicName('opener');
    await createTopic(c, name, 2);
    expect(opened.filter((d) => d.startsWith(`${name}-`)).sort()).toEqual([expect.stringMatching(new RegExp(`^${name}-0\\.`)), expect.stringMatching(new RegExp(`^${name}-1\\.`))]);
    await c.close();
  });

  it('serves fetches when max.frame.bytes leaves no room beyond the frame overhead (fetch_max_bytes floor of one batch)', async () => {
    // Regression: the cluster's fetch asked @mq/replication for maxBytes = min(fetch.max.bytes, max.frame.bytes - 64 KiB) = 0 and every fetch failed with INVALID_FETCH_SIZE.
    t = await startTestBroker({ 'broker.id': '1', 'controller.quorum.voters': `1@127.0.0.1:${await freePort()}`, 'controller.fsync': 'false', 'max.frame.bytes': String(64 * 1024) });
    const c = await TestClient.connect(t.url);
    const name = topicName('small-frame');
    await createTopic(c, name, 1);
    await c.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'a' }, { value: 'b' }]) }] }] } });
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(f.errorCode).toBe(0);
    const p = f.fetch!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(decodeBatchSync(Buffer.from(p.records), 0).records.map((r) => r.value!.toString())).toEqual(['a', 'b']);
    await c.close();
  });

  it('a replica log that fails to open is offline with STORAGE_ERROR while every other partition is served', async () => {
    // Regression: the replica manager retried opening it forever and applied no partition metadata after it.
    t = await startTestBroker({ 'broker.id': '1', 'controller.quorum.voters': `1@127.0.0.1:${await freePort()}`, 'controller.fsync': 'false' });
    let c = await TestClient.connect(t.url);
    const name = topicName('offline');
    await createTopic(c, name, 2);
    await c.close();
    await t.broker.close();
    const logs = path.join(t.dataDir, 'cluster-logs');
    const dir = (await readdir(logs)).find((d) => d.startsWith(`${name}-1.`) && !d.endsWith('.hw'))!;
    await rm(path.join(logs, dir), { recursive: true });
    await writeFile(path.join(logs, dir), 'not a directory');
    await t.restart();
    expect(t.lines.some((l) => l.msg === 'replica log failed to open: partition offline on this broker')).toBe(true);
    c = await TestClient.connect(t.url);
    const produce = async (topic: string, partition: number) =>
      (await c.request({ produce: { acks: -1, timeoutMs: 5000, topics: [{ name: topic, partitions: [{ partition, records: encodeBatchSync([{ value: 'x' }]) }] }] } })).produce!.topics[0]!.partitions[0]!.errorCode;
    expect(await produce(name, 0)).toBe(0);
    expect(await produce(name, 1)).toBe(errorNumber('STORAGE_ERROR'));
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 1, fetchOffset: 0 }] }] } });
    expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('STORAGE_ERROR'));
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 1, timestamp: -1 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('STORAGE_ERROR'));
    // Metadata applied after the failure is still acted on.
    const later = topicName('later');
    await createTopic(c, later, 1);
    expect(await produce(later, 0)).toBe(0);
    await c.close();
  });

  it('a fetch waiting on a topic that is deleted answers UNKNOWN_TOPIC_OR_PARTITION', async () => {
    // Regression: the leader resigned before the replica was dropped, and the woken fetch answered NOT_LEADER.
    t = await startTestBroker({ 'broker.id': '1', 'controller.quorum.voters': `1@127.0.0.1:${await freePort()}`, 'controller.fsync': 'false' });
    const c = await TestClient.connect(t.url);
    const name = topicName('deleted');
    await createTopic(c, name, 1);
    const poll = c.request({ fetch: { maxWaitMs: 10_000, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    await new Promise((r) => setTimeout(r, 50));
    const del = await c.request({ deleteTopics: { topics: [name] } });
    expect(del.deleteTopics!.results[0]!.errorCode).toBe(0);
    expect((await poll).fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
    await c.close();
  });
});
