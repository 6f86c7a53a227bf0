// Encode/decode micro-benchmark (no network): the client's batch builder and
// lazy decoder side by side with @mq/protocol's generic codec and kafkajs's
// record batch encoder/decoder. Cases run interleaved, round by round, so
// machine load affects them alike; figures are medians.
// Run: npm run build -w @mq/client && node packages/client/bench/encode.bench.mjs
import { createRequire } from 'node:module';
import { encodeBatchSync, decodeBatchSync } from '@mq/protocol/batch';
import { BatchBuilder, measureRecord } from '../dist/producer/batch-builder.js';
import { coarseNow as recordNow } from '../dist/coarse-clock.js';
import { CompletedFetch } from '../dist/consumer/record-decoder.js';

const require = createRequire(import.meta.url);
const KafkaRecord = require('kafkajs/src/protocol/recordBatch/record/v0/index.js');
const { RecordBatch: KafkaRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js');
const KafkaDecoder = require('kafkajs/src/protocol/decoder.js');
const kafkaBatchDecoder = require('kafkajs/src/protocol/recordBatch/v0/decoder.js');

const N = Number(process.env.N ?? 200_000);
const VALUE_BYTES = Number(process.env.VALUE_BYTES ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const value = 'v'.repeat(VALUE_BYTES);
const records = Array.from({ length: N }, (_, i) => ({ key: `key-${i % 1000}`, value }));
const sink = { ok() {}, fail() {} };

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/** Runs every case once per round, interleaved (so machine load hits all alike); median records/s per case. */
async function benchAll(cases) {
  const rates = cases.map(() => []);
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const [i, [, fn]] of cases.entries()) {
      // CPU time, not wall time: less disturbed by other load on a shared machine.
      const c0 = process.cpuUsage();
      await fn();
      const c = process.cpuUsage(c0);
      if (r > 0) rates[i].push(N / ((c.user + c.system) / 1e6)); // the first round warms up
    }
  }
  return cases.map(([name], i) => ({ name, recordsPerSec: median(rates[i]) }));
}

// N records into 64 KiB batches (about 450 records of ~140 bytes each).
const BATCH = 64 * 1024;
const perBatch = Math.floor(BATCH / (VALUE_BYTES + 40));
const buf = Buffer.allocUnsafe(BATCH);
const fetched = [];
for (let i = 0; i < N; i += perBatch) fetched.push(encodeBatchSync(records.slice(i, i + perBatch)));
const fetchBuf = Buffer.concat(fetched);

const results = await benchAll([
  [
    'encode: client BatchBuilder (in place, as send() does)',
    () => {
      let b = new BatchBuilder(buf, 't', 0, Date.now());
      for (let i = 0; i < N; i++) {
        const r = records[i];
        const size = measureRecord(r);
        if (!b.tryAppend(r, size, recordNow(), sink, i)) {
          b.close('none');
          b = new BatchBuilder(buf, 't', 0, Date.now());
          b.tryAppend(r, measureRecord(r), recordNow(), sink, i);
        }
      }
      b.close('none');
    },
  ],
  [
    'encode: @mq/protocol encodeBatchSync',
    () => {
      for (let i = 0; i < N; i += perBatch) encodeBatchSync(records.slice(i, i + perBatch));
    },
  ],
  [
    'encode: kafkajs RecordBatch',
    async () => {
      for (let i = 0; i < N; i += perBatch) {
        const now = Date.now();
        const recs = records.slice(i, i + perBatch).map((r, j) => KafkaRecord({ offsetDelta: j, timestampDelta: 0, key: r.key, value: r.value, headers: {} }));
        (await KafkaRecordBatch({ firstTimestamp: now, maxTimestamp: now, lastOffsetDelta: recs.length - 1, records: recs })).buffer;
      }
    },
  ],
  [
    'decode: client CompletedFetch.drain (CRC checked, values read)',
    async () => {
      const f = new CompletedFetch('t', 0, fetchBuf, 0, 0, true);
      const out = [];
      let bytes = 0;
      while (!f.done) {
        out.length = 0;
        await f.drain(out, 500, 0);
        for (const r of out) bytes += r.value.length; // read every value, as an application does
      }
      if (bytes === 0) throw new Error('nothing decoded');
    },
  ],
  [
    'decode: @mq/protocol decodeBatchSync',
    () => {
      let pos = 0;
      let bytes = 0;
      for (const b of fetched) {
        for (const r of decodeBatchSync(fetchBuf, pos).records) bytes += r.value.length;
        pos += b.length;
      }
      if (bytes === 0) throw new Error('nothing decoded');
    },
  ],
  [
    'decode: kafkajs RecordBatch decoder',
    async () => {
      let bytes = 0;
      for (const b of fetched) for (const r of (await kafkaBatchDecoder(new KafkaDecoder(b))).records) bytes += r.value.length;
      if (bytes === 0) throw new Error('nothing decoded');
    },
  ],
]);

const width = Math.max(...results.map((r) => r.name.length));
console.log(`records: ${N} x (${VALUE_BYTES} B value, ~8 B key), median of ${ROUNDS} interleaved rounds, node ${process.version}`);
for (const r of results) console.log(`${r.name.padEnd(width)}  ${(r.recordsPerSec / 1e6).toFixed(2)} M records per CPU-second`);
const [ec, ep, ek, dc, dp, dk] = results.map((r) => r.recordsPerSec);
console.log(`encode: client / protocol = ${(ec / ep).toFixed(2)}x, client / kafkajs = ${(ec / ek).toFixed(2)}x`);
console.log(`decode: client / protocol = ${(dc / dp).toFixed(2)}x, client / kafkajs = ${(dc / dk).toFixed(2)}x`);
