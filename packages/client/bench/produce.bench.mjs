// Producer and consumer throughput of @mq/client against a real broker
// (`mq broker start` on free ports in a temp dir, started and killed here).
// Run: npm run build -w @mq/cli && node packages/client/bench/produce.bench.mjs
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MqClient } from '../dist/index.js';

const N = Number(process.env.N ?? 300_000);
const VALUE_BYTES = Number(process.env.VALUE_BYTES ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PARTITIONS = Number(process.env.PARTITIONS ?? 1);
const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, '..', '..', 'cli', 'dist', 'bin.js');

async function startBroker() {
  const dir = await mkdtemp(path.join(tmpdir(), 'mq-client-bench-'));
  const child = spawn(process.execPath, [bin, 'broker', 'start', '--data-dir', dir, '--port', '0', '--http-port', '0', '--config-set', 'log.flush.policy=os'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /"port":(\d+).*"msg":"broker listening"|"msg":"broker listening".*"port":(\d+)/.exec(buf);
      if (m) resolve(Number(m[1] ?? m[2]));
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code}`)));
  });
  child.stdout.resume();
  return {
    bootstrap: `127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const value = 'v'.repeat(VALUE_BYTES);
const broker = await startBroker();
const client = new MqClient({ bootstrap: broker.bootstrap, maskFrames: process.env.MASK !== '0' });
const admin = client.admin();
const results = [];

async function run(name, fn) {
  const rates = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const topic = `bench-${name.replace(/\W+/g, '-')}-${r}`;
    await admin.createTopic(topic, { numPartitions: PARTITIONS });
    const t = process.hrtime.bigint();
    await fn(topic);
    const s = Number(process.hrtime.bigint() - t) / 1e9;
    if (r > 0) rates.push(N / s);
  }
  results.push({ name, rate: median(rates) });
}

// IDEMPOTENT=1 measures the idempotent producer (it needs acks=all; ACKS=all alone gives its baseline).
const IDEMPOTENT = process.env.IDEMPOTENT === '1';
const ACKS = IDEMPOTENT || process.env.ACKS === 'all' ? 'all' : 1;
const producer = client.producer({ acks: ACKS, idempotent: IDEMPOTENT, lingerMs: 5, batchBytes: 256 * 1024, bufferMemory: 64 << 20, maxRequestBytes: 4 << 20 });

const ONLY = process.env.ONLY; // 'produce' or 'consume' to run one half
if (ONLY !== 'consume') await run('send() per record, awaited in windows of 10k', async (topic) => {
  let window = [];
  for (let i = 0; i < N; i++) {
    window.push(producer.send(topic, { key: `k${i & 1023}`, value }));
    if (window.length === 10_000) {
      await Promise.all(window);
      window = [];
    }
  }
  await Promise.all(window);
});

if (ONLY !== 'consume') await run('sendBatch() of 1000 records', async (topic) => {
  const batch = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i & 1023}`, value }));
  const pending = [];
  for (let i = 0; i < N; i += 1000) {
    pending.push(producer.sendBatch(topic, batch));
    if (pending.length >= 16) await pending.shift();
  }
  await Promise.all(pending);
});

// Consume: fill a topic once, then time reading it back with fresh consumers.
if (ONLY !== 'produce') {
  const topic = 'bench-consume';
  await admin.createTopic(topic, { numPartitions: 1 });
  const fill = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, value }));
  for (let i = 0; i < N; i += 1000) await producer.sendBatch(topic, fill);
  const rates = [];
  for (let r = 0; r < ROUNDS + 1; r++) {
    const t0 = process.hrtime.bigint();
    const c = client.consumer({ autoOffsetReset: 'earliest', maxPollRecords: 5000, partitionMaxBytes: Number(process.env.PART_BYTES ?? 1 << 20) });
    c.assign([{ topic, partition: 0 }]);
    let n = 0;
    let bytes = 0;
    while (n < N) {
      for (const rec of await c.poll(1000)) {
        bytes += rec.value.length;
        n++;
      }
    }
    await c.close();
    if (bytes === 0) throw new Error('nothing read');
    if (r > 0) rates.push(N / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  results.push({ name: 'consumer poll() (values read)', rate: median(rates) });
}

await client.close();
await broker.stop();
console.log(`records: ${N} x (${VALUE_BYTES} B value, ~5 B key), ${PARTITIONS} partition(s) for produce, 1 for consume, acks=${ACKS}${IDEMPOTENT ? ', idempotent' : ''}, median of ${ROUNDS} rounds, node ${process.version}`);
const w = Math.max(...results.map((r) => r.name.length));
for (const r of results) console.log(`${r.name.padEnd(w)}  ${(r.rate / 1e6).toFixed(2)} M records/s  ${((r.rate * (VALUE_BYTES + 5)) / 1e6).toFixed(0)} MB/s payload`);
