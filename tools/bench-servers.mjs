// Starts and stops the peer servers for tools/peer-bench.mjs: each on
// loopback, on a free port, with a private data directory that is removed
// afterwards. Used only by the peer comparison.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './free-port.mjs';

export { freePort };

export async function waitForPort(port, timeoutMs, child, output) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited (${child.exitCode}) before listening:\n${output.join('')}`);
    const ok = await new Promise((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      sock.once('connect', () => {
        sock.destroy();
        resolve(true);
      });
      sock.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`server did not listen on ${port} within ${timeoutMs} ms:\n${output.join('').slice(-4000)}`);
}

function launch(cmd, args, options) {
  const output = [];
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true, ...options });
  const keep = (d) => {
    output.push(d.toString());
    if (output.length > 200) output.shift();
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { child, output, exited };
}

async function stopProcess(proc, signal = 'SIGTERM', graceMs = 15000) {
  if (proc.child.exitCode !== null || proc.child.signalCode !== null) return;
  try {
    process.kill(-proc.child.pid, signal);
  } catch {
    // already gone
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-proc.child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }, graceMs);
  await proc.exited;
  clearTimeout(timer);
}

/** Waits for a server to listen; if it does not, stops it and removes its directory. */
async function waitOrClean(proc, port, dir) {
  try {
    await waitForPort(port, 20000, proc.child, proc.output);
  } catch (err) {
    await stopProcess(proc, 'SIGTERM', 5000);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** nats-server with JetStream on file storage. */
export async function startNats() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-nats-'));
  const port = await freePort();
  const proc = launch('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', dir, '-m', '0']);
  await waitOrClean(proc, port, dir);
  return {
    name: 'nats',
    address: `127.0.0.1:${port}`,
    durability: 'JetStream file storage, R1; the 2.9 server has no per-write fsync option (sync_interval arrived in 2.10), so acks come after the write to the OS',
    async stop() {
      await stopProcess(proc);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** redis-server with the append-only file on (appendfsync everysec, or always). */
export async function startRedis({ fsync = 'everysec' } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-redis-'));
  const port = await freePort();
  const proc = launch('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', fsync,
    '--save', '', '--protected-mode', 'no', '--daemonize', 'no', '--maxmemory', '0',
  ]);
  await waitOrClean(proc, port, dir);
  return {
    name: fsync === 'always' ? 'redis-fsync' : 'redis',
    address: `127.0.0.1:${port}`,
    durability:
      fsync === 'always'
        ? 'appendonly yes, appendfsync always (AOF fsynced before the reply; group commit per event-loop turn)'
        : 'appendonly yes, appendfsync everysec (AOF written before the reply, fsync once a second)',
    async stop() {
      await stopProcess(proc);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * rabbitmq-server (Debian 3.10) with the stream plugin, its own node name,
 * ports and directories. Another process can take one of the free ports
 * between the probe and the VM's bind (the VM then stops at boot), so a
 * failed start is cleaned up and retried on fresh ports.
 */
export async function startRabbit({ attempts = 3 } = {}) {
  for (let i = 1; ; i++) {
    try {
      return await startRabbitOnce();
    } catch (err) {
      if (i >= attempts) throw err;
    }
  }
}

async function startRabbitOnce() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-rabbit-'));
  const [amqpPort, streamPort, distPort] = [await freePort(), await freePort(), await freePort()];
  await mkdir(path.join(dir, 'home'), { recursive: true });
  await writeFile(path.join(dir, 'enabled_plugins'), '[rabbitmq_stream].\n');
  await writeFile(
    path.join(dir, 'rabbitmq.conf'),
    [
      `listeners.tcp.1 = 127.0.0.1:${amqpPort}`,
      `stream.listeners.tcp.1 = 127.0.0.1:${streamPort}`,
      'stream.advertised_host = 127.0.0.1',
      'loopback_users = none',
      'log.console = true',
      'log.console.level = warning',
      'log.file = false',
      '',
    ].join('\n'),
  );
  const node = `bench${process.pid}@localhost`;
  const env = {
    ...process.env,
    HOME: path.join(dir, 'home'),
    RABBITMQ_NODENAME: node,
    RABBITMQ_CONFIG_FILE: path.join(dir, 'rabbitmq.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: path.join(dir, 'enabled_plugins'),
    RABBITMQ_MNESIA_BASE: path.join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: path.join(dir, 'log'),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_PID_FILE: path.join(dir, 'rabbit.pid'),
    ERL_EPMD_ADDRESS: '127.0.0.1',
  };
  const proc = launch('/usr/lib/rabbitmq/bin/rabbitmq-server', [], { env, cwd: dir });
  try {
    await waitForPort(streamPort, 90000, proc.child, proc.output);
  } catch (err) {
    await stopProcess(proc, 'SIGTERM', 5000);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: 'rabbitmq',
    address: `127.0.0.1:${streamPort}`,
    durability: 'stream queue (osiris), confirm after the write to the OS; RabbitMQ has no per-write fsync option for streams',
    async stop() {
      await new Promise((resolve) => {
        const ctl = spawn('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-n', node, 'stop'], { env, stdio: 'ignore' });
        ctl.once('exit', resolve);
        ctl.once('error', resolve);
      });
      await stopProcess(proc, 'SIGTERM', 20000);
      // epmd is started by the Erlang VM and outlives it; leave it only if it was already running before us.
      await rm(dir, { recursive: true, force: true });
    },
  };
}
