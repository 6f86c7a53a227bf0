// Produce latency against a broker in its own process: open-loop sends of
// 100-byte records at RATE/s (latency from each record's intended send time),
// or one at a time with RATE=0 (await each ack), acks=1, flush policy os.
// Prints percentiles per BUCKET ms window (BUCKET=0: none), so a start-up
// stall or a growing queue is visible, then the whole run's percentiles as one
// JSON line and the produce requests' count and size.
// Env: RATE (75000), SECONDS (4), LINGER (client default), WARM (0 sends
// awaited before the clock starts), CLIENT_DIST (another build to compare).
// Usage: node latency-probe.mjs [broker dist dir]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
// CLIENT_DIST: another build of this package to compare (default: ../dist).
const clientDist = process.env.CLIENT_DIST ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '../dist');
const { MqClient } = await import(pathToFileURL(path.resolve(clientDist, 'index.js')).href);

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
const child = spawn(process.execPath, [...(process.env.BROKER_NODE_FLAGS ?? '').split(' ').filter(Boolean), path.join(here, 'broker-child.mjs'), distDir, dataDir], { stdio: ['pipe', 'pipe', 'inherit'] }); // stdin stays open: broker-child exits when it ends
// A crash must not leave the broker running.
process.once('exit', () => {
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});
const port = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    if (process.env.BROKER_OUT === '1') process.stderr.write(`[broker] ${d}`); // e.g. with NODE_OPTIONS=--trace-gc
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
  let failed = 0;
  let firstError;
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
        producer.send(topic, record).then(
          () => {
            atMs[n] = intended;
            latMs[n++] = performance.now() - t0 - intended;
            if (++done === total) allDone();
          },
          (err) => {
            // BUFFER_FULL when the producer falls too far behind: counted, the run goes on.
            failed++;
            firstError ??= err;
            if (++done === total) allDone();
          },
        );
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
    const b = BUCKET > 0 ? Math.floor(at / BUCKET) : 0;
    if (!buckets.has(b)) buckets.set(b, []);
    buckets.get(b).push(ms);
  }
  for (const [b, xs] of BUCKET > 0 ? [...buckets].sort((a, c) => a[0] - c[0]) : []) {
    xs.sort((a, c) => a - c);
    console.log(`${String(b * BUCKET).padStart(5)} ms  n=${String(xs.length).padStart(6)}  p50 ${q(xs, 0.5).toFixed(2)}  p99 ${q(xs, 0.99).toFixed(2)}  max ${xs[xs.length - 1].toFixed(2)}`);
  }
  const all = Array.from(latMs.subarray(0, n)).sort((a, c) => a - c);
  const requests = frames - frames0;
  console.log(
    JSON.stringify({
      records: all.length,
      failed,
      ...(firstError ? { firstError: String(firstError.message ?? firstError) } : {}),
      seconds: (performance.now() - t0) / 1000,
      p50: q(all, 0.5),
      p90: q(all, 0.9),
      p99: q(all, 0.99),
      p999: q(all, 0.999),
      max: all[all.length - 1],
      requests,
      kibPerRequest: (frameBytes - bytes0) / Math.max(1, requests) / 1024,
    }),
  );
  await producer.close();
} finally {
  await client.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
