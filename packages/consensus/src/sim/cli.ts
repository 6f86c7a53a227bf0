#!/usr/bin/env node
// npm run sim -w @mq/consensus -- --seeds N [--nodes 3|5] [--seed S] [--trace]
import { parseArgs } from 'node:util';
import { runSimulation } from './simulator.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '100' },
    seed: { type: 'string' },
    nodes: { type: 'string', default: '3' },
    duration: { type: 'string', default: '6000' },
    trace: { type: 'boolean', default: false },
  },
});
const nodes = Number(values.nodes);
if (nodes !== 3 && nodes !== 5) {
  console.error(`--nodes must be 3 or 5, got ${values.nodes}`);
  process.exit(2);
}
const first = values.seed !== undefined ? Number(values.seed) : 1;
const count = values.seed !== undefined ? 1 : Number(values.seeds);
if (!Number.isSafeInteger(first) || !Number.isSafeInteger(count) || count < 1) {
  console.error('--seeds and --seed take positive integers');
  process.exit(2);
}
let clean = 0;
let ops = 0;
let elections = 0;
let snapshots = 0;
let crashes = 0;
let confChanges = 0;
const started = Date.now();
for (let seed = first; seed < first + count; seed++) {
  const r = await runSimulation({ seed, nodes, durationMs: Number(values.duration), trace: values.trace });
  if (values.trace && r.ok) console.log(r.trace.join('\n'));
  ops += r.okOps;
  elections += r.elections;
  snapshots += r.snapshotsInstalled;
  crashes += r.crashes;
  confChanges += r.confChanges;
  if (!r.ok) {
    if (values.trace) console.log(r.trace.join('\n'));
    console.log(`${clean}/${count} seeds ran clean (${nodes} nodes)`);
    console.error(`FAILED seed ${seed}: ${r.violation}`);
    console.error(`reproduce: npm run sim -w @mq/consensus -- --seed ${seed} --nodes ${nodes} --trace`);
    process.exit(1);
  }
  clean++;
}
console.log(
  `${clean}/${count} seeds ran clean (${nodes} nodes, ${ops} acknowledged client ops, ${elections} elections, ${crashes} crashes, ${confChanges} membership changes, ${snapshots} snapshot restores, ${((Date.now() - started) / 1000).toFixed(1)} s)`,
);
