/**
 * @mq/client against the real `mq broker start` process: produce/consume
 * round trips with every codec, Kafka-compatible key placement, two
 * independent consumers, HTTP interplay, offset resets, and the client's
 * errors for a user's mistakes.
 */
import { createRequire } from 'node:module';
import { MqClient, type ConsumerRecord } from '@mq/client';
import { cleanup, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const require = createRequire(import.meta.url);
const { Partitioners } = require('kafkajs') as {
  Partitioners: {
    DefaultPartitioner: () => (a: { topic: string; partitionMetadata: Array<{ partitionId: number; leader: number }>; message: { key: Buffer } }) => number;
  };
};

let broker: BrokerProcess;
const clients: MqClient[] = [];
function client(): MqClient {
  const c = new MqClient({ bootstrap: broker.bootstrap, clientId: 'e2e-client' });
  clients.push(c);
  return c;
}

beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close({ timeoutMs: 1000 }).catch(() => undefined)));
  await cleanup();
});

async function readAll(c: MqClient, topic: string, partitions: number, expected: number, timeoutMs = 10_000): Promise<ConsumerRecord[]> {
  const consumer = c.consumer({ autoOffsetReset: 'earliest' });
  consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
  const out: ConsumerRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < expected && Date.now() < deadline) out.push(...(await consumer.poll(250)));
  await consumer.close();
  return out;
}

describe('client round trip through a real broker', () => {
  it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const)('produces and consumes with %s, at the acknowledged offsets, in per-partition order', async (compression) => {
    const topic = uniqueName(`rt-${compression}`);
    const c = client();
    await c.admin().createTopic(topic, { numPartitions: 3 });
    const producer = c.producer({ compression, lingerMs: 2, acks: 'all' });
    const records = Array.from({ length: 600 }, (_, i) => ({ key: `key-${i % 13}`, value: `value-${i}-${'x'.repeat(i % 50)}`, headers: { seq: `${i}` } }));
    const acked = await producer.sendBatch(topic, records);
    const got = await readAll(c, topic, 3, 600);
    expect(got).toHaveLength(600);
    const byOffset = new Map(got.map((r) => [`${r.partition}:${r.offset}`, r]));
    acked.forEach((m, i) => {
      const r = byOffset.get(`${m.partition}:${m.offset}`)!;
      expect(r.value!.toString()).toBe(records[i]!.value);
      expect(r.key!.toString()).toBe(records[i]!.key);
      expect(r.headers).toEqual([{ key: 'seq', value: Buffer.from(`${i}`) }]);
    });
    for (let p = 0; p < 3; p++) {
      const seqs = got.filter((r) => r.partition === p).map((r) => Number(r.headers[0]!.value!.toString()));
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it('puts each key on the partition Kafka\'s default partitioner gives, for a table of known keys, also over HTTP', async () => {
    const topic = uniqueName('keys');
    const n = 6;
    const c = client();
    await c.admin().createTopic(topic, { numPartitions: n });
    const kafkajs = Partitioners.DefaultPartitioner();
    const partitionMetadata = Array.from({ length: n }, (_, i) => ({ partitionId: i, leader: 0 }));
    const keys = ['', 'a', 'order-1', 'order-2', 'user:1001', 'ключ', '日本', 'x'.repeat(100), 'foobar', '21'];
    const producer = c.producer({ lingerMs: 0 });
    for (const key of keys) {
      const expected = kafkajs({ topic, partitionMetadata, message: { key: Buffer.from(key) } });
      const first = await producer.send(topic, { key, value: 'one' });
      const second = await producer.send(topic, { key, value: 'two' });
      expect([key, first.partition, second.partition]).toEqual([key, expected, expected]);
      const res = await fetch(`${broker.httpUrl}/topics/${topic}/records`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key, value: 'http' }),
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { partition: number }).partition).toBe(expected);
    }
  });

  it('two independent consumers read the same records, and the HTTP API shows them too', async () => {
    const topic = uniqueName('two');
    const c = client();
    await c.admin().createTopic(topic, { numPartitions: 2 });
    await c.producer({ lingerMs: 0 }).sendBatch(topic, Array.from({ length: 100 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })));
    const a = await readAll(client(), topic, 2, 100);
    const b = await readAll(client(), topic, 2, 100);
    const ids = (rs: ConsumerRecord[]) => rs.map((r) => `${r.partition}/${r.offset}/${r.value}`).sort();
    expect(a).toHaveLength(100);
    expect(ids(a)).toEqual(ids(b));
    const res = await fetch(`${broker.httpUrl}/topics/${topic}/partitions/1/records?offset=0`);
    const body = (await res.json()) as { records: Array<{ offset: number; value: string }> };
    expect(body.records.map((r) => `1/${r.offset}/${r.value}`)).toEqual(ids(a).filter((s) => s.startsWith('1/')).sort((x, y) => Number(x.split('/')[1]) - Number(y.split('/')[1])));
  });

  it('records produced over HTTP reach the client consumer', async () => {
    const topic = uniqueName('http-in');
    const c = client();
    await c.admin().createTopic(topic, { numPartitions: 1 });
    const res = await fetch(`${broker.httpUrl}/topics/${topic}/records`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ key: 'k', value: 'hello', headers: { h: 'v' } }, { value: 'world' }]),
    });
    expect(res.status).toBe(200);
    const got = await readAll(c, topic, 1, 2);
    expect(got.map((r) => [r.offset, r.key?.toString() ?? null, r.value!.toString()])).toEqual([
      [0, 'k', 'hello'],
      [1, null, 'world'],
    ]);
    expect(got[0]!.headers).toEqual([{ key: 'h', value: Buffer.from('v') }]);
  });

  it('seeks, resets by policy, reports watermarks, and refuses out-of-range offsets with autoOffsetReset none', async () => {
    const topic = uniqueName('seek');
    const c = client();
    const admin = c.admin();
    await admin.createTopic(topic, { numPartitions: 1 });
    await c.producer({ lingerMs: 0 }).sendBatch(topic, Array.from({ length: 10 }, (_, i) => ({ value: `${i}` })));
    expect(await admin.watermarks(topic, 0)).toEqual({ low: 0, high: 10 });
    const latest = c.consumer({ autoOffsetReset: 'latest' });
    latest.assign([{ topic, partition: 0 }]);
    expect(await latest.position({ topic, partition: 0 })).toBe(10);
    latest.seek({ topic, partition: 0 }, 7);
    const after = await latest.poll(5000);
    expect(after.map((r) => r.value!.toString())).toEqual(['7', '8', '9']);
    const strict = c.consumer({ autoOffsetReset: 'none' });
    strict.assign([{ topic, partition: 0, offset: 1000 }]);
    await expect(strict.poll(5000)).rejects.toMatchObject({ code: 'OFFSET_OUT_OF_RANGE' });
    const reset = c.consumer({ autoOffsetReset: 'earliest' });
    reset.assign([{ topic, partition: 0, offset: 1000 }]);
    const fromStart = await reset.poll(5000);
    expect(fromStart[0]!.offset).toBe(0);
    await Promise.all([latest.close(), strict.close(), reset.close()]);
  });

  it('admin describes, adds partitions, lists and deletes topics', async () => {
    const topic = uniqueName('admin');
    const admin = client().admin();
    await admin.createTopic(topic, { numPartitions: 2, configs: { 'retention.ms': '3600000' } });
    const d = await admin.describeTopic(topic);
    expect(d.partitions.map((p) => [p.partition, p.replicas.length, p.isr.length, p.leader >= 0])).toEqual([
      [0, 1, 1, true],
      [1, 1, 1, true],
    ]);
    const [cfg] = await admin.describeConfigs({ topics: [topic] });
    expect(cfg!.entries.find((e) => e.name === 'retention.ms')).toMatchObject({ value: '3600000', source: 'topic' });
    const [added] = await admin.createPartitions([{ topic, count: 4 }]);
    expect(added!.warning).toMatch(/key/);
    expect((await admin.describeTopic(topic)).partitions).toHaveLength(4);
    expect(await admin.listTopics()).toContain(topic);
    await admin.deleteTopics([topic]);
    expect(await admin.listTopics()).not.toContain(topic);
    await expect(admin.describeTopic(topic)).rejects.toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
  });

  it('gives typed errors that say what to do', async () => {
    const c = client();
    const topic = uniqueName('dup');
    await c.admin().createTopic(topic);
    await expect(c.admin().createTopic(topic)).rejects.toMatchObject({ code: 'TOPIC_ALREADY_EXISTS', message: `topic "${topic}" already exists` });
    await expect(c.admin().createTopic('bad/name')).rejects.toMatchObject({ code: 'INVALID_TOPIC', retriable: false });
    await expect(c.producer().send('no-such-topic', { value: 'x' })).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic "no-such-topic" does not exist (create it with: mq topic create no-such-topic)',
    });
  });
});
