#!/usr/bin/env node
// npm run sim:cluster -- --seeds N [--brokers 3|5] [--seed S] [--first S] [--duration MS] [--jobs J] [--script random|stale-epoch] [--trace]
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runClusterSimulation, type ClusterSimResult, type ClusterSimScript } from './cluster-sim.js';

const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '20' },
    seed: { type: 'string' },
    first: { type: 'string', default: '1' },
    brokers: { type: 'string', default: '3' },
    duration: { type: 'string', default: '20000' },
    jobs: { type: 'string', default: '1' },
    trace: { type: 'boolean', default: false },
    script: { type: 'string', default: 'random' },
    /** Internal: run as a worker process, taking one seed at a time from the parent and reporting each result. */
    worker: { type: 'boolean', default: false },
  },
});
const brokers = Number(values.brokers) as 3 | 5;
if (brokers !== 3 && brokers !== 5) {
  console.error(`--brokers must be 3 or 5, got ${values.brokers}`);
  process.exit(2);
}
const script = values.script as ClusterSimScript;
if (script !== 'random' && script !== 'stale-epoch') {
  console.error(`--script must be random or stale-epoch, got ${values.script}`);
  process.exit(2);
}
const first = values.seed !== undefined ? Number(values.seed) : Number(values.first);
const count = values.seed !== undefined ? 1 : Number(values.seeds);
const durationMs = Number(values.duration);
const jobs = values.jobs === 'auto' ? availableParallelism() : Number(values.jobs);
if (![first, count, durationMs, jobs].every(Number.isSafeInteger) || count < 1 || durationMs < 0 || first < 0 || jobs < 1) {
  console.error('--seeds, --seed, --first, --duration and --jobs take non-negative integers (--seeds and --jobs at least 1; --jobs auto: one per core)');
  process.exit(2);
}

/** One seed's figures, as a worker reports them (the trace only when it failed). */
type SeedReport = Omit<ClusterSimResult, 'trace'> & { trace?: string[] };

async function runSeed(seed: number): Promise<ClusterSimResult> {
  return runClusterSimulation({ seed, brokers, durationMs, script, trace: values.trace });
}

/** What the parent tells a worker: the next seed to run, or none (stop). */
interface WorkerOrder {
  seed?: number;
}

if (values.worker) {
  // Every message to the parent (the first says it is ready) asks for the next seed.
  const ask = (message: SeedReport | { ready: true }): Promise<number | undefined> =>
    new Promise((resolve) => {
      process.once('message', (order: WorkerOrder) => resolve(order.seed));
      process.send!(message);
    });
  for (let seed = await ask({ ready: true }); seed !== undefined; ) {
    const r = await runSeed(seed);
    const { trace, ...figures } = r;
    const report: SeedReport = r.ok ? figures : { ...figures, trace: trace.slice(-60) };
    seed = await ask(report);
  }
  process.disconnect();
} else {
  const totals = { clean: 0, acked: 0, consumed: 0, groupReads: 0, groupCommits: 0, groupSessions: 0, txnCommitted: 0, txnAborted: 0, txnUnknown: 0, txnConsumed: 0, crashes: 0, leaderChanges: 0, simulatedMs: 0 };
  const started = performance.now();
  let failed: SeedReport | undefined;
  const add = (r: SeedReport): void => {
    for (const k of Object.keys(totals) as (keyof typeof totals)[]) if (k !== 'clean') totals[k] += r[k];
    if (r.ok) totals.clean++;
    else if (!failed || r.seed < failed.seed) failed = r;
  };
  if (jobs === 1 || count === 1 || values.trace) {
    for (let seed = first; seed < first + count && !failed; seed++) {
      const r = await runSeed(seed);
      if (values.trace) console.log(r.trace.join('\n'));
      add(r.ok ? r : { ...r, trace: values.trace ? [] : r.trace.slice(-60) });
    }
  } else {
    // One process per job, each given the next seed whenever it is free (seeds differ in length: a fixed share per
    // worker left a core idle at the end); the first failure stops the others.
    const self = fileURLToPath(import.meta.url);
    const args = ['--brokers', String(brokers), '--duration', String(durationMs), '--script', script, '--worker'];
    const n = Math.min(jobs, count);
    let next = first;
    const children = Array.from({ length: n }, () => fork(self, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            child.on('message', (m: SeedReport | { ready: true }) => {
              if (!('ready' in m)) {
                add(m);
                if (!m.ok) for (const other of children) if (other !== child && other.exitCode === null) other.kill();
              }
              const order: WorkerOrder = failed || next >= first + count ? {} : { seed: next++ };
              if (child.connected) child.send(order);
            });
            child.on('exit', (code, signal) => {
              if (code !== 0 && signal === null && !failed) failed = { seed: -1, ok: false, violation: `a worker process exited with code ${code}` } as SeedReport;
              resolve();
            });
          }),
      ),
    );
  }
  if (failed) {
    if (failed.trace?.length) console.log(failed.trace.join('\n'));
    console.log(`${totals.clean}/${count} seeds ran clean (${brokers} brokers)`);
    console.error(`FAILED seed ${failed.seed}: ${failed.violation}`);
    console.error(`reproduce: npm run sim:cluster -w @mq/sim -- --seed ${failed.seed} --brokers ${brokers} --duration ${durationMs}${script === 'random' ? '' : ` --script ${script}`} --trace`);
    process.exit(1);
  }
  const wallS = (performance.now() - started) / 1000;
  const t = totals;
  console.log(
    `${t.clean}/${count} seeds ran clean (${brokers} brokers, ${t.acked} acknowledged writes, ${t.consumed} records consumed, ${t.groupReads} read by ${t.groupSessions} group members with ${t.groupCommits} partition commits, ` +
      `${t.txnCommitted} transactions committed, ${t.txnAborted} aborted and ${t.txnUnknown} unanswered with ${t.txnConsumed} records read_committed, ${t.crashes} crashes, ${t.leaderChanges} leader changes, ${(t.simulatedMs / 1000).toFixed(0)} simulated s)`,
  );
  // Wall-clock figures go to stderr, so --trace output on stdout stays byte-identical.
  console.error(`${wallS.toFixed(1)} s wall, ${jobs} job(s): ${(t.simulatedMs / 1000 / wallS).toFixed(2)} simulated s per wall s, ${((count / wallS) * 60).toFixed(1)} seeds/minute`);
}
