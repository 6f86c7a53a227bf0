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
  let node;
  try {
    node = await launchRabbitNode(dir, `bench${process.pid}`);
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    name: 'rabbitmq',
    address: `127.0.0.1:${node.streamPort}`,
    durability: 'stream queue (osiris), confirm after the write to the OS; RabbitMQ has no per-write fsync option for streams',
    async stop() {
      await node.stop();
      // epmd is started by the Erlang VM and outlives it; leave it only if it was already running before us.
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * One RabbitMQ node (Debian 3.10, stream plugin) under `base`: its own node
 * name, free AMQP, stream and distribution ports, directories; HOME (and so
 * the Erlang cookie) is `home`, shared by the nodes of one cluster.
 */
async function launchRabbitNode(base, name, home = path.join(base, 'home')) {
  const dir = path.join(base, name);
  const [amqpPort, streamPort, distPort] = [await freePort(), await freePort(), await freePort()];
  await mkdir(dir, { recursive: true });
  await mkdir(home, { recursive: true });
  await writeFile(path.join(dir, 'enabled_plugins'), '[rabbitmq_stream].\n');
  await writeFile(
    path.join(dir, 'rabbitmq.conf'),
    [
      `listeners.tcp.1 = 127.0.0.1:${amqpPort}`,
      `stream.listeners.tcp.1 = 127.0.0.1:${streamPort}`,
      'stream.advertised_host = 127.0.0.1',
      `stream.advertised_port = ${streamPort}`,
      'loopback_users = none',
      'log.console = true',
      'log.console.level = warning',
      'log.file = false',
      '',
    ].join('\n'),
  );
  const node = `${name}@localhost`;
  const env = {
    ...process.env,
    HOME: home,
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
    throw err;
  }
  const ctl = (...args) =>
    new Promise((resolve, reject) => {
      const out = [];
      const c = spawn('/usr/lib/rabbitmq/bin/rabbitmqctl', ['-n', node, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      c.stdout.on('data', (d) => out.push(d));
      c.stderr.on('data', (d) => out.push(d));
      c.once('error', reject);
      c.once('exit', (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`rabbitmqctl ${args.join(' ')} on ${node}: exit ${code}: ${Buffer.concat(out).toString().trim()}`))));
    });
  return {
    node,
    streamPort,
    proc,
    ctl,
    async stop() {
      await ctl('stop').catch(() => undefined);
      await stopProcess(proc, 'SIGTERM', 20000);
    },
  };
}

/**
 * A RabbitMQ cluster of `nodes` nodes on loopback: every node boots alone,
 * then each but the first `stop_app`, `join_cluster`s the first and
 * `start_app`s again (the documented manual clustering steps). Streams on it
 * get `initial-cluster-size` replicas (the adapter's --replicas).
 */
export async function startRabbitCluster({ nodes = 3 } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-rabbit-cluster-'));
  const home = path.join(dir, 'home');
  await mkdir(home, { recursive: true });
  // One cookie for every node and for rabbitmqctl (otherwise each HOME gets its own and they cannot talk).
  await writeFile(path.join(home, '.erlang.cookie'), `BENCH${process.pid}${Date.now()}`, { mode: 0o400 });
  const members = [];
  const stopAll = async () => {
    for (const m of members.reverse()) await m.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled(Array.from({ length: nodes }, (_, i) => launchRabbitNode(dir, `benchr${i + 1}p${process.pid}`, home)));
    for (const r of started) if (r.status === 'fulfilled') members.push(r.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const [first, ...rest] = members;
    for (const m of rest) {
      await m.ctl('stop_app');
      await m.ctl('join_cluster', first.node);
      await m.ctl('start_app');
      await waitForPort(m.streamPort, 90000, m.proc.child, m.proc.output);
    }
    const status = await first.ctl('cluster_status', '--formatter', 'json');
    const running = JSON.parse(status.slice(status.indexOf('{'))).running_nodes ?? [];
    if (running.length !== nodes) throw new Error(`RabbitMQ cluster has ${running.length} running nodes of ${nodes}: ${status}`);
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    name: 'rabbitmq-r3',
    address: members.map((m) => `127.0.0.1:${m.streamPort}`).join(','),
    durability: `${nodes}-node cluster, streams with ${nodes} replicas (initial-cluster-size); a publish is confirmed once a quorum of the replicas (2 of 3) has written it to the OS; no fsync (RabbitMQ has no per-write fsync option for streams)`,
    stop: stopAll,
  };
}

/**
 * A JetStream cluster of `nodes` nats-servers on loopback (routes between
 * them, file storage, each its own store directory); resolves once the
 * JetStream meta group has a leader (monitoring endpoint /jsz).
 */
export async function startNatsCluster({ nodes = 3 } = {}) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-nats-cluster-'));
  const ports = [];
  for (let i = 0; i < nodes; i++) ports.push({ client: await freePort(), route: await freePort(), http: await freePort() });
  const routes = ports.map((p) => `nats-route://127.0.0.1:${p.route}`).join(', ');
  const procs = [];
  const stopAll = async () => {
    for (const p of procs) await stopProcess(p);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < nodes; i++) {
      const conf = path.join(dir, `n${i + 1}.conf`);
      await writeFile(
        conf,
        [
          `server_name: n${i + 1}`,
          `listen: 127.0.0.1:${ports[i].client}`,
          `http: 127.0.0.1:${ports[i].http}`,
          `jetstream { store_dir: "${path.join(dir, `n${i + 1}`)}" }`,
          `cluster { name: bench, listen: 127.0.0.1:${ports[i].route}, routes: [${routes}] }`,
          '',
        ].join('\n'),
      );
      procs.push(launch('nats-server', ['-c', conf]));
    }
    for (let i = 0; i < nodes; i++) await waitForPort(ports[i].client, 20000, procs[i].child, procs[i].output);
    const deadline = Date.now() + 60000;
    for (;;) {
      const jsz = await fetch(`http://127.0.0.1:${ports[0].http}/jsz`).then((r) => r.json(), () => null);
      if (jsz?.meta_cluster?.leader && jsz.meta_cluster.cluster_size >= nodes) break;
      if (Date.now() > deadline) throw new Error(`JetStream meta group without a leader after 60 s: ${JSON.stringify(jsz?.meta_cluster ?? null)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    name: 'nats-r3',
    address: ports.map((p) => `127.0.0.1:${p.client}`).join(','),
    durability: `${nodes}-node JetStream cluster, streams R${nodes} on file storage; a publish is acknowledged once the stream's Raft group has a quorum (2 of 3) of it; no fsync before the ack (the 2.9 server has no sync option)`,
    stop: stopAll,
  };
}

/**
 * A cluster of `brokers` mq brokers (`mq broker start` processes, each a
 * controller voter, as packages/broker/bench/cluster-bench.mjs runs them),
 * started with @mq/bench's startLocalBroker and its broker heap flags;
 * resolves once every broker is registered and unfenced (HTTP /cluster).
 */
export async function startMqCluster({ brokers = 3, config = {} } = {}) {
  const { startLocalBroker } = await import('../packages/bench/dist/index.js');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'bench-mq-cluster-'));
  const ports = [];
  for (let i = 0; i < brokers; i++) ports.push({ raft: await freePort(), client: await freePort(), http: await freePort() });
  const voters = ports.map((p, i) => `${i + 1}@127.0.0.1:${p.raft}`).join(',');
  const members = [];
  const stopAll = async () => {
    await Promise.allSettled(members.map((m) => m.close()));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const started = await Promise.allSettled(
      ports.map((p, i) =>
        startLocalBroker({ dataDir: path.join(dir, `b${i + 1}`), port: p.client, httpPort: p.http, config, args: ['--broker-id', String(i + 1), '--controller-voters', voters], startTimeoutMs: 60000 }),
      ),
    );
    for (const r of started) if (r.status === 'fulfilled') members.push(r.value);
    const failed = started.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
    const deadline = Date.now() + 60000;
    for (;;) {
      const s = await fetch(`http://127.0.0.1:${ports[0].http}/cluster`).then((r) => r.json(), () => null);
      if (s && s.controllerId >= 0 && s.brokers?.length === brokers && s.brokers.every((b) => !b.fenced)) break;
      if (Date.now() > deadline) throw new Error(`mq cluster not formed after 60 s: ${JSON.stringify(s)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    name: 'mq-r3',
    address: ports.map((p) => `127.0.0.1:${p.client}`).join(','),
    durability: `${brokers}-broker cluster (every broker a controller voter), topics RF ${brokers} with min.insync.replicas 2, producer acks=all (acknowledged once every in-sync replica has the batch, at least 2); log.flush.policy=${config['log.flush.policy'] ?? 'interval'} ${config['log.flush.policy'] === 'os' ? '(no fsync before the ack, the OS flushes)' : ''}`.trim(),
    stop: stopAll,
  };
}
