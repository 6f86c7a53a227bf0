// One-at-a-time produce (acks=1, lingerMs 0, each send awaited) against a
// broker in its own process (flush os, the broker's heap flags): latency
// percentiles and the CPU time per request of the client and of the broker
// (the broker's from /proc, so Linux only). Round trip ≈ the two processes'
// CPU per request when their work is serial.
//   npm run build -w @mq/cli && node --min-semi-space-size=16 --max-semi-space-size=32 packages/client/bench/sync-cost.mjs
// Env: N sends (20,000, after 2,000 unmeasured).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startBrokerProcess } from './broker-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N ?? 20_000);
const { bootstrap, child: broker } = await startBrokerProcess({ tag: 'sync-cost' });
const { MqClient } = await import(pathToFileURL(path.join(here, '../dist/index.js')).href);
const client = new MqClient({ bootstrap });
await client.admin().createTopics([{ topic: 't', numPartitions: 1 }]);
const producer = client.producer({ acks: 1, lingerMs: 0 });
const value = Buffer.alloc(100, 1);
for (let i = 0; i < 2000; i++) await producer.send('t', { value });
/** The broker's CPU time so far, ms (utime + stime from /proc, 10 ms ticks). */
const brokerCpuMs = () => {
  const f = readFileSync(`/proc/${broker.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
};
const b0 = brokerCpuMs();
const c0 = process.cpuUsage();
const lat = new Float64Array(N);
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const s = performance.now();
  await producer.send('t', { value });
  lat[i] = (performance.now() - s) * 1000;
}
const wall = performance.now() - t0;
const c = process.cpuUsage(c0);
const b = brokerCpuMs() - b0;
lat.sort();
const q = (p) => lat[Math.min(N - 1, Math.floor(N * p))].toFixed(0);
console.log(
  `${((N / wall) * 1000).toFixed(0)} sends/s; latency p50 ${q(0.5)} µs, p90 ${q(0.9)}, p99 ${q(0.99)}, p99.9 ${q(0.999)}; ` +
    `CPU per request: client ${((c.user + c.system) / N).toFixed(1)} µs (kernel ${(c.system / N).toFixed(1)}), broker ${((b * 1000) / N).toFixed(1)} µs`,
);
await client.close();
broker.kill('SIGTERM');
