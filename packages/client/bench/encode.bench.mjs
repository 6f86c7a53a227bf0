// Encode/decode micro-benchmark (no network): the client's batch builder and
// lazy decoder side by side with @mq/protocol's generic codec and kafkajs's
// record batch encoder/decoder. Run: npm run build -w @mq/client && node packages/client/bench/encode.bench.mjs
import { createRequire } from 'node:module';
import { encodeBatchSync, decodeBatchSync } from '@mq/protocol/batch';
import { BatchBuilder, measureRecord } from '../dist/producer/batch-builder.js';
import { recordNow } from '../dist/producer/record-clock.js';
import { CompletedFetch } from '../dist/consumer/record-decoder.js';

const require = createRequire(import.meta.url);
const KafkaRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js');
const { RecordBatch: KafkaRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js');
const kafkaDecoder = require('kafkajs/src/protocol/decoder.js');
const kafkaBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder.js');

const N = Number(process.env.N ?? 200_000);
const VALUE_BYTES = Number(process.env.VALUE_BYTES ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const value = 'v'.repeat(VALUE_BYTES);
const records = Array.from({ length: N }, (_, i) => ({ key: `key-${i % 1000}`, value }));
const sink = { ok() {}, fail() {} };

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function bench(name, fn) {
  const rates = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t = process.hrtime.bigint();
    await fn();
    const s = Number(process.hrtime.bigint() - t) / 1e9;
    if (r > 0) rates.push(N / s); // first round warms up
  }
  return { name, recordsPerSec: median(rates) };
}

// Encoders: N records into 64 KiB batches (about 450 records of ~140 bytes each).
const BATCH = 64 * 1024;
const perBatch = Math.floor(BATCH / (VALUE_BYTES + 40));
const buf = Buffer.allocUnsafe(BATCH);

const results = [];
results.push(
  await bench('client BatchBuilder (encode in place)', () => {
    let b = new BatchBuilder(buf, 't', 0, Date.now());
    for (let i = 0; i < N; i++) {
      const r = records[i];
      const size = measureRecord(r);
      if (!b.tryAppend(r, size, recordNow(), sink, 0)) {
        b.close('none');
        b = new BatchBuilder(buf, 't', 0, Date.now());
        b.tryAppend(r, measureRecord(r), recordNow(), sink, 0);
      }
    }
    b.close('none');
  }),
);
results.push(
  await bench('@mq/protocol encodeBatchSync', () => {
    for (let i = 0; i < N; i += perBatch) encodeBatchSync(records.slice(i, i + perBatch));
  }),
);
results.push(
  await bench('kafkajs RecordBatch encoder', async () => {
    for (let i = 0; i < N; i += perBatch) {
      const now = Date.now();
      const recs = records.slice(i, i + perBatch).map((r, j) => KafkaRecord({ offsetDelta: j, timestampDelta: 0, key: r.key, value: r.value, headers: {} }));
      const batch = await KafkaRecordBatch({ firstTimestamp: now, maxTimestamp: now, lastOffsetDelta: recs.length - 1, records: recs });
      batch.buffer;
    }
  }),
);

// Decoders: the same records as fetched batches.
const fetched = [];
for (let i = 0; i < N; i += perBatch) fetched.push(encodeBatchSync(records.slice(i, i + perBatch)));
const fetchBuf = Buffer.concat(fetched);
results.push(
  await bench('client CompletedFetch.drain (CRC checked, values read)', async () => {
    const f = new CompletedFetch('t', 0, fetchBuf, 0, 0, true);
    const out = [];
    let bytes = 0;
    while (!f.done) {
      out.length = 0;
      await f.drain(out, 500, 0);
      for (const r of out) bytes += r.value.length; // read every value, as an application does
    }
    if (bytes === 0) throw new Error('nothing decoded');
  }),
);
results.push(
  await bench('@mq/protocol decodeBatchSync', () => {
    let pos = 0;
    let bytes = 0;
    for (const b of fetched) {
      for (const r of decodeBatchSync(fetchBuf, pos).records) bytes += r.value.length;
      pos += b.length;
    }
    if (bytes === 0) throw new Error('nothing decoded');
  }),
);
// kafkajs decodes batches of a fetch response the same way (RecordBatchDecoder over each batch).
results.push(
  await bench('kafkajs RecordBatch decoder', async () => {
    let bytes = 0;
    for (const b of fetched) for (const r of (await kafkaBatchDecoder(new kafkaDecoder(b))).records) bytes += r.value.length;
    if (bytes === 0) throw new Error('nothing decoded');
  }),
);

const width = Math.max(...results.map((r) => r.name.length));
console.log(`records: ${N} x (${VALUE_BYTES} B value, ~8 B key), median of ${ROUNDS} rounds, node ${process.version}`);
for (const r of results) console.log(`${r.name.padEnd(width)}  ${(r.recordsPerSec / 1e6).toFixed(2)} M records/s`);
const enc = results.slice(0, 3);
const dec = results.slice(3);
console.log(`encode: client / protocol = ${(enc[0].recordsPerSec / enc[1].recordsPerSec).toFixed(2)}x, client / kafkajs = ${(enc[0].recordsPerSec / enc[2].recordsPerSec).toFixed(2)}x`);
console.log(`decode: client / protocol = ${(dec[0].recordsPerSec / dec[1].recordsPerSec).toFixed(2)}x, client / kafkajs = ${(dec[0].recordsPerSec / dec[2].recordsPerSec).toFixed(2)}x`);
