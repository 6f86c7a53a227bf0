// Side by side, interleaved: runs latency-probe.mjs RUNS times for each of
// two client builds (A = BEFORE_DIST, B = this package's dist), alternating
// A, B, A, B... so both see the same machine load, and prints the medians.
// The scenario comes from the probe's env (RATE, SECONDS, LINGER, WARM).
// Usage: BEFORE_DIST=<client dist dir> RUNS=5 RATE=0 node latency-ab.mjs [broker dist dir]
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const runs = Number(process.env.RUNS ?? 5);
const before = process.env.BEFORE_DIST;
if (!before) throw new Error('set BEFORE_DIST to the dist directory of the client build to compare against');
const sides = [
  ['A (before)', path.resolve(before)],
  ['B (after)', path.join(here, '../dist')],
];
const results = new Map(sides.map(([label]) => [label, []]));
for (let i = 0; i < runs; i++) {
  for (const [label, dist] of sides) {
    const out = execFileSync(process.execPath, [path.join(here, 'latency-probe.mjs'), ...process.argv.slice(2)], {
      env: { ...process.env, CLIENT_DIST: dist, BUCKET: '0' },
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const r = JSON.parse(out.trim().split('\n').at(-1));
    results.get(label).push(r);
    process.stderr.write(`${label} run ${i + 1}: p50 ${r.p50.toFixed(3)} p99 ${r.p99.toFixed(3)} ms, ${r.requests} requests\n`);
  }
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms) => (ms < 1 ? `${(ms * 1000).toFixed(0)} µs` : `${ms.toFixed(2)} ms`);
console.log(`| client | p50 | p90 | p99 | p99.9 | max | records/s | KiB/request |  (medians of ${runs})`);
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const [label, rs] of results) {
  const m = (k) => median(rs.map((r) => r[k]));
  const rate = median(rs.map((r) => r.records / r.seconds));
  console.log(`| ${label} | ${fmt(m('p50'))} | ${fmt(m('p90'))} | ${fmt(m('p99'))} | ${fmt(m('p999'))} | ${fmt(m('max'))} | ${Math.round(rate).toLocaleString('en')} | ${m('kibPerRequest').toFixed(1)} |`);
}
