#!/usr/bin/env node
// Writes a data directory with the single broker as it is built now, for the
// fixture test that opens it with later brokers (issue 13: existing data
// keeps working). e2e/fixtures/single-broker-v1 was written by the single
// broker of before issue 13 (built from commit 8eb4766 or earlier); built
// from today's sources this writes a one-node cluster's directory instead
// (a v2 fixture, should the cluster layout ever change). Run after
// `npm run build`:
//
//   node tools/make-single-broker-fixture.mjs <out-dir>
//
// The directory gets: a plain topic with two partitions and topic configs, a
// compacted topic, records with keys, headers, null values and fixed
// timestamps in several batches from an idempotent producer (so producer ids
// and producer state exist), a group's committed offsets (one with metadata),
// and a clean shutdown. What it wrote is printed as JSON (the test's
// expectations are written from it).
import { mkdir, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import { startBroker } from '@mq/broker';
import { MqClient } from '@mq/client';

const out = process.argv[2];
if (!out) {
  console.error('usage: node tools/make-single-broker-fixture.mjs <out-dir>');
  process.exit(2);
}
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });

const BASE_TS = 1_700_000_000_000;
const broker = await startBroker(
  {
    dataDir: out,
    port: 0,
    httpPort: 0,
    // One __consumer_offsets partition and small segments keep the fixture small (and give a roll).
    config: { 'offsets.topic.num.partitions': '1', 'log.segment.bytes': '2048', 'log.flush.policy': 'always' },
  },
  { logger: pino({ level: 'warn' }) },
);
const client = new MqClient({ bootstrap: [`127.0.0.1:${broker.port}`], clientId: 'fixture' });
try {
  await client.connect();
  const admin = client.admin();
  await admin.createTopic('orders', { numPartitions: 2, configs: { 'retention.ms': '604800000', 'max.message.bytes': '65536' } });
  await admin.createTopic('accounts', { numPartitions: 1, configs: { 'cleanup.policy': 'compact', 'delete.retention.ms': '3600000' } });

  const producer = client.producer({ idempotent: true, acks: 'all', lingerMs: 0 });
  const written = [];
  // Several batches per partition: one sendBatch call is one batch.
  for (let b = 0; b < 4; b++) {
    for (const partition of [0, 1]) {
      const records = Array.from({ length: 3 }, (_, i) => ({
        partition,
        key: `k${partition}-${b}-${i}`,
        value: `order ${partition}/${b}/${i}`,
        headers: { batch: String(b), source: 'fixture' },
        timestamp: BASE_TS + b * 1000 + i,
      }));
      const md = await producer.sendBatch('orders', records);
      md.forEach((m, i) => written.push({ topic: 'orders', partition: m.partition, offset: m.offset, key: records[i].key, value: records[i].value, headers: records[i].headers }));
    }
  }
  const accounts = [
    { key: 'alice', value: 'v1' },
    { key: 'bob', value: 'v1' },
    { key: 'alice', value: 'v2' },
    { key: 'carol', value: null },
  ];
  for (const [i, r] of accounts.entries()) {
    const [m] = await producer.sendBatch('accounts', [{ ...r, partition: 0, timestamp: BASE_TS + 10_000 + i }]);
    written.push({ topic: 'accounts', partition: 0, offset: m.offset, key: r.key, value: r.value, headers: {} });
  }
  await producer.close();

  await client.groups().commitOffsets('fixture-group', [
    { topic: 'orders', partition: 0, offset: 5, metadata: 'm0' },
    { topic: 'orders', partition: 1, offset: 12 },
    { topic: 'accounts', partition: 0, offset: 2 },
  ]);
  console.log(JSON.stringify({ written }, null, 1));
} finally {
  await client.close();
  await broker.close();
}
// The lock file belongs to the run, not to the fixture.
for (const f of await readdir(out)) if (f === '.lock' || f === 'lock') await rm(path.join(out, f), { force: true });
