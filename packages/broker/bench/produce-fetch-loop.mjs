// A produce loop then a fetch loop against an in-process broker over a real
// WebSocket, for profiling (`node --cpu-prof bench/produce-fetch-loop.mjs`)
// and rough figures. Needs `npm run build -w @mq/broker` first.
// Usage: node bench/produce-fetch-loop.mjs [seconds=5] [recordsPerBatch=100] [valueBytes=100] [inFlight=16] [flush=os]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import WebSocket from 'ws';
import { encodeBatchSync } from '@mq/protocol/batch';
import { decodeResponse, encodeRequest } from '@mq/protocol/wire';
import { startBroker } from '../dist/index.js';

const [seconds = 5, perBatch = 100, valueBytes = 100, inFlight = 16] = process.argv.slice(2, 6).map(Number);
const flush = process.argv[6] ?? 'os';
const dir = await mkdtemp(path.join(tmpdir(), 'mq-broker-bench-'));
const broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0 }, { logger: pino({ level: 'warn' }) });
const ws = new WebSocket(`ws://127.0.0.1:${broker.port}`, { perMessageDeflate: false });
await new Promise((r) => ws.once('open', r));
const pending = new Map();
let next = 1;
ws.on('message', (d) => {
  const f = decodeResponse(d);
  const p = pending.get(f.correlationId);
  pending.delete(f.correlationId);
  p?.(f);
});
const request = (frame) =>
  new Promise((resolve) => {
    const id = next++;
    pending.set(id, resolve);
    ws.send(encodeRequest({ ...frame, correlationId: id }));
  });

const topic = 'bench';
await request({ createTopics: { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, configs: { 'flush.policy': flush } }] } });
const value = Buffer.alloc(valueBytes, 97);
const batch = encodeBatchSync(Array.from({ length: perBatch }, () => ({ value })));

let produced = 0;
let bytes = 0;
const t0 = performance.now();
const until = t0 + seconds * 1000;
async function producer() {
  while (performance.now() < until) {
    const r = await request({ produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records: Buffer.from(batch) }] }] } });
    if (r.produce.topics[0].partitions[0].errorCode !== 0) throw new Error(r.produce.topics[0].partitions[0].errorMessage);
    produced += perBatch;
    bytes += batch.length;
  }
}
await Promise.all(Array.from({ length: inFlight }, producer));
const produceMs = performance.now() - t0;

let fetched = 0;
let offset = 0;
const t1 = performance.now();
while (offset < produced) {
  const r = await request({ fetch: { maxBytes: 8 << 20, topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 4 << 20 }] }] } });
  const p = r.fetch.topics[0].partitions[0];
  const buf = Buffer.from(p.records);
  // Walk batch headers only (lastOffsetDelta at 23) to advance.
  let pos = 0;
  while (pos + 61 <= buf.length) {
    const size = buf.readInt32BE(pos + 8) + 12;
    if (pos + size > buf.length) break;
    const base = buf.readInt32BE(pos) * 2 ** 32 + buf.readUInt32BE(pos + 4);
    offset = base + buf.readInt32BE(pos + 23) + 1;
    fetched += buf.readInt32BE(pos + 57);
    pos += size;
  }
}
const fetchMs = performance.now() - t1;
const mb = bytes / 1024 / 1024;
console.log(
  JSON.stringify({
    flush,
    recordsPerBatch: perBatch,
    valueBytes,
    inFlight,
    produce: { records: produced, recordsPerSec: Math.round(produced / (produceMs / 1000)), MBps: +(mb / (produceMs / 1000)).toFixed(1) },
    fetch: { records: fetched, recordsPerSec: Math.round(fetched / (fetchMs / 1000)), MBps: +(mb / (fetchMs / 1000)).toFixed(1) },
  }),
);
ws.close();
await broker.close();
await rm(dir, { recursive: true, force: true });
