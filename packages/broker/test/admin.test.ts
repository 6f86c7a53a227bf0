import path from 'node:path';
import { errorNumber } from '@mq/protocol/errors';
import { BODY_API, mq } from '@mq/protocol/wire';
import { createTopic, httpJson, startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

describe('broker admin APIs over WebSocket', () => {
  let t: TestBroker;
  let c: TestClient;
  beforeAll(async () => {
    t = await startTestBroker();
    c = await TestClient.connect(t.url);
  });
  afterAll(async () => {
    await c.close();
    await t.cleanup();
  });

  it('handshakes with its identity and exactly the APIs it implements', async () => {
    const r = await c.request({ handshake: { clientSoftware: 'test', apiVersions: [] } });
    const h = r.handshake!;
    expect(h.brokerId).toBe(1);
    expect(h.clusterId).toBe(t.broker.clusterId);
    expect(h.maxFrameBytes).toBe(16 * 1024 * 1024);
    const advertised = new Set(h.apiVersions.map((v) => v.api));
    // The core APIs of this package are all there...
    for (const body of ['handshake', 'metadata', 'createTopics', 'deleteTopics', 'createPartitions', 'describeConfigs', 'produce', 'fetch', 'listOffsets', 'offsetForLeaderEpoch'] as const) {
      expect(advertised.has(BODY_API[body])).toBe(true);
    }
    // ...and every API is advertised exactly when the broker serves it.
    for (const body of Object.keys(BODY_API) as Array<keyof typeof BODY_API>) {
      if (body === 'handshake') continue;
      // (An empty produce is acks=0 in proto3 and would get no answer.)
      const r = await c.request({ [body]: body === 'produce' ? { acks: 1 } : {} });
      expect([body, r.errorCode === errorNumber('UNSUPPORTED_VERSION')]).toEqual([body, !advertised.has(BODY_API[body])]);
    }
  });

  it('creates a topic and describes it in metadata with leader, epoch, replicas and ISR', async () => {
    const name = topicName('meta');
    await createTopic(c, name, 3);
    const r = await c.request({ metadata: { topics: [name] } });
    const md = r.metadata!;
    expect(md.clusterId).toBe(t.broker.clusterId);
    expect(md.controllerId).toBe(1);
    expect(md.brokers).toEqual([expect.objectContaining({ id: 1, host: '127.0.0.1', port: t.broker.port, httpPort: t.broker.httpPort })]);
    const topic = md.topics[0]!;
    expect(topic.errorCode).toBe(0);
    expect(topic.topicId).toMatch(/^[\w-]{22}$/);
    expect(topic.partitions.map((p) => [p.partition, p.leader, p.leaderEpoch, p.replicas, p.isr])).toEqual([
      [0, 1, 0, [1], [1]],
      [1, 1, 0, [1], [1]],
      [2, 1, 0, [1], [1]],
    ]);
    const all = await c.request({ metadata: {} });
    expect(all.metadata!.topics.map((x) => x.name)).toContain(name);
  });

  it('answers unknown and invalid topics in metadata with their own error codes', async () => {
    const r = await c.request({ metadata: { topics: ['no-such-topic-x', 'bad name'] } });
    expect(r.metadata!.topics.map((x) => x.errorCode)).toEqual([
      errorNumber('UNKNOWN_TOPIC_OR_PARTITION'),
      errorNumber('INVALID_TOPIC'),
    ]);
    expect(r.metadata!.topics[0]!.errorMessage).toContain('mq topic create');
  });

  it('refuses bad topic creations, each with its code, and creates the valid one in the same request', async () => {
    const good = topicName('good');
    const dup = topicName('dup');
    await createTopic(c, dup);
    const r = await c.request({
      createTopics: {
        topics: [
          { name: '..', numPartitions: 1 },
          { name: 'x'.repeat(250), numPartitions: 1 },
          { name: 'bad/name', numPartitions: 1 },
          { name: dup, numPartitions: 1 },
          { name: topicName('rf'), numPartitions: 1, replicationFactor: 3 },
          { name: topicName('np'), numPartitions: -5 },
          { name: topicName('np2'), numPartitions: 1_000_000 },
          { name: topicName('cfg'), numPartitions: 1, configs: { 'retention.ms': 'forever' } },
          { name: topicName('cfg2'), numPartitions: 1, configs: { 'no.such.key': '1' } },
          { name: good, numPartitions: 2, configs: { 'flush.policy': 'always' } },
        ],
      },
    });
    expect(r.createTopics!.results.map((x) => mq.ErrorCode[x.errorCode])).toEqual([
      'INVALID_TOPIC',
      'INVALID_TOPIC',
      'INVALID_TOPIC',
      'TOPIC_ALREADY_EXISTS',
      'INVALID_REPLICATION_FACTOR',
      'INVALID_PARTITIONS',
      'INVALID_PARTITIONS',
      'INVALID_CONFIG',
      'INVALID_CONFIG',
      'NONE',
    ]);
    expect(r.createTopics!.results[4]!.errorMessage).toMatch(/larger than the number of live brokers/);
    const md = await c.request({ metadata: { topics: [good] } });
    expect(md.metadata!.topics[0]!.partitions).toHaveLength(2);
  });

  it('validate_only checks without creating', async () => {
    const name = topicName('vo');
    const r = await c.request({ createTopics: { topics: [{ name, numPartitions: 1 }], validateOnly: true } });
    expect(r.createTopics!.results[0]!.errorCode).toBe(0);
    const md = await c.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
  });

  it('warns about . and _ in names and refuses a colliding name', async () => {
    const base = topicName('col');
    const r = await c.request({ createTopics: { topics: [{ name: `${base}.a`, numPartitions: 1 }] } });
    expect(r.createTopics!.results[0]!.warning).toMatch(/collide/);
    const clash = await c.request({ createTopics: { topics: [{ name: `${base}_a`, numPartitions: 1 }] } });
    expect(clash.createTopics!.results[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
  });

  it('only increases partitions, with a warning about keyed records', async () => {
    const name = topicName('cp');
    await createTopic(c, name, 2);
    const lower = await c.request({ createPartitions: { topics: [{ topic: name, count: 1 }] } });
    expect(lower.createPartitions!.results[0]!.errorCode).toBe(errorNumber('INVALID_PARTITIONS'));
    const same = await c.request({ createPartitions: { topics: [{ topic: name, count: 2 }] } });
    expect(same.createPartitions!.results[0]!.errorCode).toBe(errorNumber('INVALID_PARTITIONS'));
    const up = await c.request({ createPartitions: { topics: [{ topic: name, count: 4 }] } });
    expect(up.createPartitions!.results[0]!.errorCode).toBe(0);
    expect(up.createPartitions!.results[0]!.warning).toMatch(/key/);
    const md = await c.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.partitions).toHaveLength(4);
    const unknown = await c.request({ createPartitions: { topics: [{ topic: 'nope-nope', count: 4 }] } });
    expect(unknown.createPartitions!.results[0]!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
  });

  it('describes topic and broker configs with their sources', async () => {
    const name = topicName('dc');
    await createTopic(c, name, 1, { 'retention.ms': '60000' });
    const r = await c.request({ describeConfigs: { topics: [name, 'missing-topic'], includeBroker: true } });
    const [topic, missing, broker] = r.describeConfigs!.results;
    const entry = (n: string) => topic!.entries.find((e) => e.name === n);
    expect(entry('retention.ms')).toMatchObject({ value: '60000', source: 'topic' });
    expect(entry('flush.policy')).toMatchObject({ value: 'interval', source: 'default' });
    expect(missing!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
    expect(broker!.resource).toBe('');
    expect(broker!.entries.find((e) => e.name === 'num.partitions')).toMatchObject({ value: '1', source: 'default' });
  });

  it('deletes a topic and its files', async () => {
    const { readdir } = await import('node:fs/promises');
    const name = topicName('del');
    await createTopic(c, name, 2);
    const logs = path.join(t.dataDir, 'cluster-logs');
    expect((await readdir(logs)).filter((d) => d.startsWith(`${name}-`) && !d.endsWith('.hw'))).toHaveLength(2);
    const r = await c.request({ deleteTopics: { topics: [name, 'never-existed'] } });
    expect(r.deleteTopics!.results.map((x) => mq.ErrorCode[x.errorCode])).toEqual(['NONE', 'UNKNOWN_TOPIC_OR_PARTITION']);
    expect((await readdir(logs)).filter((d) => d.startsWith(name))).toEqual([]);
    // The name can be used again, with fresh data.
    await createTopic(c, name, 1);
  });
});

describe('auto.create.topics.enable', () => {
  it('creates a topic named in Metadata only when enabled', async () => {
    const on = await startTestBroker({ 'auto.create.topics.enable': 'true', 'num.partitions': '3' });
    const c = await TestClient.connect(on.url);
    const name = topicName('auto');
    const r = await c.request({ metadata: { topics: [name] } });
    expect(r.metadata!.topics[0]).toMatchObject({ name, errorCode: 0 });
    expect(r.metadata!.topics[0]!.partitions).toHaveLength(3);
    const bad = await c.request({ metadata: { topics: ['not valid!'] } });
    expect(bad.metadata!.topics[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    await c.close();
    await on.cleanup();
  });
});

describe('internal topics', () => {
  it('lists __consumer_offsets only on request and refuses client writes, deletes and resizes', async () => {
    const t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    // The group coordinator creates it on the first FindCoordinator.
    await waitFor(async () => (await c.request({ findCoordinator: { key: 'g' } })).findCoordinator!.errorCode === 0, 10_000);
    const named = await c.request({ metadata: { topics: ['__consumer_offsets'] } });
    expect(named.metadata!.topics[0]).toMatchObject({ errorCode: 0, internal: true });
    const withInternal = await c.request({ metadata: { includeInternal: true } });
    expect(withInternal.metadata!.topics.map((x) => x.name)).toContain('__consumer_offsets');
    const all = await c.request({ metadata: {} });
    expect(all.metadata!.topics.map((x) => x.name)).not.toContain('__consumer_offsets');
    const http = await httpJson(`${t.httpUrl}/topics`);
    expect(http.body.map((x: { name: string }) => x.name)).not.toContain('__consumer_offsets');
    expect((await httpJson(`${t.httpUrl}/topics?include_internal=true`)).body.map((x: { name: string }) => x.name)).toContain('__consumer_offsets');
    expect((await httpJson(`${t.httpUrl}/topics/__consumer_offsets/records`, { body: { value: 'x' } })).status).toBe(400);
    expect((await httpJson(`${t.httpUrl}/topics/__consumer_offsets`, { method: 'DELETE' })).status).toBe(400);
    const created = await c.request({ createTopics: { topics: [{ name: '__transaction_state', numPartitions: 1 }] } });
    expect(created.createTopics!.results[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    const deleted = await c.request({ deleteTopics: { topics: ['__consumer_offsets'] } });
    expect(deleted.deleteTopics!.results[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    const resized = await c.request({ createPartitions: { topics: [{ topic: '__consumer_offsets', count: 500 }] } });
    expect(resized.createPartitions!.results[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    const { encodeBatchSync } = await import('@mq/protocol/batch');
    const produced = await c.request({
      produce: { acks: 1, topics: [{ name: '__consumer_offsets', partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'x' }]) }] }] },
    });
    expect(produced.produce!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    await c.close();
    await t.cleanup();
  });
});
