// Preload (node -r) for A/B runs of the bench CLI: at exit, appends this
// process's own CPU time (process.cpuUsage: child processes such as the local
// broker not counted) and its GC time and count (a 'gc' PerformanceObserver)
// as one JSON line to the file named by CPU_OUT.
const { PerformanceObserver } = require('node:perf_hooks');
const fs = require('node:fs');
let gcMs = 0;
let gcN = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    gcMs += e.duration;
    gcN++;
  }
}).observe({ entryTypes: ['gc'] });
const t0 = process.cpuUsage();
let done = false;
function dump() {
  if (done || !process.env.CPU_OUT) return;
  done = true;
  const c = process.cpuUsage(t0);
  fs.appendFileSync(process.env.CPU_OUT, JSON.stringify({ cpuMs: (c.user + c.system) / 1000, gcMs: Math.round(gcMs), gcN }) + '\n');
}
process.on('beforeExit', dump);
const exit = process.exit;
process.exit = function (code) {
  dump();
  return exit.call(process, code);
};
