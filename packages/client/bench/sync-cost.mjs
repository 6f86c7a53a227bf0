// One-at-a-time produce (acks=1, lingerMs 0, each send awaited) against a
// broker in its own process (flush os, the broker's heap flags): latency
// percentiles and the CPU time per request of the client and of the broker
// (the broker's from /proc, so Linux only). Round trip ≈ the two processes'
// CPU per request when their work is serial.
//   npm run build -w @mq/cli && node --min-semi-space-size=16 --max-semi-space-size=32 packages/client/bench/sync-cost.mjs
// Env: N sends (20,000, after 2,000 unmeasured); CLIENT_DIST / BROKER_DIST: another build's
// @mq/client / @mq/broker dist directory; BROKER_NODE_FLAGS: more Node flags for the broker (its output then goes to stderr); PROFILE_DIR: CPU-profile both processes over the
// measured sends (sampling every PROFILE_INTERVAL_US, default 100 µs), write client.cpuprofile
// and broker.cpuprofile there and print each side's self time per request by category and function.
// FLOOR=1: the same for the raw `ws` round trip instead (tools/bench-ws-sink.mjs: a 200-byte request written
// to a file with writeSync, answered with 40 bytes; what peer-bench's round-trip floor measures), no profiles.
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BROKER_HEAP_FLAGS, startBrokerProcess } from './broker-process.mjs';
import { formatSummary, summarize } from './profile-top.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N ?? 20_000);
const profileDir = process.env.PROFILE_DIR ? path.resolve(process.env.PROFILE_DIR) : undefined;
const interval = Number(process.env.PROFILE_INTERVAL_US ?? 100);
const brokerProfile = profileDir && path.join(profileDir, 'broker.cpuprofile');
if (process.env.FLOOR) await floor();
if (profileDir) mkdirSync(profileDir, { recursive: true });
const { bootstrap, child: broker } = await startBrokerProcess({
  tag: 'sync-cost',
  nodeFlags: [...BROKER_HEAP_FLAGS, ...(process.env.BROKER_NODE_FLAGS ?? '').split(' ').filter(Boolean)],
  ...(process.env.BROKER_DIST ? { dist: path.resolve(process.env.BROKER_DIST) } : {}),
  env: profileDir ? { ...process.env, MQ_BENCH_PROFILE: brokerProfile, MQ_BENCH_PROFILE_INTERVAL_US: String(interval) } : process.env,
});
// What the broker prints (--trace-gc, say) goes to stderr.
if (process.env.BROKER_NODE_FLAGS) broker.stdout.on('data', (d) => process.stderr.write(d));
const clientDist = process.env.CLIENT_DIST ? path.resolve(process.env.CLIENT_DIST) : path.join(here, '../dist');
const { MqClient } = await import(pathToFileURL(path.join(clientDist, 'index.js')).href);
const client = new MqClient({ bootstrap });
await client.admin().createTopics([{ topic: 't', numPartitions: 1 }]);
const producer = client.producer({ acks: 1, lingerMs: 0 });
const value = Buffer.alloc(100, 1);
for (let i = 0; i < 2000; i++) await producer.send('t', { value });
let session;
if (profileDir) {
  // Both profilers run over the measured sends alone.
  broker.kill('SIGUSR2');
  await once(broker.stdout, 'data');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval });
  await session.post('Profiler.start');
}
console.log(await measure(broker.pid, () => producer.send('t', { value }), 'broker'));
if (session) {
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  writeFileSync(path.join(profileDir, 'client.cpuprofile'), JSON.stringify(profile));
  console.log(`\n== client (${N} requests)\n${formatSummary(summarize(profile), { per: N })}`);
}
await client.close();
const exited = once(broker, 'exit');
broker.kill('SIGTERM');
await exited;
if (brokerProfile) console.log(`\n== broker (${N} requests)\n${formatSummary(summarize(JSON.parse(readFileSync(brokerProfile, 'utf8'))), { per: N })}`);

/** N round trips of `roundTrip`, one at a time: latency percentiles and the CPU per request of this process and of `pid`. */
async function measure(pid, roundTrip, name) {
  /** The other process's CPU time so far, ms (utime and stime from /proc, 10 ms ticks): all, in the kernel, of its main thread. */
  const ticks = (file) => {
    const f = readFileSync(file, 'utf8').split(') ')[1].split(' ');
    return [Number(f[11]) * 10, Number(f[12]) * 10];
  };
  const serverCpu = () => {
    const [user, sys] = ticks(`/proc/${pid}/stat`);
    const [mainUser, mainSys] = ticks(`/proc/${pid}/task/${pid}/stat`);
    return { all: user + sys, sys, main: mainUser + mainSys };
  };
  const b0 = serverCpu();
  const c0 = process.cpuUsage();
  const lat = new Float64Array(N);
  const t0 = performance.now();
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    await roundTrip();
    lat[i] = (performance.now() - s) * 1000;
  }
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const b1 = serverCpu();
  const b = b1.all - b0.all;
  const bSys = b1.sys - b0.sys;
  const bMain = b1.main - b0.main;
  lat.sort();
  const q = (p) => lat[Math.min(N - 1, Math.floor(N * p))].toFixed(0);
  return (
    `${((N / wall) * 1000).toFixed(0)} sends/s; latency p50 ${q(0.5)} µs, p90 ${q(0.9)}, p99 ${q(0.99)}, p99.9 ${q(0.999)}; ` +
    `CPU per request: client ${((c.user + c.system) / N).toFixed(1)} µs (kernel ${(c.system / N).toFixed(1)}), ${name} ${((b * 1000) / N).toFixed(1)} µs ` +
    `(kernel ${((bSys * 1000) / N).toFixed(1)}, main thread ${((bMain * 1000) / N).toFixed(1)})`
  );
}

/** FLOOR=1: the raw `ws` round trip (tools/bench-ws-sink.mjs), measured as the mq one is; then exits. */
async function floor() {
  const { spawn } = await import('node:child_process');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { default: WebSocket } = await import('ws');
  const dir = mkdtempSync(path.join(tmpdir(), 'sync-cost-floor-'));
  const sink = spawn(process.execPath, [path.join(here, '../../../tools/bench-ws-sink.mjs')], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(sink.stdout, 'data');
  const ws = new WebSocket(`ws://127.0.0.1:${Number(line.toString().trim())}`, { perMessageDeflate: false });
  await once(ws, 'open');
  const ready = once(ws, 'message');
  ws.send(`echo:40:${path.join(dir, 'append.log')}`);
  await ready;
  let next = () => undefined;
  ws.on('message', () => next());
  const request = Buffer.alloc(200, 0x44);
  const roundTrip = () =>
    new Promise((resolve) => {
      next = resolve;
      ws.send(request);
    });
  for (let i = 0; i < 2000; i++) await roundTrip();
  console.log(await measure(sink.pid, roundTrip, 'sink'));
  ws.close();
  sink.stdin.end();
  await once(sink, 'exit');
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}
