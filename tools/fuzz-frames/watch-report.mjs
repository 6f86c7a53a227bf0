#!/usr/bin/env node
/**
 * Reads what tools/fuzz-frames/event-loop-watch.mjs and `--trace` wrote and says what held the steady client:
 *   node tools/fuzz-frames/watch-report.mjs <dir> [trace.json] [--min-ms 50]
 * 1. From each broker CPU profile: the synchronous steps (runs of non-idle samples) of at least --min-ms, longest
 *    first, each with the mq functions on most of its stacks; and how much of their wall time was on a CPU.
 * 2. From the trace: each acknowledgment of 100 ms or more, whether a broker gap, a gap of the fuzzer's own process
 *    (which runs the steady client), both or neither overlapped it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const args = process.argv.slice(2);
const minIdx = args.indexOf('--min-ms');
const minMs = minIdx >= 0 ? Number(args.splice(minIdx, 2)[1]) : 50;
const [dir, traceFile] = args;
if (!dir) throw new Error('usage: watch-report.mjs <dir> [trace.json] [--min-ms 50]');
const files = readdirSync(dir);

function steps(profile) {
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const label = (id) => {
    const f = nodes.get(id).callFrame;
    return `${f.functionName || '(anon)'}@${f.url.split('/').pop()}:${f.lineNumber + 1}`;
  };
  const runs = [];
  let cur;
  let t = profile.startTime;
  profile.samples.forEach((s, i) => {
    t += profile.timeDeltas[i];
    if (nodes.get(s).callFrame.functionName === '(idle)') {
      if (cur) runs.push(cur);
      cur = undefined;
    } else {
      cur ??= { from: t, to: t, samples: [] };
      cur.to = t;
      cur.samples.push(s);
    }
  });
  if (cur) runs.push(cur);
  return runs
    .map((r) => {
      const counts = new Map();
      for (const s of r.samples) {
        const seen = new Set();
        for (let id = s; id !== undefined; id = parent.get(id)) {
          const url = nodes.get(id).callFrame.url;
          if (!url.includes('/packages/') && !url.includes('protobufjs') && !url.includes('pino')) continue;
          const l = label(id);
          if (!seen.has(l)) counts.set(l, (counts.get(l) ?? 0) + 1);
          seen.add(l);
        }
      }
      const top = [...counts].filter(([, n]) => n / r.samples.length >= 0.3).sort((a, b) => b[1] - a[1]).map(([l, n]) => `${Math.round((100 * n) / r.samples.length)}% ${l}`);
      return { ms: (r.to - r.from) / 1000, samples: r.samples.length, top };
    })
    .filter((r) => r.ms >= minMs)
    .sort((a, b) => b.ms - a.ms);
}

for (const f of files.filter((f) => f.endsWith('.cpuprofile'))) {
  const list = steps(JSON.parse(readFileSync(path.join(dir, f), 'utf8')));
  const wall = list.reduce((n, r) => n + r.ms, 0);
  const cpu = list.reduce((n, r) => n + r.samples, 0);
  console.log(`${f}: ${list.length} steps of ${minMs} ms or more, ${(wall / 1000).toFixed(1)} s wall, about ${(cpu / 1000).toFixed(1)} s on a CPU (1 ms samples)`);
  for (const r of list.slice(0, 30)) console.log(`  ${r.ms.toFixed(0).padStart(5)} ms  ${r.top.slice(0, 6).join(' | ') || '(no mq function on 30% of its stacks)'}`);
}

if (traceFile) {
  const gapsOf = (role) =>
    files
      .filter((f) => f.startsWith(`gaps-${role}-`))
      .flatMap((f) => readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => l.includes('gapMs')).map((l) => JSON.parse(l)));
  const broker = gapsOf('broker');
  const fuzzer = gapsOf('fuzzer');
  const { acks } = JSON.parse(readFileSync(traceFile, 'utf8'));
  const overlap = (gaps, from, to) => gaps.filter((g) => g.end > from && g.end - g.gapMs < to).reduce((n, g) => n + g.gapMs, 0);
  const tally = { broker: 0, fuzzer: 0, both: 0, neither: 0 };
  for (const [end, ms] of acks.filter(([, ms]) => ms >= 100)) {
    const b = overlap(broker, end - ms, end) >= 0.3 * ms;
    const f = overlap(fuzzer, end - ms, end) >= 0.3 * ms;
    tally[b && f ? 'both' : b ? 'broker' : f ? 'fuzzer' : 'neither']++;
  }
  console.log(`acknowledgments: ${acks.length}; of 100 ms or more, overlapped (30% of their time) by a gap of the broker only ${tally.broker}, the fuzzer only ${tally.fuzzer}, both ${tally.both}, neither ${tally.neither}`);
}
