// Where produce latency goes: open-loop sends at RATE/s (or one at a time with
// RATE=0), printing latency percentiles per 250 ms window, so a start-up stall
// or a growing queue is visible, plus the producer's own stages.
// Usage: node latency-probe.mjs <broker dist dir>
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { MqClient } from '../dist/index.js';

// Counts the frames and bytes the client writes (produce requests, mostly).
let frames = 0;
let frameBytes = 0;
const wsSend = WebSocket.prototype.send;
WebSocket.prototype.send = function (data, ...rest) {
  frames++;
  frameBytes += data.length;
  return wsSend.call(this, data, ...rest);
};

const here = path.dirname(fileURLToPath(import.meta.url));
const BUCKET = Number(process.env.BUCKET ?? 250);
const RATE = Number(process.env.RATE ?? 75_000);
const SECONDS = Number(process.env.SECONDS ?? 4);
const LINGER = process.env.LINGER === undefined ? undefined : Number(process.env.LINGER);
const distDir = process.argv[2] ?? path.join(here, '../../broker/dist');
const dataDir = mkdtempSync(path.join(tmpdir(), 'lat-probe-'));
const child = spawn(process.execPath, [path.join(here, 'broker-child.mjs'), distDir, dataDir], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    const m = /port (\d+)/.exec(String(d));
    if (m) resolve(Number(m[1]));
  });
  child.once('exit', (c) => reject(new Error(`broker exited ${c}`)));
});
const client = new MqClient({ bootstrap: `127.0.0.1:${port}` });
try {
  const topic = `probe-${Date.now()}`;
  await client.admin().createTopics([{ topic, numPartitions: 1 }]);
  const po = { acks: 1 };
  if (LINGER !== undefined) po.lingerMs = LINGER;
  const producer = client.producer(po);
  const value = Buffer.alloc(100, 7);
  // WARM=n: n acknowledged sends before the clock starts (metadata, connection, first code paths).
  for (let i = 0; i < Number(process.env.WARM ?? 0); i++) await producer.send(topic, { value });
  // Preallocated: the probe itself must not grow the heap (a growing array of
  // results made the probe's own mark-compact pauses show up as latency).
  const cap = RATE === 0 ? 1_000_000 : Math.ceil(RATE * SECONDS) + 1;
  const atMs = new Float64Array(cap);
  const latMs = new Float64Array(cap);
  let n = 0;
  const t0 = performance.now();
  const frames0 = frames;
  const bytes0 = frameBytes;
  if (RATE === 0) {
    while (performance.now() - t0 < SECONDS * 1000 && n < cap) {
      const s = performance.now();
      await producer.send(topic, { value });
      atMs[n] = s - t0;
      latMs[n++] = performance.now() - s;
    }
  } else {
    const interval = 1000 / RATE;
    const total = cap - 1;
    let sent = 0;
    let done = 0;
    let allDone;
    const finished = new Promise((resolve) => (allDone = resolve));
    const record = { value };
    for (;;) {
      const now = performance.now();
      const due = Math.min(total, Math.floor((now - t0) / interval) + 1);
      while (sent < due) {
        const intended = sent * interval;
        producer.send(topic, record).then(() => {
          atMs[n] = intended;
          latMs[n++] = performance.now() - t0 - intended;
          if (++done === total) allDone();
        });
        sent++;
      }
      if (sent >= total) break;
      await new Promise((r) => setTimeout(r, 1));
    }
    await finished;
  }
  const q = (xs, p) => xs[Math.min(xs.length - 1, Math.floor(xs.length * p))];
  const buckets = new Map();
  for (let i = 0; i < n; i++) {
    const at = atMs[i];
    const ms = latMs[i];
    const b = Math.floor(at / BUCKET);
    if (!buckets.has(b)) buckets.set(b, []);
    buckets.get(b).push(ms);
  }
  for (const [b, xs] of [...buckets].sort((a, c) => a[0] - c[0])) {
    xs.sort((a, c) => a - c);
    console.log(`${String(b * BUCKET).padStart(5)} ms  n=${String(xs.length).padStart(6)}  p50 ${q(xs, 0.5).toFixed(2)}  p99 ${q(xs, 0.99).toFixed(2)}  max ${xs[xs.length - 1].toFixed(2)}`);
  }
  const all = Array.from(latMs.subarray(0, n)).sort((a, c) => a - c);
  console.log(`all n=${all.length} p50 ${q(all, 0.5).toFixed(3)} p99 ${q(all, 0.99).toFixed(3)} p999 ${q(all, 0.999).toFixed(3)} max ${all[all.length - 1].toFixed(3)}`);
  console.log(`requests ${frames - frames0}, ${((frameBytes - bytes0) / Math.max(1, frames - frames0) / 1024).toFixed(1)} KiB each`);
  await producer.close();
} finally {
  await client.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
