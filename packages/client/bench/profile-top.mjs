// Top self-time functions of a V8 .cpuprofile (node --cpu-prof), as a share
// of the busy time (idle and program left out).
// Usage: node profile-top.mjs <file.cpuprofile> [count]
import { readFileSync } from 'node:fs';

const [file, countArg] = process.argv.slice(2);
const prof = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
for (let i = 0; i < prof.samples.length; i++) {
  const n = byId.get(prof.samples[i]);
  const dt = prof.timeDeltas[i] ?? 0;
  const cf = n.callFrame;
  const where = cf.url ? `${cf.url.replace(/^.*\/(packages|node_modules)\//, '$1/')}:${cf.lineNumber + 1}` : '(native)';
  const k = `${cf.functionName || '(anonymous)'}  ${where}`;
  self.set(k, (self.get(k) ?? 0) + dt);
}
let busy = 0;
for (const [k, v] of self) if (!k.startsWith('(idle)') && !k.startsWith('(program)')) busy += v;
const top = [...self].filter(([k]) => !k.startsWith('(idle)') && !k.startsWith('(program)')).sort((a, b) => b[1] - a[1]);
console.log(`busy ${(busy / 1000).toFixed(0)} ms`);
for (const [k, v] of top.slice(0, Number(countArg ?? 25))) console.log(`${((100 * v) / busy).toFixed(1).padStart(5)}%  ${(v / 1000).toFixed(0).padStart(6)} ms  ${k}`);
