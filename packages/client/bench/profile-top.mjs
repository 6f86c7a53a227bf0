// Top self-time functions of a V8 .cpuprofile (node --cpu-prof), as a share
// of the busy time (idle and program left out), and the same self time
// grouped by where the code lives (an mq package, ws, protobufjs, Node's own
// JavaScript, natives, GC). With --per N every figure is also divided by N
// (µs per request, for a profile of N requests: sync-cost.mjs).
// Usage: node profile-top.mjs <file.cpuprofile> [count] [--per N]
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

/** Where a function's code lives: an mq package, a dependency, Node's own JavaScript, a native, or V8's pseudo-nodes. */
export function categoryOf(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) {
    if (functionName === '(garbage collector)') return 'gc';
    if (functionName === '(program)' || functionName === '(idle)' || functionName === '(root)') return functionName;
    return 'native';
  }
  const pkg = /\/packages\/([^/]+)\//.exec(url);
  if (pkg) return `mq/${pkg[1]}`;
  const dep = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  if (dep) return dep[1];
  if (url.startsWith('node:')) return 'node';
  return 'other';
}

/** Self time (µs) by function and by category, busy time without (idle) and (program). */
export function summarize(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n);
  const self = new Map();
  const categories = new Map();
  let busy = 0;
  let program = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const n = byId.get(profile.samples[i]);
    const dt = profile.timeDeltas[i] ?? 0;
    const cf = n.callFrame;
    const category = categoryOf(cf);
    if (category === '(idle)' || category === '(root)') continue;
    if (category === '(program)') {
      program += dt;
      continue;
    }
    busy += dt;
    const where = cf.url ? `${cf.url.replace(/^.*\/(packages|node_modules)\//, '$1/').replace(/^file:\/\//, '')}:${cf.lineNumber + 1}` : '(native)';
    // A native (a system call's binding, say) is named with its JavaScript caller: writev ← Socket._writeGeneric.
    const caller = where === '(native)' ? parentOf.get(n.id)?.callFrame : undefined;
    const k = `${cf.functionName || '(anonymous)'}  ${where}${caller?.url ? ` ← ${caller.functionName || '(anonymous)'} ${caller.url.replace(/^.*\/(packages|node_modules)\//, '$1/').replace(/^file:\/\//, '')}:${caller.lineNumber + 1}` : ''}`;
    self.set(k, (self.get(k) ?? 0) + dt);
    categories.set(category, (categories.get(category) ?? 0) + dt);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]);
  return { busy, program, functions: sorted(self), categories: sorted(categories) };
}

/** The summary as text: categories, then the top `count` functions; with `per`, µs per request beside each. */
export function formatSummary(s, { count = 25, per = 0 } = {}) {
  const us = (v) => (per > 0 ? `${(v / per).toFixed(2).padStart(7)} µs/req` : `${(v / 1000).toFixed(0).padStart(6)} ms`);
  const pct = (v) => `${((100 * v) / s.busy).toFixed(1).padStart(5)}%`;
  const lines = [`busy ${us(s.busy)} (program, outside JS and not idle: ${us(s.program)})`, 'by category:'];
  for (const [k, v] of s.categories) lines.push(`${pct(v)}  ${us(v)}  ${k}`);
  lines.push('top functions:');
  for (const [k, v] of s.functions.slice(0, count)) lines.push(`${pct(v)}  ${us(v)}  ${k}`);
  return lines.join('\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const perAt = args.indexOf('--per');
  const per = perAt >= 0 ? Number(args.splice(perAt, 2)[1]) : 0;
  const [file, countArg] = args;
  console.log(formatSummary(summarize(JSON.parse(readFileSync(file, 'utf8'))), { count: Number(countArg ?? 25), per }));
}
