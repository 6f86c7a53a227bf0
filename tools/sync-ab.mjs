#!/usr/bin/env node
// One-at-a-time produce (peer-bench's sync-produce-100B: window 1, linger 0,
// 100 B, acks=1, flush os, the same warm-up and harness flags) of two mq
// builds and of Redis, alternating run by run in one process, so that all
// three see the same machine: base mq, this checkout's mq, Redis and the
// raw ws round-trip floor (bench-ceilings.mjs, as peer-bench measures it), repeated.
// Prints every run and the medians (by p99, as peer-bench keeps them), with
// the load average before and after.
//   node tools/sync-ab.mjs --base /tmp/mq-base [--runs 3] [--records 10000] [--warmup 2]
// --base: the root of another checkout of this repository, built (its
// packages/bench/dist starts its own broker build).
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wsRoundTripFloor } from './bench-ceilings.mjs';
import { startRedis } from './bench-servers.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < argv.length ? argv[i + 1] : dflt;
};
const base = opt('base');
if (!base) {
  process.stderr.write('usage: node tools/sync-ab.mjs --base <root of another built checkout> [--runs 3] [--records 10000] [--warmup 2]\n');
  process.exit(2);
}
const RUNS = Number(opt('runs', '3'));
const ARGS = ['produce', '--records', opt('records', '10000'), '--window', 1, '--linger-ms', 0, '--size', 100, '--warmup', opt('warmup', '2')];
// As tools/peer-bench.mjs runs every bench process.
const HARNESS_NODE_FLAGS = ['--min-semi-space-size=16', '--max-semi-space-size=32'];

function bench(root, args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...HARNESS_NODE_FLAGS, path.join(root, 'packages', 'bench', 'dist', 'bin.js'), ...ARGS.map(String), ...args, '--json', '--quiet'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      try {
        const r = JSON.parse(out.trim().split('\n').pop());
        resolve({ p50: r.latencyMs.p50 * 1000, p99: r.latencyMs.p99 * 1000 });
      } catch {
        resolve({ failed: `exit ${code}: ${err.trim().slice(-300)}` });
      }
    });
  });
}

const load = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const loadBefore = load();
const redis = await startRedis();
const sides = [
  ['mq base', () => bench(path.resolve(base), ['--target', 'mq', '--flush', 'os'])],
  ['mq this', () => bench(ROOT, ['--target', 'mq', '--flush', 'os'])],
  ['redis', () => bench(ROOT, ['--target', 'redis', '--peer-address', redis.address, '--durability', redis.durability])],
  ['ws floor', async () => {
    const r = await wsRoundTripFloor({ count: Number(opt('records', '10000')), requestBytes: 200, responseBytes: 40, appendFile: true });
    return { p50: r.p50Us, p99: r.p99Us };
  }],
];
const results = new Map(sides.map(([name]) => [name, []]));
try {
  for (let i = 0; i < RUNS; i++) {
    for (const [name, run] of sides) {
      const r = await run();
      results.get(name).push(r);
      process.stderr.write(`${name.padEnd(8)} run ${i + 1}: ${r.failed ?? `p50 ${r.p50.toFixed(0)} µs, p99 ${r.p99.toFixed(0)} µs`}\n`);
    }
  }
} finally {
  await redis.stop();
}
const loadAfter = load();
console.log(`load average before ${loadBefore}, after ${loadAfter}; ${RUNS} runs each, alternating; medians by p99`);
console.log('| system | p50 | p99 | runs (p50 / p99 µs) |');
console.log('|---|---:|---:|---|');
for (const [name, rs] of results) {
  const ok = rs.filter((r) => !r.failed).sort((a, b) => a.p99 - b.p99);
  const m = ok[Math.floor((ok.length - 1) / 2)];
  console.log(`| ${name} | ${m ? `${m.p50.toFixed(0)} µs` : '-'} | ${m ? `${m.p99.toFixed(0)} µs` : '-'} | ${rs.map((r) => (r.failed ? 'failed' : `${r.p50.toFixed(0)} / ${r.p99.toFixed(0)}`)).join(', ')} |`);
}
