#!/usr/bin/env node
// npm run sim:cluster -- --seeds N [--brokers 3|5] [--seed S] [--duration MS] [--trace]
import { parseArgs } from 'node:util';
import { runClusterSimulation } from './cluster-sim.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '20' },
    seed: { type: 'string' },
    brokers: { type: 'string', default: '3' },
    duration: { type: 'string', default: '20000' },
    trace: { type: 'boolean', default: false },
  },
});
const brokers = Number(values.brokers);
if (brokers !== 3 && brokers !== 5) {
  console.error(`--brokers must be 3 or 5, got ${values.brokers}`);
  process.exit(2);
}
const first = values.seed !== undefined ? Number(values.seed) : 1;
const count = values.seed !== undefined ? 1 : Number(values.seeds);
const durationMs = Number(values.duration);
if (!Number.isSafeInteger(first) || !Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(durationMs) || durationMs < 0) {
  console.error('--seeds, --seed and --duration take non-negative integers');
  process.exit(2);
}
let clean = 0;
let acked = 0;
let consumed = 0;
let groupReads = 0;
let groupCommits = 0;
let groupSessions = 0;
let txnCommitted = 0;
let txnAborted = 0;
let txnUnknown = 0;
let txnConsumed = 0;
let crashes = 0;
let leaderChanges = 0;
let simulatedMs = 0;
const started = performance.now();
for (let seed = first; seed < first + count; seed++) {
  const r = await runClusterSimulation({ seed, brokers, durationMs, trace: values.trace });
  if (values.trace) console.log(r.trace.join('\n'));
  acked += r.acked;
  consumed += r.consumed;
  groupReads += r.groupReads;
  groupCommits += r.groupCommits;
  groupSessions += r.groupSessions;
  txnCommitted += r.txnCommitted;
  txnAborted += r.txnAborted;
  txnUnknown += r.txnUnknown;
  txnConsumed += r.txnConsumed;
  crashes += r.crashes;
  leaderChanges += r.leaderChanges;
  simulatedMs += r.simulatedMs;
  if (!r.ok) {
    if (!values.trace) console.log(r.trace.slice(-60).join('\n'));
    console.log(`${clean}/${count} seeds ran clean (${brokers} brokers)`);
    console.error(`FAILED seed ${seed}: ${r.violation}`);
    console.error(`reproduce: npm run sim:cluster -w @mq/sim -- --seed ${seed} --brokers ${brokers} --duration ${durationMs} --trace`);
    process.exit(1);
  }
  clean++;
}
const wallS = (performance.now() - started) / 1000;
// The figures below are wall-clock measurements: they go to stderr, so --trace output on stdout stays byte-identical.
console.log(`${clean}/${count} seeds ran clean (${brokers} brokers, ${acked} acknowledged writes, ${consumed} records consumed, ${groupReads} read by ${groupSessions} group members with ${groupCommits} partition commits, ${txnCommitted} transactions committed, ${txnAborted} aborted and ${txnUnknown} unanswered with ${txnConsumed} records read_committed, ${crashes} crashes, ${leaderChanges} leader changes, ${(simulatedMs / 1000).toFixed(0)} simulated s)`);
console.error(`${wallS.toFixed(1)} s wall: ${(simulatedMs / 1000 / wallS).toFixed(2)} simulated s per wall s, ${((count / wallS) * 60).toFixed(1)} seeds/minute`);
