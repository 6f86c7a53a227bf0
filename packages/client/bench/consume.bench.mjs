// Consume throughput of @mq/client against real brokers, A/B side by side.
// Each variant is a client build and a broker build (dist directories); one
// broker process runs per broker build, its topic is filled once, and then
// every round runs each variant's consumer in a fresh process, interleaved
// (A B A B ...) so that both see the same machine load. Prints medians and
// the ratio of each variant to the first, in records/s and in CPU time per
// record of the consumer and of the broker process (CPU time is the steadier
// figure on a loaded machine; the x ratios are speedups over the first variant).
//
//   npm run build -w @mq/cli && node packages/client/bench/consume.bench.mjs
//   VARIANTS='base=/tmp/base/client/dist:/tmp/base/broker/dist,new=packages/client/dist:packages/broker/dist' \
//     N=1000000 SIZE=100 ROUNDS=5 node packages/client/bench/consume.bench.mjs
//
// Env: N records (1,000,000), SIZE value bytes (100), PARTITIONS (1), ROUNDS (5),
// MODE poll|batches for every variant (or name=client:broker:mode per variant),
// CPU_PROF=dir to profile each consumer (node --cpu-prof) and broker process (from
// after the fill to the end),
// CONSUMER_NODE_ARGS / BROKER_NODE_ARGS extra node flags for those processes (e.g. --trace-gc).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N ?? 1_000_000);
const SIZE = Number(process.env.SIZE ?? 100);
const PARTITIONS = Number(process.env.PARTITIONS ?? 1);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const MODE = process.env.MODE ?? 'poll';
const CPU_PROF = process.env.CPU_PROF;
const variants = (process.env.VARIANTS ?? `current=${path.join(here, '../dist')}:${path.join(here, '../../broker/dist')}`)
  .split(',')
  .map((spec) => {
    const [name, rest] = spec.split('=');
    const [client, broker, mode] = rest.split(':');
    return { name, client: path.resolve(client), broker: path.resolve(broker), mode: mode ?? MODE, rates: [], clientCpu: [], brokerCpu: [] };
  });

const profArgs = (tag) => (CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', CPU_PROF, '--cpu-prof-name', `${tag}-${Date.now()}.cpuprofile`] : []);

async function startBroker(dist, tag) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mq-consume-bench-'));
  const env = CPU_PROF ? { ...process.env, MQ_BENCH_PROFILE: path.join(CPU_PROF, `broker-${tag}-${Date.now()}.cpuprofile`) } : process.env;
  const nodeArgs = (process.env.BROKER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, path.join(here, 'broker-child.mjs'), dist, dir], { stdio: ['pipe', 'pipe', 'inherit'], env });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d) => {
      if (nodeArgs.length > 0) process.stderr.write(d);
      buf += d;
      const m = /port (\d+)/.exec(buf);
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', (code) => reject(new Error(`broker exited ${code}`)));
  });
  return {
    bootstrap: `127.0.0.1:${port}`,
    pid: child.pid,
    /** Starts the broker's CPU profile (after the fill, so it covers the reads only). */
    profile() {
      if (CPU_PROF) child.kill('SIGUSR2');
    },
    async stop() {
      child.kill('SIGTERM');
      await once(child, 'exit');
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function fill(bootstrap, topic) {
  const { MqClient } = await import(pathToFileURL(path.join(here, '../dist/index.js')).href);
  const client = new MqClient({ bootstrap });
  try {
    await client.admin().createTopic(topic, { numPartitions: PARTITIONS });
    const producer = client.producer({ acks: 1, lingerMs: 5, batchBytes: 256 * 1024 });
    const value = Buffer.alloc(SIZE, 0x61);
    const batch = Array.from({ length: 1000 }, () => ({ value }));
    const pending = [];
    for (let i = 0; i < N; i += 1000) {
      pending.push(producer.sendBatch(topic, batch.slice(0, Math.min(1000, N - i))));
      if (pending.length >= 16) await pending.shift();
    }
    await Promise.all(pending);
    await producer.close();
  } finally {
    await client.close();
  }
}

function runConsumer(v, bootstrap, topic, tag) {
  const child = spawn(
    process.execPath,
    [...profArgs(`consumer-${tag}`), ...(process.env.CONSUMER_NODE_ARGS ?? '').split(' ').filter(Boolean), path.join(here, 'consume-child.mjs'), v.client, bootstrap, topic, String(PARTITIONS), String(N), v.mode],
    { stdio: ['pipe', 'pipe', process.env.CONSUMER_NODE_ARGS ? 'pipe' : 'inherit'] },
  );
  if (process.env.CONSUMER_NODE_ARGS) child.stderr.pipe(process.stderr);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`consumer ${v.name} exited ${code}`);
        resolve(lastJson(out));
      } catch (err) {
        reject(err);
      }
    });
  });
}

// The result is the last line; anything before it (e.g. --trace-gc output) goes to stderr.
function lastJson(out) {
  const lines = out.trim().split('\n');
  let i = lines.length - 1;
  while (i > 0 && !lines[i].startsWith('{')) i--;
  const last = lines.splice(i, 1)[0];
  if (lines.length > 0) process.stderr.write(lines.join('\n') + '\n');
  return JSON.parse(last);
}

/** CPU seconds a process has used so far (Linux /proc; NaN elsewhere). */
function processCpu(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime + stime, in clock ticks of 10 ms
  } catch {
    return NaN;
  }
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const brokers = new Map();
try {
  for (const v of variants) {
    if (!brokers.has(v.broker)) {
      const b = await startBroker(v.broker, `${brokers.size}`);
      await fill(b.bootstrap, 'bench-consume');
      b.profile();
      brokers.set(v.broker, b);
    }
  }
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 === 0 ? variants : [...variants].reverse();
    for (const v of order) {
      const broker = brokers.get(v.broker);
      const b0 = processCpu(broker.pid);
      const res = await runConsumer(v, broker.bootstrap, 'bench-consume', `${v.name}-${r}`);
      if (res.records < N) throw new Error(`${v.name} read ${res.records} of ${N}`);
      v.rates.push(res.recordsPerSec);
      v.clientCpu.push((res.cpuSeconds * 1e9) / res.records);
      v.brokerCpu.push(((processCpu(broker.pid) - b0) * 1e9) / res.records);
      process.stderr.write(`round ${r + 1} ${v.name}: ${Math.round(res.recordsPerSec).toLocaleString('en-US')} records/s\n`);
    }
  }
} finally {
  for (const b of brokers.values()) await b.stop();
}
console.log(`consume ${N.toLocaleString('en-US')} records of ${SIZE} B from ${PARTITIONS} partition(s), median of ${ROUNDS} interleaved rounds, node ${process.version}`);
const base = median(variants[0].rates);
for (const v of variants) {
  const m = median(v.rates);
  console.log(
    `${v.name.padEnd(12)} ${Math.round(m).toLocaleString('en-US').padStart(10)} records/s ${((m * SIZE) / 1e6).toFixed(1).padStart(7)} MB/s  x${(m / base).toFixed(2)}` +
      `  CPU per record: consumer ${median(v.clientCpu).toFixed(0)} ns (x${(median(variants[0].clientCpu) / median(v.clientCpu)).toFixed(2)}), broker ${median(v.brokerCpu).toFixed(0)} ns (x${(median(variants[0].brokerCpu) / median(v.brokerCpu)).toFixed(2)})` +
      `  (mode ${v.mode}; rounds: ${v.rates.map((x) => Math.round(x / 1000) + 'k').join(' ')})`,
  );
}
