import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { pino } from 'pino';
import { errorNumber } from '@mq/protocol/errors';
import { startBroker } from '../src/index.js';

const quiet = { logger: pino({ level: 'silent' }) };
import { createTopic, httpJson, partitionDir, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

describe('restart', () => {
  let t: TestBroker;
  afterEach(async () => {
    await t.cleanup();
  });

  it('keeps topics, their configs, broker config, identity and data across a restart', async () => {
    t = await startTestBroker({ 'num.partitions': '2', 'log.retention.ms': '3600000' });
    const clusterId = t.broker.clusterId;
    let c = await TestClient.connect(t.url);
    const name = topicName('persist');
    await createTopic(c, name, 0, { 'retention.ms': '120000', 'flush.policy': 'always' });
    const offsets: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await c.request({
        produce: { acks: -1, topics: [{ name, partitions: [{ partition: i % 2, records: encodeBatchSync([{ value: `v${i}` }]) }] }] },
      });
      offsets.push(r.produce!.topics[0]!.partitions[0]!.baseOffset);
    }
    await c.close();
    expect(await readFile(path.join(t.dataDir, 'broker.properties'), 'utf8')).toContain('log.retention.ms=3600000');

    // Restart with no explicit config: the persisted one applies.
    await t.restart({});
    expect(t.broker.clusterId).toBe(clusterId);
    expect(t.lines.some((l) => l.msg === 'starting after a clean shutdown')).toBe(true);
    c = await TestClient.connect(t.url);
    const dc = await c.request({ describeConfigs: { topics: [name], includeBroker: true } });
    const entries = Object.fromEntries(dc.describeConfigs!.results[0]!.entries.map((e) => [e.name, e.value]));
    expect(entries).toMatchObject({ 'retention.ms': '120000', 'flush.policy': 'always' });
    const broker = Object.fromEntries(dc.describeConfigs!.results[1]!.entries.map((e) => [e.name, e.value]));
    expect(broker['num.partitions']).toBe('2');
    const md = await c.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.partitions).toHaveLength(2);
    const f = await c.request({
      fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }, { partition: 1, fetchOffset: 0 }] }] },
    });
    const got = f.fetch!.topics[0]!.partitions.map((p) => {
      const buf = Buffer.from(p.records);
      return [...iterateBatches(buf)].flatMap((s) => decodeBatchSync(buf, s.position).records.map((r) => `${r.offset}:${r.value}`));
    });
    expect(got).toEqual([
      ['0:v0', '1:v2', '2:v4'],
      ['0:v1', '1:v3'],
    ]);
    expect(offsets).toEqual([0, 0, 1, 1, 2]);
    // New appends continue after the old ones.
    const next = await c.request({
      produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'after' }]) }] }] },
    });
    expect(next.produce!.topics[0]!.partitions[0]!.baseOffset).toBe(3);
    await c.close();
    expect((await httpJson(`${t.httpUrl}/topics/${name}/partitions/0/watermarks`)).body).toEqual({ low: 0, high: 4 });
  });

  it('refuses a second broker on the same data directory and a different broker id', async () => {
    t = await startTestBroker();
    await expect(startBroker({ dataDir: t.dataDir, port: 0, httpPort: 0 }, quiet)).rejects.toMatchObject({ code: 'LOG_DIR_LOCKED' });
    const { port, httpPort } = t.broker;
    await t.broker.close();
    await expect(startBroker({ dataDir: t.dataDir, port: 0, httpPort: 0, brokerId: 7 }, quiet)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/belongs to broker 1/),
    });
    t.broker = await startBroker({ dataDir: t.dataDir, port, httpPort }, quiet);
  });

  it('refuses an unknown broker config key and a busy port with INVALID_CONFIG', async () => {
    t = await startTestBroker();
    await expect(startBroker({ dataDir: `${t.dataDir}/other`, port: 0, httpPort: 0, config: { 'no.such': '1' } }, quiet)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
    });
    await expect(startBroker({ dataDir: `${t.dataDir}/other2`, port: t.broker.port, httpPort: 0 }, quiet)).rejects.toMatchObject({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/EADDRINUSE/),
    });
  });
});

describe('a partition log that fails to open', () => {
  it('goes offline with STORAGE_ERROR while the broker serves the other partitions', async () => {
    const { rm: remove, writeFile } = await import('node:fs/promises');
    const t = await startTestBroker();
    let c = await TestClient.connect(t.url);
    const name = topicName('offline');
    await createTopic(c, name, 2);
    await c.close();
    await t.broker.close();
    // Replace partition 1's directory with a plain file: its log cannot open.
    const dir = await partitionDir(t.dataDir, name, 1);
    await remove(dir, { recursive: true });
    await writeFile(dir, 'not a directory');
    await t.restart();
    expect(t.lines.some((l) => l.msg === 'replica log failed to open: partition offline on this broker')).toBe(true);
    c = await TestClient.connect(t.url);
    const md = await c.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.partitions.map((p) => p.errorCode)).toEqual([0, errorNumber('STORAGE_ERROR')]);
    const produce = (partition: number) =>
      c.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition, records: encodeBatchSync([{ value: 'x' }]) }] }] } });
    expect((await produce(0)).produce!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await produce(1)).produce!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('STORAGE_ERROR'));
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 1, fetchOffset: 0 }] }] } });
    expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('STORAGE_ERROR'));
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 1, timestamp: -2 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('STORAGE_ERROR'));
    const http = await httpJson(`${t.httpUrl}/topics/${name}`);
    expect(http.body.partitions[1]).toMatchObject({ offline: true });
    // Deleting the topic still works and clears the way.
    const del = await c.request({ deleteTopics: { topics: [name] } });
    expect(del.deleteTopics!.results[0]!.errorCode).toBe(0);
    await c.close();
    await t.cleanup();
  });
});
