/**
 * Watches the event loop of the fuzzer and of the brokers it starts (issue 22: what holds the steady client's
 * acknowledgments). Loaded into every process of a run through NODE_OPTIONS, active when MQ_FUZZ_WATCH_DIR names a
 * directory:
 *   MQ_FUZZ_WATCH_DIR=/tmp/w NODE_OPTIONS="--import $PWD/tools/fuzz-frames/event-loop-watch.mjs" \
 *     node tools/fuzz-frames.mjs --seed 20261202 --frames 60000 --trace /tmp/w/trace.json
 * Each process writes <dir>/gaps-<role>-<pid>.jsonl: every gap of more than 30 ms in a 5 ms interval timer
 * ({ end: wall ms, gapMs }) and, every 10 s, monitorEventLoopDelay's p50/p99/max. With MQ_FUZZ_WATCH_PROFILE=1 each
 * broker also writes a CPU profile (<dir>/broker-<pid>.cpuprofile, sampled every 1 ms) when it exits cleanly.
 */
import fs from 'node:fs';
import inspector from 'node:inspector';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

const dir = process.env.MQ_FUZZ_WATCH_DIR;
const role = process.argv.some((a) => a.endsWith('fuzz-frames.mjs')) ? 'fuzzer' : process.argv.includes('broker') ? 'broker' : undefined;
if (dir && role) {
  const out = fs.openSync(path.join(dir, `gaps-${role}-${process.pid}.jsonl`), 'a');
  const TICK_MS = 5;
  let last = performance.now();
  setInterval(() => {
    const now = performance.now();
    const gap = now - last - TICK_MS;
    if (gap > 30) fs.writeSync(out, `${JSON.stringify({ end: Date.now(), gapMs: Math.round(gap) })}\n`);
    last = now;
  }, TICK_MS).unref();
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  setInterval(() => {
    fs.writeSync(out, `${JSON.stringify({ wall: Date.now(), p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6 })}\n`);
    h.reset();
  }, 10_000).unref();
  if (role === 'broker' && process.env.MQ_FUZZ_WATCH_PROFILE === '1') {
    const session = new inspector.Session();
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: 1000 });
    session.post('Profiler.start');
    // The in-process session answers synchronously, so the profile is written before the process ends.
    process.on('exit', () =>
      session.post('Profiler.stop', (err, r) => {
        if (!err) fs.writeFileSync(path.join(dir, `broker-${process.pid}.cpuprofile`), JSON.stringify(r.profile));
      }),
    );
  }
}
