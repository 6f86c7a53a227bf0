#!/usr/bin/env node
// Side-by-side benchmark: the same workloads (packages/bench, `mq-bench`)
// against mq, NATS JetStream, Redis Streams and RabbitMQ Streams, in one run
// on this machine, plus the machine's own ceilings; writes
// bench-results/REPORT.md, results.json and a latency plot (SVG).
//
//   npm run bench:peers -w @mq/bench            (full run, ~15 min)
//   npm run bench:peers -w @mq/bench -- --quick (small counts, ~4 min)
//   options: see USAGE below (--help prints it)
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { $ } from 'zx';
import { fileWriteCeiling, wsCeiling, wsRoundTripFloor } from './bench-ceilings.mjs';
import { fmtMs, fmtNum, topCosts } from './bench-report.mjs';
import { startMqCluster, startNats, startNatsCluster, startRabbit, startRabbitCluster, startRedis } from './bench-servers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BENCH_BIN = path.join(ROOT, 'packages', 'bench', 'dist', 'bin.js');
$.verbose = false;
$.cwd = ROOT;

// ---------------------------------------------------------------- arguments
const argv = process.argv.slice(2);
const flag = (name) => argv.includes(`--${name}`);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const USAGE = `usage: npm run bench:peers -w @mq/bench -- [options]
  --quick                 small counts (about 5 minutes)
  --replicated            also the replicated cases, after the single-node ones, on 3-node clusters: mq-r3 (RF 3,
                          min.insync.replicas 2, acks=all), nats-r3 (JetStream R3), rabbitmq-r3 (streams, 3 replicas)
  --systems LIST          of mq, mq-fsync, nats, redis, redis-fsync, rabbitmq, and with --replicated mq-r3, nats-r3,
                          rabbitmq-r3 (a prefix selects its variants; default all)
  --cases LIST            workload ids or prefixes (default all): produce-1p-100B, produce-8p-100B, consume-1p-100B,
                          consume-group-8p-100B, e2e-100B, the same with 1KiB, sync-produce-100B, half-rate-produce-100B
                          (half-rate runs mq's produce-1p-100B first: its rate is half of that maximum);
                          replicated: r3-produce-1p-100B, r3-produce-8p-100B, r3-consume-1p-100B, r3-consume-8p-100B,
                          the same with 1KiB
  --repeat N              runs per throughput figure, the median is kept (default 1)
  --latency-repeat N      runs per latency figure (sync, half-rate, e2e), median by p99 (default 3)
  --warmup S              seconds of unmeasured load before each one-at-a-time and half-rate run, every system alike (default 2)
  --sync-records N        records of a one-at-a-time run (default 10000; quick 3000)
  --windows LIST          producer windows each produce case tries, the best is kept (default 16384,2048,256)
  --no-profile            skip the --cpu-prof runs of mq
  --out DIR               where REPORT.md, results.json and the plots go (default bench-results)
  --report-only           rewrite REPORT.md from results.json
  --merge DIR,DIR...      one report in --out from several runs' results.json (each run a few cases, so that no
                          run holds the machine long); a case measured twice keeps the later run's figures
  --note TEXT             with --merge: a sentence for the report's head (how the machine was shared, say)
  --profile-only          redo the profiles, then rewrite REPORT.md
  --help                  this text`;
if (flag('help') || argv.includes('-h')) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const KNOWN = new Set(['quick', 'replicated', 'systems', 'cases', 'repeat', 'latency-repeat', 'warmup', 'sync-records', 'windows', 'no-profile', 'out', 'report-only', 'profile-only', 'merge', 'note', 'help']);
for (const a of argv) {
  if (a.startsWith('--') && !KNOWN.has(a.slice(2))) {
    process.stderr.write(`peer-bench: unknown option ${a}\n${USAGE}\n`);
    process.exit(2);
  }
}
const QUICK = flag('quick');
const REPEAT = Number(opt('repeat', '1'));
const LATENCY_REPEAT = Number(opt('latency-repeat', '3'));
const WARMUP = Number(opt('warmup', '2'));
const SYNC_RECORDS = Number(opt('sync-records', QUICK ? '3000' : '10000'));
const CASES = opt('cases', '')
  .split(',')
  .filter(Boolean);
const wantCase = (id) => CASES.length === 0 || CASES.some((c) => id === c || id.startsWith(c));
const OUT = path.resolve(ROOT, opt('out', 'bench-results'));
const PROFILE = !flag('no-profile');
const REPLICATED = flag('replicated');
const REPLICATED_SYSTEMS = ['mq-r3', 'nats-r3', 'rabbitmq-r3'];
const ALL_SYSTEMS = ['mq', 'mq-fsync', 'nats', 'redis', 'redis-fsync', 'rabbitmq', ...(REPLICATED ? REPLICATED_SYSTEMS : [])];
const isReplicated = (system) => system.endsWith('-r3');
const wanted = opt('systems', ALL_SYSTEMS.join(',')).split(',');
const SYSTEMS = ALL_SYSTEMS.filter((s) => wanted.some((w) => s === w || s.startsWith(`${w}-`)));

const log = (...a) => process.stderr.write(`[peer-bench] ${a.join(' ')}\n`);

// ---------------------------------------------------------------- install
async function ensureInstalled() {
  const missing = ['nats-server', 'redis-server', 'rabbitmq-server'].filter((b) => !existsSync(`/usr/sbin/${b}`) && !existsSync(`/usr/bin/${b}`));
  if (missing.length > 0) {
    log(`installing Debian packages: ${missing.join(' ')}`);
    await $`flock /tmp/mq-apt.lock sh -c ${'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends nats-server redis-server rabbitmq-server'}`;
  }
  const npmMissing = ['nats', 'ioredis', 'rabbitmq-stream-js-client'].filter((p) => !existsSync(path.join(ROOT, 'node_modules', p, 'package.json')));
  if (npmMissing.length > 0) {
    log(`installing npm clients: ${npmMissing.join(' ')}`);
    await $`flock /tmp/mq-npm.lock npm install --no-audit --no-fund`;
  }
  log('building @mq/cli and @mq/bench (tsc -b)');
  await $`npx tsc -b packages/cli packages/bench`;
}

// ---------------------------------------------------------------- workloads
const D = QUICK ? 2 : 5; // seconds per produce / e2e run
const N = (size) => (QUICK ? (size > 500 ? 30_000 : 100_000) : size > 500 ? 150_000 : 500_000); // records per consume run
const E2E_RATE = { 100: 10_000, 1024: 5_000 };

function buildCases() {
  const list = [];
  for (const size of [100, 1024]) {
    const tag = size === 100 ? '100B' : '1KiB';
    // One unmeasured second of the same load first, every system alike (JIT, connections; tools/peer-direct.mjs warms up the same).
    list.push({ id: `produce-1p-${tag}`, kind: 'produce', size, fsync: true, args: ['produce', '--duration', D, '--warmup', 1, '--size', size, '--partitions', 1] });
    list.push({ id: `produce-8p-${tag}`, kind: 'produce', size, args: ['produce', '--duration', D, '--warmup', 1, '--size', size, '--partitions', 8] });
    list.push({ id: `consume-1p-${tag}`, kind: 'consume', size, args: ['consume', '--records', N(size), '--size', size, '--partitions', 1] });
    list.push({ id: `consume-group-8p-${tag}`, kind: 'consume', size, args: ['consume', '--records', N(size), '--size', size, '--partitions', 8, '--consumers', 2, '--group', ''] });
    list.push({ id: `e2e-${tag}`, kind: 'e2e', size, args: ['e2e', '--rate', E2E_RATE[size], '--duration', D, '--size', size, '--linger-ms', 0] });
  }
  // One at a time: every system gets the same unmeasured warm-up (JIT, connections, metadata) first.
  list.push({ id: 'sync-produce-100B', kind: 'sync', size: 100, fsync: true, args: ['produce', '--records', SYNC_RECORDS, '--window', 1, '--linger-ms', 0, '--size', 100, '--warmup', WARMUP] });
  // half-rate-produce-100B needs mq's produce-1p-100B maximum: that case runs (for mq) whenever half-rate is wanted.
  if (REPLICATED) {
    // Replicated, on 3-node clusters: each produce run starts with the same unmeasured second for every system
    // (the new partitions' leaders and followers settle), and consume runs read alone, over 1 and 8 partitions.
    for (const size of [100, 1024]) {
      const tag = size === 100 ? '100B' : '1KiB';
      for (const p of [1, 8]) {
        list.push({ id: `r3-produce-${p}p-${tag}`, kind: 'produce', size, replicated: true, args: ['produce', '--duration', D, '--warmup', 1, '--size', size, '--partitions', p] });
        list.push({ id: `r3-consume-${p}p-${tag}`, kind: 'consume', size, replicated: true, args: ['consume', '--records', N(size), '--size', size, '--partitions', p] });
      }
    }
  }
  const half = wantCase('half-rate-produce-100B');
  return list.filter((c) => wantCase(c.id) || (half && c.id === 'produce-1p-100B'));
}

// The bench process (the client side of every system alike): a young generation of 16–32 MB from the
// start instead of V8's 1 MB that grows only when much survives. One at a time, the 1 MB nursery meant a
// scavenge every ~25 ms, and half of the slowest 1% of mq's sends overlapped one; at a few hundred
// thousand records/s the larger maximum scavenges the records in flight less often.
const HARNESS_NODE_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=32'];

function runBench(args, { nodeFlags = [], timeoutMs = 300_000 } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...HARNESS_NODE_FLAGS, ...nodeFlags, BENCH_BIN, ...args.map(String), '--json', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const line = stdout.trim().split('\n').pop();
      try {
        const result = JSON.parse(line);
        resolve(code === 0 ? result : { ...result, failed: `exit ${code}: ${stderr.trim().split('\n').pop()}` });
      } catch {
        resolve({ failed: `exit ${code ?? signal}: ${stderr.trim().slice(-400) || 'no output'}` });
      }
    });
  });
}

function median(results, key) {
  const ok = results.filter((r) => !r.failed);
  if (ok.length === 0) return results[0];
  ok.sort((a, b) => key(a) - key(b));
  return { ...ok[Math.floor((ok.length - 1) / 2)], repeats: results.length };
}

// Each system produces at its best: a producer window (records outstanding)
// suits one client and starves another (npm nats slows down with thousands
// of outstanding publishes), so produce runs try each window and keep the best;
// e2e then uses the system's best window for that record size.
const WINDOWS = opt('windows', QUICK ? '16384,1024' : '16384,2048,256').split(',').map(Number);
const bestWindow = new Map(); // `${system}/${size}` -> window

async function runCase(system, server, c) {
  if (c.kind === 'produce') {
    const sweep = [];
    for (const w of WINDOWS) sweep.push(await runOne(system, server, { ...c, args: [...c.args, '--window', w] }, true));
    const ok = sweep.filter((r) => !r.failed).sort((a, b) => b.recordsPerSec - a.recordsPerSec);
    const best = ok[0] ?? sweep[0];
    if (ok[0] && c.id.startsWith('produce-1p-')) bestWindow.set(`${system}/${c.size}`, ok[0].parameters.window);
    best.windowSweep = sweep.map((r) => ({ window: r.parameters?.window, recordsPerSec: r.recordsPerSec ?? null, p99: r.latencyMs?.p99 ?? null }));
    logResult(system, c, best);
    if (c.id === 'produce-1p-100B' && (system === 'redis' || system === 'rabbitmq')) best.direct = await runDirect(system, server, c);
    return best;
  }
  if (c.kind === 'e2e' && bestWindow.has(`${system}/${c.size}`)) c = { ...c, args: [...c.args, '--window', bestWindow.get(`${system}/${c.size}`)] };
  const r = await runOne(system, server, c, false);
  logResult(system, c, r);
  return r;
}

function logResult(system, c, r) {
  const shown = r.failed ? `FAILED ${r.failed}` : c.kind === 'sync' || c.kind === 'e2e' || c.kind === 'half' ? `p50 ${fmtMs(r.latencyMs.p50)} p99 ${fmtMs(r.latencyMs.p99)}` : `${fmtNum(r.recordsPerSec)} rec/s ${fmtNum(r.mbPerSec, 1)} MB/s${r.windowSweep ? ` (window ${r.parameters.window})` : ''}`;
  log(`${system.padEnd(11)} ${c.id.padEnd(22)} ${shown}${r.errors ? ` (${r.errors} errors)` : ''}`);
}

async function runOne(system, server, c) {
  const args = [...c.args];
  if (system === 'mq-r3') args.push('--target', 'mq', '--bootstrap', server.address, '--acks', 'all', '--replicas', 3, '--durability', server.durability);
  else if (isReplicated(system)) args.push('--target', system.replace(/-r3$/, ''), '--peer-address', server.address, '--replicas', 3, '--durability', server.durability);
  else if (system.startsWith('mq')) args.push('--target', 'mq', '--flush', system === 'mq-fsync' ? 'always' : 'os');
  else args.push('--target', system.replace(/-fsync$/, ''), '--peer-address', server.address, '--durability', server.durability);
  if (system.startsWith('redis') && c.id.startsWith('consume-group')) args.push('--redis-read', 'xreadgroup');
  const runs = [];
  const latencyCase = c.kind === 'sync' || c.kind === 'e2e' || c.kind === 'half';
  const repeat = latencyCase ? LATENCY_REPEAT : REPEAT;
  for (let i = 0; i < repeat; i++) runs.push(await runBench(args));
  const key = latencyCase ? (r) => r.latencyMs?.p99 ?? Infinity : (r) => r.recordsPerSec;
  const r = median(runs, key);
  if (latencyCase) r.repeatsP99 = runs.map((x) => x.latencyMs?.p99 ?? null);
  return { system, case: c.id, kind: c.kind, size: c.size, command: `node ${HARNESS_NODE_FLAGS.join(' ')} packages/bench/dist/bin.js ${args.join(' ')} --json`, ...r };
}

/**
 * The peer's own client driven directly (tools/peer-direct.mjs: no harness,
 * no promise or histogram per record), right after the adapter's run of the
 * same case: how close the adapter comes to the peer at its best.
 */
async function runDirect(system, server, c) {
  const script = path.join(ROOT, 'tools', 'peer-direct.mjs');
  const args = [script, system, server.address, '--seconds', D, '--size', c.size, ...(system === 'redis' ? ['--batch', 1000, '--in-flight', 2] : ['--window', 2000, '--chunk', 100])];
  const runs = [];
  for (let i = 0; i < REPEAT; i++) {
    const r = await $`${process.execPath} ${args}`.nothrow();
    try {
      runs.push(JSON.parse(r.stdout.trim().split('\n').pop()));
    } catch {
      runs.push({ failed: `exit ${r.exitCode}: ${r.stderr.trim().slice(-300)}` });
    }
  }
  const r = median(runs, (x) => x.recordsPerSec);
  r.command = `node ${path.relative(ROOT, script)} ${args.slice(1).join(' ')}`;
  log(`${system.padEnd(11)} ${'direct client'.padEnd(22)} ${r.failed ? `FAILED ${r.failed}` : `${fmtNum(r.recordsPerSec)} rec/s`}`);
  return r;
}

// ---------------------------------------------------------------- profiles
async function profileMq(dir) {
  const out = {};
  const pick = async (d) => {
    const files = (await readdir(d)).filter((f) => f.endsWith('.cpuprofile'));
    return files.length ? topCosts(path.join(d, files[0]), 12) : [];
  };
  const dirs = async (name) => {
    const c = path.join(dir, `${name}-client`);
    const b = path.join(dir, `${name}-broker`);
    await mkdir(c, { recursive: true });
    await mkdir(b, { recursive: true });
    return [c, b];
  };
  const profileProduce = async (name, args) => {
    // produce: client and broker each profiled for the run alone
    const [clientDir, brokerDir] = await dirs(name);
    const r = await runBench([...args, '--target', 'mq', '--flush', 'os', '--broker-cpu-prof', brokerDir], {
      nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${clientDir}`],
    });
    const result = r.failed ? r.failed : `${fmtNum(r.recordsPerSec)} rec/s, p99 ${fmtMs(r.latencyMs.p99)}`;
    out[name] = { result, client: await pick(clientDir), broker: await pick(brokerDir) };
    log(`profiled mq ${name}: ${result}`);
  };
  const profileConsume = async (name, size) => {
    // consume: the topic is filled first by another process, so the client
    // profile holds the read alone; the broker profile covers fill and read.
    const [clientDir, brokerDir] = await dirs(name);
    const { startLocalBroker } = await import(path.join(ROOT, 'packages', 'bench', 'dist', 'index.js'));
    const broker = await startLocalBroker({ config: { 'log.flush.policy': 'os' }, nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${brokerDir}`] });
    let r;
    try {
      const topic = `bench-prof-${process.pid}-${size}`;
      const fill = await runBench(['produce', '--topic', topic, '--records', N(size), '--size', size, '--target', 'mq', '--bootstrap', broker.bootstrap]);
      if (fill.failed) throw new Error(`filling ${topic}: ${fill.failed}`);
      r = await runBench(['consume', '--topic', topic, '--no-prepare', '--records', N(size), '--size', size, '--target', 'mq', '--bootstrap', broker.bootstrap], {
        nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${clientDir}`],
      });
    } finally {
      await broker.close();
    }
    const result = r.failed ? r.failed : `${fmtNum(r.recordsPerSec)} rec/s, ${fmtNum(r.mbPerSec, 1)} MB/s`;
    out[name] = { result, client: await pick(clientDir), broker: await pick(brokerDir) };
    log(`profiled mq ${name}: ${result}`);
  };
  await profileProduce('produce-100B', ['produce', '--duration', D, '--size', 100]);
  await profileProduce('produce-1KiB', ['produce', '--duration', D, '--size', 1024]);
  await profileConsume('consume-100B', 100);
  await profileConsume('consume-1KiB', 1024);
  await profileProduce('sync-produce-100B', ['produce', '--records', SYNC_RECORDS, '--window', 1, '--linger-ms', 0, '--size', 100, '--warmup', WARMUP]);
  return out;
}

// ---------------------------------------------------------------- main
/** --report-only: rewrite the report from results.json; --profile-only: redo the profiles too. */
async function rewrite({ reprofile }) {
  const { readFile } = await import('node:fs/promises');
  const data = JSON.parse(await readFile(path.join(OUT, 'results.json'), 'utf8'));
  if (reprofile) {
    await $`npx tsc -b packages/cli packages/bench`;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-prof-'));
    try {
      data.profiles = await profileMq(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await writeFile(path.join(OUT, 'results.json'), JSON.stringify(data, null, 2) + '\n');
  }
  const { writeReport } = await import('./bench-report-md.mjs');
  await writeReport(OUT, data);
  log(`rewrote ${path.relative(ROOT, path.join(OUT, 'REPORT.md'))}`);
}

/** Samples the 1-minute load average every 5 s while the run goes on. */
function sampleLoad() {
  const samples = [os.loadavg()[0]];
  const timer = setInterval(() => samples.push(os.loadavg()[0]), 5000);
  timer.unref();
  return () => {
    clearInterval(timer);
    samples.push(os.loadavg()[0]);
    const sorted = [...samples].sort((a, b) => a - b);
    const mean = samples.reduce((a, b) => a + b, 0) / samples.length;
    return { samples: samples.length, min: sorted[0], median: sorted[Math.floor((sorted.length - 1) / 2)], mean, max: sorted.at(-1) };
  };
}

/** The harness alone (in-process queue, no I/O): how much CPU the bench process gets right now. */
async function harnessCeiling() {
  const r = await runBench(['produce', '--records', 2_000_000, '--size', 100, '--target', 'memory']); // within the memory target's 5M-record bound
  return r.failed ? null : r.recordsPerSec;
}

/** --merge: one report from the results of several runs, each run's command and load kept in `meta.parts`. */
async function merge(dirs) {
  const { readFile } = await import('node:fs/promises');
  const parts = [];
  for (const dir of dirs) parts.push(JSON.parse(await readFile(path.join(path.resolve(ROOT, dir), 'results.json'), 'utf8')));
  const results = new Map();
  for (const part of parts) for (const r of part.results) results.set(`${r.system} ${r.case}`, r);
  const loads = parts.map((p) => p.meta.loadDuringRun).filter(Boolean);
  const medians = loads.map((l) => l.median).sort((a, b) => a - b);
  const first = parts[0].meta;
  const meta = {
    ...first,
    command: parts.map((p) => p.meta.command).join('\n'),
    started: parts.map((p) => p.meta.started).sort()[0],
    finished: parts.map((p) => p.meta.finished).sort().at(-1),
    loadDuringRun: loads.length
      ? { samples: loads.reduce((n, l) => n + l.samples, 0), min: Math.min(...loads.map((l) => l.min)), median: medians[Math.floor((medians.length - 1) / 2)], mean: loads.reduce((n, l) => n + l.mean, 0) / loads.length, max: Math.max(...loads.map((l) => l.max)) }
      : first.loadDuringRun,
    partial: parts.some((p) => p.meta.partial),
    ...(opt('note', '') ? { note: opt('note', '') } : {}),
    parts: parts.map((p, i) => ({ dir: dirs[i], command: p.meta.command, started: p.meta.started, finished: p.meta.finished, loadDuringRun: p.meta.loadDuringRun ?? null })),
  };
  const data = {
    meta,
    ceilings: parts.find((p) => p.ceilings?.ws)?.ceilings ?? parts[0].ceilings,
    durability: Object.assign({}, ...parts.map((p) => p.durability)),
    results: [...results.values()],
    profiles: parts.map((p) => p.profiles).filter(Boolean).at(-1) ?? null,
  };
  await mkdir(OUT, { recursive: true });
  await writeFile(path.join(OUT, 'results.json'), JSON.stringify(data, null, 2) + '\n');
  const { writeReport } = await import('./bench-report-md.mjs');
  await writeReport(OUT, data);
  log(`merged ${dirs.length} runs into ${path.relative(ROOT, path.join(OUT, 'REPORT.md'))}`);
}

async function main() {
  if (flag('report-only') || flag('profile-only')) return rewrite({ reprofile: flag('profile-only') });
  if (opt('merge', '')) return merge(opt('merge', '').split(',').filter(Boolean));
  const started = new Date();
  const load = os.loadavg();
  const stopLoad = sampleLoad();
  await ensureInstalled();
  await mkdir(OUT, { recursive: true });
  const cases = buildCases();
  log(`systems: ${SYSTEMS.join(', ')}; ${cases.length} workloads${CASES.length ? ` (${CASES.join(', ')})` : ''}; repeat ${REPEAT}, latency repeat ${LATENCY_REPEAT}, warm-up ${WARMUP} s${QUICK ? '; quick' : ''}`);

  log('measuring ceilings');
  const ceilings = {
    fileWrite: await fileWriteCeiling({ totalBytes: QUICK ? 128e6 : 512e6, chunkBytes: 1 << 20 }),
    fileWriteFsync4k: await fileWriteCeiling({ totalBytes: QUICK ? 4e6 : 16e6, chunkBytes: 4096, fsyncEach: true }),
    ws: await wsCeiling({ totalBytes: QUICK ? 256e6 : 1024e6, messageBytes: 1 << 20 }),
    ws64k: await wsCeiling({ totalBytes: QUICK ? 128e6 : 512e6, messageBytes: 64 << 10 }),
    // One at a time: about the sizes of an mq produce request of one 100 B record and its answer.
    wsRoundTrip: await wsRoundTripFloor({ count: QUICK ? 3000 : 10000, requestBytes: 200, responseBytes: 40, appendFile: true }),
  };
  ceilings.harnessBefore = await harnessCeiling();
  log(`file write ${fmtNum(ceilings.fileWrite.mbPerSec)} MB/s; ws up ${fmtNum(ceilings.ws.produceMbPerSec)} MB/s, down ${fmtNum(ceilings.ws.consumeMbPerSec)} MB/s; ws round trip p50 ${ceilings.wsRoundTrip.p50Us.toFixed(0)} µs p99 ${ceilings.wsRoundTrip.p99Us.toFixed(0)} µs; harness ${fmtNum(ceilings.harnessBefore)} records/s`);

  // Every server is started first and the runs go case by case, each case
  // against every system back to back: on a shared machine whose load drifts,
  // the systems being compared then see the same conditions. The replicated
  // cases come second, on the clusters alone (the single-node servers stopped
  // first: idle Erlang VMs and brokers still take CPU).
  const results = [];
  const durability = {};
  const epmdBefore = (await $`pgrep -x epmd`.nothrow()).exitCode === 0;
  const saveProgress = () =>
    writeFile(
      path.join(OUT, 'results.json'),
      JSON.stringify({ meta: { command: `npm run bench:peers -w @mq/bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`, started: started.toISOString(), finished: new Date().toISOString(), loadAverageBefore: load, windows: WINDOWS, repeat: REPEAT, latencyRepeat: LATENCY_REPEAT, warmup: WARMUP, cases: CASES, quick: QUICK, replicated: REPLICATED, partial: true, environment: results.find((r) => r.environment)?.environment ?? null }, ceilings, durability, results, profiles: null }, null, 2) + '\n',
    );
  const starters = {
    nats: startNats,
    redis: () => startRedis(),
    'redis-fsync': () => startRedis({ fsync: 'always' }),
    rabbitmq: startRabbit,
    // The replicated mq runs with the same flush policy as the single-node mq (no fsync before the ack), as the peers.
    'mq-r3': () => startMqCluster({ brokers: 3, config: { 'log.flush.policy': 'os' } }),
    'nats-r3': () => startNatsCluster({ nodes: 3 }),
    'rabbitmq-r3': () => startRabbitCluster({ nodes: 3 }),
  };
  // Servers are their own process groups (detached): a run stopped by a signal (a `timeout`, ^C) stops them too.
  const live = new Set();
  for (const signal of ['SIGTERM', 'SIGINT']) {
    process.once(signal, async () => {
      log(`${signal}: stopping ${live.size} server(s)`);
      await Promise.allSettled([...live].map((server) => server.stop()));
      if (!epmdBefore) await $`epmd -kill`.nothrow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    });
  }
  const phase = async (systems, phaseCases) => {
    if (systems.length === 0 || phaseCases.length === 0) return;
    const servers = new Map();
    try {
      for (const system of systems) {
        if (system === 'mq' || system === 'mq-fsync') {
          servers.set(system, null);
          durability[system] =
            system === 'mq-fsync'
              ? 'local broker, log.flush.policy=always: fsync before every ack'
              : 'local broker, log.flush.policy=os: ack after the write to the OS, no fsync (the OS flushes)';
          continue;
        }
        try {
          const t0 = Date.now();
          const server = await starters[system]();
          servers.set(system, server);
          live.add(server);
          durability[system] = server.durability;
          log(`${system} listening on ${server.address} (started in ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
        } catch (err) {
          log(`${system}: could not start (${err.message.split('\n')[0]}); skipped`);
          durability[system] = `not run: ${err.message.split('\n')[0]}`;
        }
      }
      for (const c of phaseCases) {
        // What has been measured so far, so a run cut short still leaves its figures (meta.partial).
        await saveProgress();
        for (const [system, server] of servers) {
          if (system.endsWith('-fsync') && !c.fsync) continue;
          if (!wantCase(c.id) && system !== 'mq') continue; // only there for mq's half-rate maximum
          results.push(await runCase(system, server, c));
          if (system === 'mq' && c.id === 'produce-1p-100B' && results.at(-1).recordsPerSec && wantCase('half-rate-produce-100B')) {
            const rate = Math.round(results.at(-1).recordsPerSec / 2);
            const window = results.at(-1).parameters.window;
            results.push(await runCase(system, server, { id: 'half-rate-produce-100B', kind: 'half', size: 100, args: ['produce', '--rate', rate, '--duration', D, '--size', 100, '--window', window, '--warmup', WARMUP] }));
          }
        }
      }
    } finally {
      for (const server of servers.values()) {
        if (!server) continue;
        await server.stop().catch((err) => log(`stopping ${server.name}: ${err.message}`));
        live.delete(server);
      }
      if ((servers.has('rabbitmq') || servers.has('rabbitmq-r3')) && !epmdBefore) await $`epmd -kill`.nothrow();
    }
  };
  await phase(SYSTEMS.filter((s) => !isReplicated(s)), cases.filter((c) => !c.replicated));
  await phase(SYSTEMS.filter(isReplicated), cases.filter((c) => c.replicated));

  ceilings.harnessAfter = await harnessCeiling();
  const loadDuringRun = stopLoad();
  log(`load average during the run: ${loadDuringRun.min.toFixed(1)}–${loadDuringRun.max.toFixed(1)} (median ${loadDuringRun.median.toFixed(1)})`);

  let profiles = null;
  if (PROFILE && SYSTEMS.includes('mq')) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-prof-'));
    try {
      profiles = await profileMq(dir);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  const meta = {
    command: `npm run bench:peers -w @mq/bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
    started: started.toISOString(),
    finished: new Date().toISOString(),
    loadAverageBefore: load,
    loadDuringRun,
    windows: WINDOWS,
    environment: results.find((r) => r.environment)?.environment ?? null,
    repeat: REPEAT,
    latencyRepeat: LATENCY_REPEAT,
    warmup: WARMUP,
    cases: CASES,
    quick: QUICK,
    replicated: REPLICATED,
  };
  await writeFile(path.join(OUT, 'results.json'), JSON.stringify({ meta, ceilings, durability, results, profiles }, null, 2) + '\n');
  const { writeReport } = await import('./bench-report-md.mjs');
  await writeReport(OUT, { meta, ceilings, durability, results, profiles });
  log(`wrote ${path.relative(ROOT, path.join(OUT, 'REPORT.md'))}`);
}

await main();
