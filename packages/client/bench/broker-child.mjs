// A broker in its own process for the consume benchmark: imports @mq/broker's
// dist from the directory given (so two builds can be compared side by side),
// prints `port <n>` when listening and closes on SIGTERM or when stdin ends
// (its parent exited).
// MQ_BENCH_PROFILE=file: SIGUSR2 starts a CPU profile, written to file on SIGTERM
// (MQ_BENCH_PROFILE_INTERVAL_US: its sampling interval, V8's default 1000 µs).
// Usage: node broker-child.mjs <broker dist dir> <data dir>
import { rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pino from 'pino';

const [distDir, dataDir] = process.argv.slice(2);
const { startBroker } = await import(pathToFileURL(path.resolve(distDir, 'index.js')).href);
const broker = await startBroker(
  { dataDir, port: 0, httpPort: 0, config: { 'log.flush.policy': 'os' } },
  { logger: pino({ level: 'warn' }) },
);
process.stdout.write(`port ${broker.port}\n`);
// With MQ_BENCH_PROFILE=file, SIGUSR2 starts a CPU profile that is written there on exit.
let session;
process.on('SIGUSR2', () => {
  if (!process.env.MQ_BENCH_PROFILE || session) return;
  session = new Session();
  session.connect();
  const interval = Number(process.env.MQ_BENCH_PROFILE_INTERVAL_US ?? 0);
  void session
    .post('Profiler.enable')
    .then(() => (interval > 0 ? session.post('Profiler.setSamplingInterval', { interval }) : undefined))
    .then(() => session.post('Profiler.start'))
    .then(() => process.stdout.write('profiling\n'));
});
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  if (session) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(process.env.MQ_BENCH_PROFILE, JSON.stringify(profile));
  }
  await broker.close();
  rmSync(dataDir, { recursive: true, force: true }); // the data is the benchmark's, gone with it
  process.exit(0);
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
// The parent holds our stdin: when it goes away (even killed), stop too.
process.stdin.on('end', stop);
process.stdin.resume();
