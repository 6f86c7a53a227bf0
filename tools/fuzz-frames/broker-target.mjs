/**
 * What is fuzzed: a real `mq broker start` process, or a real cluster (`mq
 * cluster start`, one process per broker), on free ports with temporary data
 * directories; and a sampler of each broker's RSS and open files from /proc.
 * Both targets have one shape: pids, urls (one per broker), bootstrap,
 * exited (the first broker to exit), stop().
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePortRange } from '../free-port.mjs';
import { REPO_ROOT } from './schema.mjs';

const CLI_BIN = path.join(REPO_ROOT, 'packages', 'cli', 'dist', 'bin.js');

/**
 * Keeps the last 200 lines `child` printed (stdout and stderr) in `output`,
 * and resolves with the first non-undefined value `onLine` returns for a line,
 * or rejects after `timeoutMs` or when `exited` resolves first (naming `what`).
 */
function waitForLine(child, output, exited, what, timeoutMs, onLine) {
  return new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start within ${timeoutMs} ms\n${output.join('\n')}`)), timeoutMs);
    const onData = (chunk) => {
      pending += chunk.toString('utf8');
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        output.push(line);
        if (output.length > 200) output.shift();
        const value = onLine(line);
        if (value !== undefined) {
          clearTimeout(timer);
          resolve(value);
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`${what} exited (${code}) before it was up\n${output.join('\n')}`)));
  });
}

export async function startBrokerProcess({ startTimeoutMs = 30_000, config = [] } = {}) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-fuzz-frames-'));
  const child = spawn(process.execPath, [CLI_BIN, 'broker', 'start', '--data-dir', dataDir, '--port', '0', '--http-port', '0', '--log-format', 'json', ...config.flatMap((c) => ['--config-set', c])], {
    cwd: dataDir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  let exitCode;
  // Never leave the broker behind, whatever ends this process.
  const killOnExit = () => {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  const exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? signal;
      process.off('exit', killOnExit);
      resolve(exitCode);
    }),
  );
  const listening = await waitForLine(child, output, exited, 'broker', startTimeoutMs, (line) => (line.includes('"broker listening"') ? JSON.parse(line) : undefined));
  const port = listening.port;
  return {
    /** The Kafka listener's port (when the broker was started with one). */
    kafkaPort: listening.kafkaPort,
    pid: child.pid,
    pids: [child.pid],
    urls: [`ws://127.0.0.1:${port}`],
    port,
    bootstrap: `127.0.0.1:${port}`,
    url: `ws://127.0.0.1:${port}`,
    dataDir,
    output,
    exited,
    get exitCode() {
      return exitCode;
    },
    async stop() {
      if (exitCode === undefined) {
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(t);
      }
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * A cluster of `brokers` processes started by `mq cluster start` (each broker a
 * controller voter), ports from tools/free-port.mjs. `exited` resolves when
 * the first broker exits (or the cluster command itself).
 */
export async function startClusterProcess({ brokers = 3, startTimeoutMs = 60_000, config = [] } = {}) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-fuzz-cluster-'));
  const [port, httpPort, raftPort, interBrokerPort] = [await freePortRange(brokers), await freePortRange(brokers), await freePortRange(brokers), await freePortRange(brokers)];
  const child = spawn(
    process.execPath,
    [CLI_BIN, 'cluster', 'start', '-n', String(brokers), '--data-dir', dataDir, '--port', String(port), '--http-port', String(httpPort), '--raft-port', String(raftPort), '--inter-broker-port', String(interBrokerPort), ...config.flatMap((c) => ['--config-set', c])],
    { cwd: dataDir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output = [];
  const pids = [];
  let exitCode;
  let exitResolve;
  const exited = new Promise((resolve) => (exitResolve = resolve));
  const exit = (code) => {
    if (exitCode !== undefined) return;
    exitCode = code;
    exitResolve(code);
  };
  const killAll = () => {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  };
  process.once('exit', killAll);
  child.once('exit', (code, signal) => exit(`cluster command: ${code ?? signal}`));
  await waitForLine(child, output, exited, 'cluster', startTimeoutMs, (line) => {
    const row = /^(\d+)\s+\S+\s+(\d+)\s+127\.0\.0\.1:(\d+)/.exec(line);
    if (row) pids.push(Number(row[2]));
    return line.startsWith(`cluster of ${brokers} brokers running`) ? true : undefined;
  });
  // A broker that dies is noticed by polling its pid (the cluster command only reports it).
  const watch = setInterval(() => {
    for (const pid of pids) {
      try {
        process.kill(pid, 0);
      } catch {
        exit(`broker pid ${pid} gone`);
      }
    }
  }, 250);
  const urls = Array.from({ length: brokers }, (_, i) => `ws://127.0.0.1:${port + i}`);
  return {
    pids,
    urls,
    url: urls[0],
    bootstrap: urls.map((u) => u.slice('ws://'.length)).join(','),
    dataDir,
    output,
    exited,
    get exitCode() {
      return exitCode;
    },
    async stop() {
      clearInterval(watch);
      const done = new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', resolve)));
      child.kill('SIGINT');
      const t = setTimeout(killAll, 20_000);
      await done;
      clearTimeout(t);
      process.off('exit', killAll);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Samples RSS (MiB) and open file count of each of `pids` every `intervalMs`, keeping the maxima of any one process. */
export function sampleProcess(pids, intervalMs = 250) {
  // Maxima over the run, and the latest sample (the largest of any one process), for progress lines.
  const stats = { rssMaxMb: 0, fdsMax: 0, rssNowMb: 0, fdsNow: 0, samples: 0 };
  const sample = async () => {
    let rssNow = 0;
    let fdsNow = 0;
    for (const pid of [pids].flat()) {
      try {
        const status = await readFile(`/proc/${pid}/status`, 'utf8');
        const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
        const fds = (await readdir(`/proc/${pid}/fd`)).length;
        rssNow = Math.max(rssNow, Math.round(kb / 1024));
        fdsNow = Math.max(fdsNow, fds);
      } catch {
        // the process is gone; the runner notices the exit
      }
    }
    stats.rssNowMb = rssNow;
    stats.fdsNow = fdsNow;
    stats.rssMaxMb = Math.max(stats.rssMaxMb, rssNow);
    stats.fdsMax = Math.max(stats.fdsMax, fdsNow);
    stats.samples++;
  };
  const timer = setInterval(() => void sample(), intervalMs);
  void sample();
  return {
    stats,
    async stop() {
      clearInterval(timer);
      await sample();
    },
  };
}
