/**
 * Existing data keeps working (issue 13): fixtures/single-broker-v1 is a data
 * directory written by the single broker before it became a one-node
 * cluster (made by tools/make-single-broker-fixture.mjs, whose run it
 * mirrors). A copy of it opens with the broker built now, as a real `mq
 * broker start` process, with nothing lost: topics and their configs,
 * records (keys, values, headers, timestamps) at their offsets, the group's
 * committed offsets, the idempotent producer's batches, and producer ids
 * above every one handed out before. (The partitions' producer state is not
 * checked by behaviour: it expires producer.id.expiration.ms after the
 * records' timestamps, as Kafka's does, so a checked-in fixture outlives it.)
 */
import { cp } from 'node:fs/promises';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { decodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { cleanup, makeTempDir, REPO_ROOT, startBroker } from './src/harness.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

const FIXTURE = path.join(REPO_ROOT, 'e2e', 'fixtures', 'single-broker-v1');
/** What the fixture script wrote (see tools/make-single-broker-fixture.mjs). */
const BASE_TS = 1_700_000_000_000;
const FIXTURE_PRODUCER_ID = 0;
const PRODUCER_ID_BLOCK_END = 1000;

interface Rec {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
}

function expectedOrders(partition: number): Rec[] {
  const out: Rec[] = [];
  for (let b = 0; b < 4; b++) {
    for (let i = 0; i < 3; i++) {
      out.push({
        offset: b * 3 + i,
        timestamp: BASE_TS + b * 1000 + i,
        key: `k${partition}-${b}-${i}`,
        value: `order ${partition}/${b}/${i}`,
        headers: { batch: String(b), source: 'fixture' },
      });
    }
  }
  return out;
}

const EXPECTED_ACCOUNTS: Rec[] = [
  { offset: 0, timestamp: BASE_TS + 10_000, key: 'alice', value: 'v1', headers: {} },
  { offset: 1, timestamp: BASE_TS + 10_001, key: 'bob', value: 'v1', headers: {} },
  { offset: 2, timestamp: BASE_TS + 10_002, key: 'alice', value: 'v2', headers: {} },
  { offset: 3, timestamp: BASE_TS + 10_003, key: 'carol', value: null, headers: {} },
];

/** Every record of the partition with its batch's producer id and sequence, read over the raw wire. */
async function readAll(c: TestClient, topic: string, partition: number): Promise<{ records: Rec[]; producerIds: Set<number>; highWatermark: number }> {
  const records: Rec[] = [];
  const producerIds = new Set<number>();
  let offset = 0;
  for (;;) {
    const r = await c.request({ fetch: { maxBytes: 1 << 20, topics: [{ name: topic, partitions: [{ partition, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }] } });
    const p = r.fetch!.topics[0]!.partitions[0]!;
    if (p.errorCode !== 0) throw new Error(`fetch ${topic}-${partition} failed: ${p.errorMessage}`);
    const buf = Buffer.from(p.records);
    let progressed = false;
    for (const span of iterateBatches(buf)) {
      const batch = decodeBatchSync(buf, span.position);
      producerIds.add(Number(batch.header.producerId));
      for (const rec of batch.records) {
        if (rec.offset < offset) continue;
        records.push({
          offset: rec.offset,
          timestamp: rec.timestamp,
          key: rec.key === null ? null : rec.key.toString(),
          value: rec.value === null ? null : rec.value.toString(),
          headers: Object.fromEntries(rec.headers.map((h) => [h.key, h.value === null ? '' : Buffer.from(h.value).toString()])),
        });
        offset = rec.offset + 1;
        progressed = true;
      }
    }
    if (!progressed || offset >= Number(p.highWatermark)) return { records, producerIds, highWatermark: Number(p.highWatermark) };
  }
}

afterAll(async () => {
  await cleanup();
});

describe('a data directory written by the single broker before issue 13', () => {
  it('opens intact: topics, configs, records, committed offsets and producer ids', async () => {
    const dataDir = await makeTempDir('mq-fixture-');
    await cp(FIXTURE, dataDir, { recursive: true });
    const broker = await startBroker({ dataDir });
    const url = `ws://127.0.0.1:${broker.port}`;
    const client = new MqClient({ bootstrap: [broker.bootstrap], clientId: 'fixture-check' });
    const c = await TestClient.connect(url);
    try {
      await client.connect();
      const admin = client.admin();
      expect((await admin.listTopics()).filter((t) => !t.startsWith('__')).sort()).toEqual(['accounts', 'orders']);
      const [orders, accounts] = await admin.describeTopics(['orders', 'accounts']);
      expect(orders!.partitions).toHaveLength(2);
      expect(accounts!.partitions).toHaveLength(1);
      const dc = await c.request({ describeConfigs: { topics: ['orders', 'accounts'] } });
      const configs = dc.describeConfigs!.results.map((r) => Object.fromEntries(r.entries.map((e) => [e.name, e.value])));
      expect(configs[0]).toMatchObject({ 'retention.ms': '604800000', 'max.message.bytes': '65536' });
      expect(configs[1]).toMatchObject({ 'cleanup.policy': 'compact', 'delete.retention.ms': '3600000' });
      // The broker configuration kept with the data still applies.
      const broker0 = await c.request({ describeConfigs: { topics: [], includeBroker: true } });
      const brokerCfg = Object.fromEntries(broker0.describeConfigs!.results.at(-1)!.entries.map((e) => [e.name, e.value]));
      expect(brokerCfg['log.segment.bytes']).toBe('2048');

      for (const partition of [0, 1]) {
        const got = await readAll(c, 'orders', partition);
        expect(got.records).toEqual(expectedOrders(partition));
        expect(got.highWatermark).toBe(12);
        expect([...got.producerIds]).toEqual([FIXTURE_PRODUCER_ID]);
      }
      const acc = await readAll(c, 'accounts', 0);
      expect(acc.records).toEqual(EXPECTED_ACCOUNTS);

      const group = await client.groups().describeGroup('fixture-group');
      expect(group.offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: o.committedOffset, metadata: o.metadata }))).toEqual([
        { topic: 'accounts', partition: 0, offset: 2, metadata: '' },
        { topic: 'orders', partition: 0, offset: 5, metadata: 'm0' },
        { topic: 'orders', partition: 1, offset: 12, metadata: '' },
      ]);

      // New producer ids come after the block the old broker had taken.
      const init = await c.request({ initProducerId: { transactionalId: '' } });
      expect(init.initProducerId!.errorCode).toBe(0);
      expect(Number(init.initProducerId!.producerId)).toBeGreaterThanOrEqual(PRODUCER_ID_BLOCK_END);
    } finally {
      await c.close().catch(() => undefined);
      await client.close();
    }
    expect(await broker.stop()).toBe(0);
  });
});
