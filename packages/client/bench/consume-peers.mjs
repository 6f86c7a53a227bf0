// The issue-4 consume workloads only, mq side by side with the peers that
// were best at them in bench-results/REPORT.md (Redis Streams XREAD for
// consume-1p, RabbitMQ Streams for consume-group-8p-1KiB), interleaved round by
// round, through the same harness binary and server launchers that
// tools/peer-bench.mjs uses (its peer adapters untouched).
//   npx tsc -b packages/cli packages/bench && node packages/client/bench/consume-peers.mjs
// Each round also measures the raw ws ceiling (server→client, 1 MiB messages,
// tools/bench-ceilings.mjs), so mq's 1 KiB MB/s can be set against it.
// Env: ROUNDS (3), SYSTEMS (mq,redis,rabbitmq).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { wsCeiling } from '../../../tools/bench-ceilings.mjs';
import { startRabbit, startRedis } from '../../../tools/bench-servers.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.join(here, '../../..');
const BIN = path.join(ROOT, 'packages/bench/dist/bin.js');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SYSTEMS = (process.env.SYSTEMS ?? 'mq,redis,rabbitmq').split(',');
const CASES = [
  { id: 'consume-1p-100B', args: ['consume', '--records', 500_000, '--size', 100, '--partitions', 1] },
  { id: 'consume-1p-1KiB', args: ['consume', '--records', 150_000, '--size', 1024, '--partitions', 1] },
  { id: 'consume-group-8p-100B', args: ['consume', '--records', 500_000, '--size', 100, '--partitions', 8, '--consumers', 2, '--group', ''] },
  { id: 'consume-group-8p-1KiB', args: ['consume', '--records', 150_000, '--size', 1024, '--partitions', 8, '--consumers', 2, '--group', ''] },
];

function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args.map(String), '--json', '--quiet'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      try {
        resolve(code === 0 ? JSON.parse(out.trim().split('\n').pop()) : { failed: err.trim().split('\n').pop() });
      } catch {
        resolve({ failed: err.trim().slice(-300) });
      }
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const servers = {};
const results = {};
const ceilings = [];
try {
  if (SYSTEMS.includes('redis')) servers.redis = await startRedis();
  if (SYSTEMS.includes('rabbitmq')) servers.rabbitmq = await startRabbit();
  for (let r = 0; r < ROUNDS; r++) {
    const ws = await wsCeiling({ totalBytes: 512e6, messageBytes: 1 << 20 });
    ceilings.push(ws.consumeMbPerSec);
    process.stderr.write(`round ${r + 1} raw ws server→client: ${ws.consumeMbPerSec.toFixed(1)} MB/s\n`);
    for (const c of CASES) {
      for (const sys of r % 2 ? [...SYSTEMS].reverse() : SYSTEMS) {
        const target = sys === 'mq' ? ['--target', 'mq', '--flush', 'os'] : ['--target', sys, '--peer-address', servers[sys].address, '--durability', servers[sys].durability];
        const res = await run([...c.args, ...target]);
        const key = `${c.id} ${sys}`;
        (results[key] ??= []).push(res.failed ? NaN : res.recordsPerSec);
        process.stderr.write(`round ${r + 1} ${key}: ${res.failed ? `failed: ${res.failed}` : `${Math.round(res.recordsPerSec).toLocaleString('en-US')} records/s, ${res.mbPerSec.toFixed(1)} MB/s`}\n`);
      }
    }
  }
} finally {
  for (const s of Object.values(servers)) await s.stop();
}
console.log(`consume workloads, median of ${ROUNDS} interleaved rounds (records/s; MB/s of values), node ${process.version}`);
console.log(`| workload | ${SYSTEMS.join(' | ')} | mq ÷ best peer |`);
console.log(`|---|${SYSTEMS.map(() => '---:').join('|')}|---:|`);
for (const c of CASES) {
  const size = Number(c.args[c.args.indexOf('--size') + 1]);
  const m = Object.fromEntries(SYSTEMS.map((s) => [s, median((results[`${c.id} ${s}`] ?? []).filter((x) => !Number.isNaN(x)))]));
  const peers = SYSTEMS.filter((s) => s !== 'mq' && !Number.isNaN(m[s]));
  const best = peers.reduce((a, b) => (m[b] > (m[a] ?? -1) ? b : a), peers[0]);
  const cell = (s) => (Number.isNaN(m[s]) ? 'failed' : `${Math.round(m[s]).toLocaleString('en-US')} (${((m[s] * size) / 1e6).toFixed(1)} MB/s)`);
  console.log(`| ${c.id} | ${SYSTEMS.map(cell).join(' | ')} | ${best ? `${(m.mq / m[best]).toFixed(2)}× (${best})` : ''} |`);
  if (size === 1024) console.log(`|   ${c.id} mq ÷ raw ws ceiling | ${((100 * m.mq * size) / 1e6 / median(ceilings)).toFixed(0)}% |`);
}
console.log(`raw ws ceiling, server→client, 1 MiB messages: ${median(ceilings).toFixed(1)} MB/s (rounds: ${ceilings.map((x) => x.toFixed(0)).join(', ')})`);
