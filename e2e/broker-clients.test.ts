/**
 * One real broker, three surfaces: records produced with @mq/client land on
 * the partition Kafka's default partitioner picks (cross-checked with
 * kafkajs), keep per-partition order, are read identically by two
 * independent consumers and by the HTTP API, and records produced over HTTP
 * reach the client consumer.
 */
import { createRequire } from 'node:module';
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

const require = createRequire(import.meta.url);
const kafkaMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer) => number;

describe('broker served to the client and HTTP (real process)', () => {
  let broker: BrokerProcess;
  const clients: MqClient[] = [];
  const client = () => {
    const c = new MqClient({ bootstrap: broker.bootstrap, clientId: 'e2e-broker-clients' });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    broker = await startBroker();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await cleanup();
  });

  it('keyed placement, per-partition order, two independent consumers, and HTTP agree', async () => {
    const topic = uniqueName('surfaces');
    const partitions = 4;
    const producerClient = client();
    await producerClient.admin().createTopic(topic, { numPartitions: partitions, replicationFactor: 1 });
    const producer = producerClient.producer({ acks: 'all', lingerMs: 2 });
    const sent: Array<{ key: string; value: string; partition: number; offset: number }> = [];
    const sends: Array<Promise<void>> = [];
    for (let i = 0; i < 200; i++) {
      const key = `key-${i % 23}`;
      const value = `value-${i}`;
      sends.push(
        producer.send(topic, { key, value }).then((m) => {
          sent.push({ key, value, partition: m.partition, offset: m.offset });
        }),
      );
    }
    await Promise.all(sends);
    await producer.flush();

    expect(new Set(sent.map((s) => s.partition)).size).toBe(partitions);
    // The partition Kafka's default partitioner gives.
    for (const s of sent) expect([s.key, s.partition]).toEqual([s.key, (kafkaMurmur2(Buffer.from(s.key)) & 0x7fffffff) % partitions]);
    // Per key (hence per partition), offsets follow send order.
    const byKey = new Map<string, number[]>();
    for (const s of [...sent].sort((a, b) => Number(a.value.slice(6)) - Number(b.value.slice(6)))) {
      byKey.set(s.key, [...(byKey.get(s.key) ?? []), s.offset]);
    }
    for (const offsets of byKey.values()) expect(offsets).toEqual([...offsets].sort((a, b) => a - b));

    const expected = (p: number) =>
      sent
        .filter((s) => s.partition === p)
        .sort((a, b) => a.offset - b.offset)
        .map((s) => `${s.offset}:${s.key}:${s.value}`);

    // Two independent consumers read the same records.
    const readAll = async () => {
      const consumer = client().consumer({ autoOffsetReset: 'earliest' });
      consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));
      const got = new Map<number, string[]>();
      await waitFor(
        async () => {
          for (const r of await consumer.poll(500)) {
            got.set(r.partition, [...(got.get(r.partition) ?? []), `${r.offset}:${r.key}:${r.value}`]);
          }
          return [...got.values()].reduce((n, l) => n + l.length, 0) >= sent.length;
        },
        { timeout: 20_000, message: 'consumer did not read every record' },
      );
      await consumer.close();
      return got;
    };
    const [a, b] = await Promise.all([readAll(), readAll()]);
    for (let p = 0; p < partitions; p++) {
      expect(a.get(p) ?? []).toEqual(expected(p));
      expect(b.get(p) ?? []).toEqual(expected(p));
    }

    // The HTTP API shows the same records.
    const p0 = sent[0]!.partition;
    const page = (await (await fetch(`${broker.httpUrl}/topics/${topic}/partitions/${p0}/records?offset=0`)).json()) as {
      records: Array<{ offset: number; key: string; value: string }>;
    };
    expect(page.records.map((r) => `${r.offset}:${r.key}:${r.value}`)).toEqual(expected(p0));

    // And what HTTP writes, the client reads.
    const res = await fetch(`${broker.httpUrl}/topics/${topic}/records`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'from-http', value: 'hello client', partition: 3 }),
    });
    const { offset } = (await res.json()) as { offset: number };
    const consumer = client().consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([{ topic, partition: 3, offset }]);
    const got = await waitFor(async () => {
      const rs = await consumer.poll(500);
      return rs.length > 0 ? rs : undefined;
    });
    const rec = got![0];
    expect([rec!.key?.toString(), rec!.value?.toString(), rec!.offset]).toEqual(['from-http', 'hello client', offset]);
    await consumer.close();
  });
});
