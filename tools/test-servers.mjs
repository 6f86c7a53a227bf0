// Real PostgreSQL and Redis servers for tests and benchmarks: Debian's binaries
// (tools/ensure-test-servers.sh installs them), each started on a free loopback
// port with a private data directory, stopped and removed by `stop()`. Nothing
// is shared with a system-wide server.
import { spawn, execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.mjs';

/** The newest Debian PostgreSQL's bin directory (/usr/lib/postgresql/<major>/bin), or null. */
export function postgresBinDir() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const majors = readdirSync(root).filter((d) => /^\d+$/.test(d) && existsSync(path.join(root, d, 'bin', 'postgres')));
  if (majors.length === 0) return null;
  majors.sort((a, b) => Number(b) - Number(a));
  return path.join(root, majors[0], 'bin');
}

function waitForPort(port, timeoutMs, child, name, output) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (child.exitCode !== null) {
        reject(new Error(`${name} exited with ${child.exitCode} before listening: ${output().slice(-2000)}`));
        return;
      }
      const s = net.connect({ port, host: '127.0.0.1' });
      s.once('connect', () => {
        s.destroy();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > deadline) reject(new Error(`${name} did not listen on ${port} within ${timeoutMs} ms: ${output().slice(-2000)}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

function stopChild(child, signal) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, 10_000);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}

/**
 * PostgreSQL already running as root refuses to start: as root, initdb and postgres run as the `postgres`
 * user that Debian's package creates, over a data directory it owns.
 */
function asServerUser(cmd, args) {
  if (process.getuid?.() !== 0) return [cmd, args];
  return ['runuser', ['-u', 'postgres', '--', cmd, ...args]];
}

/**
 * Starts a private PostgreSQL on 127.0.0.1: trust authentication for user `postgres`, database `postgres`,
 * fsync off (the tests kill clients, never this server). Returns its connection string and `stop()`.
 */
export async function startPostgres(options = {}) {
  const bin = postgresBinDir();
  if (!bin) throw new Error('PostgreSQL is not installed (run: bash tools/ensure-test-servers.sh)');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mq-pg-'));
  const data = path.join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
  const [initCmd, initArgs] = asServerUser(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  execFileSync(initCmd, initArgs, { stdio: 'pipe' });
  const port = await freePort();
  const settings = ['-c', 'fsync=off', '-c', 'full_page_writes=off', '-c', `max_connections=${options.maxConnections ?? 50}`];
  if (options.synchronousCommit === false) settings.push('-c', 'synchronous_commit=off');
  const [cmd, args] = asServerUser(path.join(bin, 'postgres'), ['-D', data, '-h', '127.0.0.1', '-p', String(port), '-k', dir, ...settings]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await waitForPort(port, 30_000, child, 'postgres', () => out);
  // Listening is not yet accepting queries: wait until a query works (pg_isready).
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      execFileSync(path.join(bin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres'], { stdio: 'pipe' });
      break;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`postgres on ${port} not ready: ${out.slice(-2000)}`, { cause: err });
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    output: () => out,
    async stop() {
      await stopChild(child, 'SIGINT'); // fast shutdown
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a private Redis on 127.0.0.1 with no persistence. Returns its URL and `stop()`. */
export async function startRedis() {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'mq-redis-'));
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'yes'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.on('error', (err) => (out += `spawn redis-server: ${err.message} (run: bash tools/ensure-test-servers.sh)\n`));
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  await waitForPort(port, 30_000, child, 'redis-server', () => out);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    output: () => out,
    async stop() {
      await stopChild(child, 'SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
