/**
 * The broker under test: a real `mq broker start` process on free ports with a
 * temporary data directory, and a sampler of its RSS and open files from /proc.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { REPO_ROOT } from './schema.mjs';

const CLI_BIN = path.join(REPO_ROOT, 'packages', 'cli', 'dist', 'bin.js');

export async function startBrokerProcess({ startTimeoutMs = 30_000 } = {}) {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-fuzz-frames-'));
  const child = spawn(process.execPath, [CLI_BIN, 'broker', 'start', '--data-dir', dataDir, '--port', '0', '--http-port', '0'], {
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
  const port = await new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => reject(new Error(`broker did not start within ${startTimeoutMs} ms\n${output.join('\n')}`)), startTimeoutMs);
    const onData = (chunk) => {
      pending += chunk.toString('utf8');
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        output.push(line);
        if (output.length > 200) output.shift();
        if (line.includes('"broker listening"')) {
          clearTimeout(timer);
          resolve(JSON.parse(line).port);
        }
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => reject(new Error(`broker exited (${code}) before listening\n${output.join('\n')}`)));
  });
  return {
    pid: child.pid,
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

/** Samples RSS (MiB) and open file count of `pid` every `intervalMs`, keeping the maxima. */
export function sampleProcess(pid, intervalMs = 250) {
  const stats = { rssMaxMb: 0, fdsMax: 0, samples: 0 };
  const sample = async () => {
    try {
      const status = await readFile(`/proc/${pid}/status`, 'utf8');
      const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
      const fds = (await readdir(`/proc/${pid}/fd`)).length;
      stats.rssMaxMb = Math.max(stats.rssMaxMb, Math.round(kb / 1024));
      stats.fdsMax = Math.max(stats.fdsMax, fds);
      stats.samples++;
    } catch {
      // the process is gone; the runner notices the exit
    }
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
