/**
 * `mq cluster start`: a local cluster in one command — N `mq broker start`
 * processes, each a controller voter with its own data directory under
 * --data-dir, stopped together on Ctrl-C; with `--controllers M`, M
 * dedicated controller processes (process.roles=controller) and N
 * broker-only processes (process.roles=broker) instead. Broker 1 takes the
 * default ports (9092, HTTP 9080), so client commands work without
 * --bootstrap; process k takes port + k - 1 (controllers come after the
 * brokers). `mq cluster status`: every process with its role (alive or
 * fenced, pid when started here), the active controller, under-replicated
 * and offline partitions. `mq cluster stop`: stops, from another terminal, a
 * cluster started by `mq cluster start` with the same --data-dir.
 */
import { electLeadersCommand, rebalanceCommand, throttleCommand } from './scaleout.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { CommandError, UsageError } from '../errors.js';
import { table } from '../output.js';
import { makeClient, withClientOptions, withFormat, withLoginOptions, type ClientArgs, type FormatArgs } from '../options.js';
import { getJson, httpApiAccess, isCertificateError, type HttpApiAccess } from '../http-api.js';
import { BROKER_HEAP_FLAGS } from '@mq/bench';

export const DEFAULT_CLUSTER_DIR = './mq-cluster';
const STATE_FILE = 'cluster.json';

interface StartArgs extends Partial<ClientArgs> {
  brokers: number;
  controllers?: number;
  'data-dir': string;
  port: number;
  'http-port': number;
  'kafka-port'?: number;
  'raft-port': number;
  'inter-broker-port': number;
  'config-set'?: string[];
  'cluster-secret-file'?: string;
}

type Role = 'broker,controller' | 'controller' | 'broker';

interface ProcessState {
  id: number;
  /** Absent in files written before roles existed: a combined broker and controller. */
  role?: Role;
  pid: number;
  port: number;
  httpPort: number;
  /** 0 for a broker-only process. */
  raftPort: number;
  dataDir: string;
  log: string;
}

interface ClusterState {
  startedAt: string;
  /** The `mq cluster start` process that supervises the others (absent in files written before `cluster stop`). */
  supervisorPid?: number;
  /** Every process started, brokers and controllers alike. */
  brokers: ProcessState[];
}

/**
 * Why a process of the cluster did not start, as one line; a port in use names the port and the flags
 * that move the cluster (the usual cause: `mq broker start` is still running on 9092/9080).
 */
export function startFailure(who: string, reason: string, logPath: string): CommandError {
  const inUse = /EADDRINUSE[^\d]*?((?:\d{1,3}\.){3}\d{1,3}|\[[^\]]+\]|[\w.-]+)?:(\d+)/.exec(reason);
  if (inUse) {
    return new CommandError(
      `${who} cannot listen on port ${inUse[2]}: it is in use (is \`mq broker start\` or another cluster running? stop it, or move this cluster with --port, --http-port and --raft-port); see ${logPath}`,
    );
  }
  return new CommandError(`${who} did not start: ${reason.replace(/^mq: /, '')}; see ${logPath}`);
}

function waitListening(child: ChildProcess, logFile: (line: string) => void, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let pending = '';
    let done = false;
    const timer = setTimeout(() => finish(new Error(`did not start within ${timeoutMs} ms`)), timeoutMs);
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        logFile(line);
        if (!done && line.includes('"msg":"broker listening"')) finish();
        if (!done && line.startsWith('mq:')) finish(new Error(line));
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => finish(new Error(`exited with code ${code}`)));
  });
}

/** GET /cluster of one process (its view of the cluster: the real active controller, brokers, partitions). */
interface ClusterView {
  controllerId: number;
  activeController: boolean;
  /** Absent from brokers older than the Kafka listener's address in GET /cluster. */
  brokers?: Array<{ id: number; kafka?: string | null; decommissioned?: boolean }>;
}

async function clusterView(access: HttpApiAccess, httpPort: number, host = '127.0.0.1'): Promise<ClusterView | undefined> {
  try {
    const res = await getJson<ClusterView>(access, host, httpPort, '/cluster');
    return res.status === 200 ? res.body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until the controller has every broker registered and unfenced (GET /cluster of broker 1), over the
 * brokers' TLS and with the command's login. A certificate that does not verify ends the wait at once (retrying
 * will not help); without a login that may describe the cluster (401/403, e.g. before the first user exists) it
 * waits for every broker's GET /health instead.
 */
async function waitReady(access: HttpApiAccess, httpPorts: number[], brokers: number, timeoutMs: number, signal: AbortSignal): Promise<{ ready: true } | { ready: false; reason: string }> {
  const deadline = Date.now() + timeoutMs;
  let reason = 'not all are registered with the controller yet';
  let healthOnly = false;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      if (healthOnly) {
        const answers = await Promise.all(httpPorts.map((p) => getJson(access, '127.0.0.1', p, '/health')));
        if (answers.every((a) => a.status === 200)) return { ready: true };
      } else {
        const res = await getJson<{ controllerId: number; brokers: Array<{ fenced: boolean }> }>(access, '127.0.0.1', httpPorts[0]!, '/cluster');
        const s = res.body;
        if (res.status === 401 || res.status === 403) {
          healthOnly = true;
          reason = `not all answer GET /health yet (GET /cluster answered ${res.status}: give --user and MQ_PASSWORD of a user who may describe the cluster to wait for registration)`;
          continue;
        }
        if (res.status === 200 && s && s.controllerId > 0 && s.brokers.length === brokers && s.brokers.every((b) => !b.fenced)) return { ready: true };
      }
    } catch (err) {
      if (isCertificateError(err)) {
        return { ready: false, reason: `their HTTP API's certificate does not verify (${(err as Error).message}): give mq cluster start --tls-ca with the CA that signs it (and --tls-cert/--tls-key when tls.client.auth=required)` };
      }
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { ready: false, reason };
}

async function readState(root: string): Promise<ClusterState | undefined> {
  try {
    return JSON.parse(await readFile(path.join(root, STATE_FILE), 'utf8')) as ClusterState;
  } catch {
    return undefined;
  }
}

/**
 * Whether `pid` is still the process the state file names: alive, and (where /proc exists) still running this
 * command line, so a process id the kernel has since handed to another program is never signalled.
 */
export async function isClusterProcess(pid: number, mustContain: string): Promise<boolean> {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const cmdline = (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0');
    return cmdline.some((arg) => arg.includes(mustContain));
  } catch {
    return process.platform !== 'linux';
  }
}

/**
 * SIGTERM to the supervising `mq cluster start` (which stops its brokers as on Ctrl-C) or, when it is gone, to
 * each broker and controller it started; then waits for all of them to exit.
 */
async function stopCluster(state: ClusterState, timeoutMs: number): Promise<{ signalled: number; processes: number; left: number[] }> {
  const supervisor = state.supervisorPid !== undefined && (await isClusterProcess(state.supervisorPid, 'cluster')) ? state.supervisorPid : undefined;
  const members: number[] = [];
  for (const b of state.brokers) if (await isClusterProcess(b.pid, b.dataDir)) members.push(b.pid);
  const targets = supervisor !== undefined ? [supervisor] : members;
  for (const pid of targets) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // exited meanwhile
    }
  }
  const all = supervisor !== undefined ? [supervisor, ...members] : members;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  const deadline = Date.now() + timeoutMs;
  while (all.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return { signalled: targets.length, processes: all.length, left: all.filter(alive) };
}

export function clusterCommand(ctx: CliContext): CommandModule {
  const start: CommandModule<object, StartArgs> = {
    command: 'start',
    describe: 'start a local cluster of broker processes (Ctrl-C stops them all)',
    builder: (y) =>
      // Its own calls to the brokers (the readiness check) use the client's --tls-* flags and --user login.
      withLoginOptions(y, ctx.env)
        .option('brokers', { alias: 'n', type: 'number', default: 3, describe: 'number of brokers (each is also a controller voter unless --controllers is given)' })
        .option('controllers', { type: 'number', describe: 'run this many dedicated controller processes (the Raft quorum) and make the brokers broker-only' })
        .option('data-dir', { alias: 'd', type: 'string', default: DEFAULT_CLUSTER_DIR, describe: 'parent of the brokers\' data directories (broker-1, broker-2, ...)' })
        .option('port', { type: 'number', default: 9092, describe: 'client port of broker 1 (broker n: port + n - 1)' })
        .option('http-port', { type: 'number', default: 9080, describe: 'HTTP port of broker 1 (broker n: http-port + n - 1)' })
        .option('kafka-port', { type: 'number', describe: 'Kafka-protocol port of broker 1 (broker n: kafka-port + n - 1); default: each broker\'s Kafka listener on a free port (see its Metadata)' })
        .option('raft-port', { type: 'number', default: 19091, describe: 'controller (Raft) port of broker 1 (broker n: raft-port + n - 1)' })
        .option('inter-broker-port', { type: 'number', default: 29092, describe: 'inter-broker port of broker 1 (broker n: inter-broker-port + n - 1): replica fetches and controller requests between brokers' })
        .option('cluster-secret-file', {
          type: 'string',
          describe: 'the secret the brokers and controllers prove to each other (cluster.secret.file); a file that does not exist is created with 32 random bytes (base64, mode 0600)',
        })
        .option('config-set', { type: 'string', array: true, describe: 'broker config key=value for every broker (repeatable); with tls.cert.file and tls.key.file the brokers speak TLS only and this command checks their readiness over https:// (trusting --tls-ca)' }) as unknown as Argv<StartArgs>,
    handler: async (args) => {
      const n = args.brokers;
      if (!Number.isInteger(n) || n < 1 || n > 15) throw new UsageError(`--brokers must be between 1 and 15, got ${n}`);
      const m = args.controllers ?? 0;
      if (args.controllers !== undefined && (!Number.isInteger(m) || m < 1 || m > 9)) throw new UsageError(`--controllers must be between 1 and 9, got ${args.controllers}`);
      if (m > 0 && m % 2 === 0) await writeLine(ctx.stderr, `mq: ${m} controllers tolerate no more failures than ${m - 1}; an odd number is usual`);
      const root = path.resolve(args['data-dir']);
      await mkdir(root, { recursive: true });
      const secretFile = args['cluster-secret-file'] !== undefined ? path.resolve(args['cluster-secret-file']) : undefined;
      if (secretFile) {
        // wx: never overwrite an existing secret (the other members of the cluster share it).
        const created = await writeFile(secretFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' }).then(
          () => true,
          (err: NodeJS.ErrnoException) => {
            if (err.code === 'EEXIST') return false;
            throw new CommandError(`cannot create the cluster secret file ${secretFile}: ${err.message}`);
          },
        );
        if (created) await writeLine(ctx.stderr, `mq: created the cluster secret ${secretFile} (mode 0600); give the same file to every member of this cluster`);
      }
      // Brokers 1..n (broker 1 on the default ports); dedicated controllers n+1..n+m.
      const ids = Array.from({ length: n + m }, (_, i) => i + 1);
      const roleOf = (id: number): Role => (m === 0 ? 'broker,controller' : id <= n ? 'broker' : 'controller');
      const voterIds = ids.filter((id) => roleOf(id) !== 'broker');
      const voters = voterIds.map((id) => `${id}@127.0.0.1:${args['raft-port'] + id - 1}`).join(',');
      const controllerBootstrap = voterIds.map((id) => `127.0.0.1:${args['inter-broker-port'] + id - 1}`).join(',');
      const bin = process.argv[1]!;
      const children = new Map<number, ChildProcess>();
      const state: ClusterState = { startedAt: new Date().toISOString(), supervisorPid: process.pid, brokers: [] };
      let stopping = false;
      const stopAll = async () => {
        stopping = true;
        await Promise.all(
          [...children.values()].map(
            (c) =>
              new Promise<void>((resolve) => {
                if (c.exitCode !== null || c.signalCode !== null) return resolve();
                const t = setTimeout(() => c.kill('SIGKILL'), 15_000);
                c.once('exit', () => {
                  clearTimeout(t);
                  resolve();
                });
                c.kill('SIGTERM');
              }),
          ),
        );
      };
      try {
        await Promise.all(
          ids.map(async (id) => {
            const role = roleOf(id);
            const dataDir = path.join(root, role === 'controller' ? `controller-${id}` : `broker-${id}`);
            await mkdir(dataDir, { recursive: true });
            const logPath = path.join(dataDir, 'broker.log');
            const port = args.port + id - 1;
            const httpPort = args['http-port'] + id - 1;
            const child = spawn(
              process.execPath,
              [
                // The broker's V8 heap settings (see BROKER_HEAP_FLAGS), as Kafka's scripts set the JVM heap.
                ...BROKER_HEAP_FLAGS,
                bin,
                'broker',
                'start',
                '--broker-id',
                String(id),
                '--data-dir',
                dataDir,
                '--port',
                String(port),
                '--http-port',
                String(httpPort),
                '--process-roles',
                role,
                // Every broker gets a Kafka listener (a dedicated controller serves no clients).
                ...(role === 'controller' ? [] : ['--kafka-port', String(args['kafka-port'] !== undefined ? args['kafka-port'] + id - 1 : 0)]),
                '--config-set',
                `inter.broker.port=${args['inter-broker-port'] + id - 1}`,
                ...(role === 'broker' ? [] : ['--controller-voters', voters]),
                // Dedicated controllers get them too: a non-active one forwards commands through them.
                ...(m > 0 ? ['--controller-bootstrap-servers', controllerBootstrap] : []),
                ...(secretFile ? ['--config-set', `cluster.secret.file=${secretFile}`] : []),
                ...(args['config-set'] ?? []).flatMap((kv) => ['--config-set', kv]),
              ],
              { stdio: ['ignore', 'pipe', 'pipe'], env: ctx.env },
            );
            children.set(id, child);
            const lines: string[] = [];
            let flushing: Promise<void> = writeFile(logPath, '', { flag: 'a' });
            const log = (line: string) => {
              lines.push(line);
              if (lines.length >= 1) {
                const chunk = lines.splice(0).join('\n') + '\n';
                flushing = flushing.then(() => writeFile(logPath, chunk, { flag: 'a' })).catch(() => undefined);
              }
            };
            child.once('exit', (code, signal) => {
              if (!stopping) void writeLine(ctx.stderr, `mq: ${role === 'controller' ? 'controller' : 'broker'} ${id} exited (${signal ?? `code ${code}`}); see ${logPath}`);
            });
            try {
              await waitListening(child, log, 30_000);
            } catch (err) {
              throw startFailure(`${role === 'controller' ? 'controller' : 'broker'} ${id}`, (err as Error).message, logPath);
            }
            state.brokers.push({ id, role, pid: child.pid ?? -1, port, httpPort, raftPort: role === 'broker' ? 0 : args['raft-port'] + id - 1, dataDir, log: logPath });
          }),
        );
        state.brokers.sort((a, b) => a.id - b.id);
        // Written as soon as every process listens, so mq cluster status shows the pids while the cluster settles.
        await writeFile(path.join(root, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
        // Listening is not ready: wait until the controller has every broker registered and unfenced.
        const tls = (args['config-set'] ?? []).some((kv) => /^tls\.cert\.file=./.test(kv));
        const brokerPorts = state.brokers.filter((b) => b.role !== 'controller').map((b) => b.httpPort);
        const ready = await waitReady(httpApiAccess(args, tls), brokerPorts, n, 60_000, ctx.signal);
        if (!ready.ready) await writeLine(ctx.stderr, `mq: the brokers are running but ${ready.reason} (see mq cluster status)`);
        await writeLine(
          ctx.stdout,
          table(
            ['ID', 'ROLE', 'PID', 'ADDRESS', 'HTTP', 'RAFT', 'DATA'],
            state.brokers.map((b) => [String(b.id), b.role ?? 'broker,controller', String(b.pid), `127.0.0.1:${b.port}`, String(b.httpPort), b.raftPort ? String(b.raftPort) : '-', b.dataDir]),
          ),
        );
        const shape = m > 0 ? ` and ${m} dedicated controller${m === 1 ? '' : 's'}` : '';
        await writeLine(ctx.stdout, `cluster of ${n} broker${n === 1 ? '' : 's'}${shape} running; bootstrap 127.0.0.1:${args.port}; Ctrl-C stops it (mq cluster status shows its health)`);
        await new Promise<void>((resolve) => {
          if (ctx.signal.aborted) resolve();
          else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
        });
        await writeLine(ctx.stdout, 'stopping the cluster');
      } finally {
        await stopAll();
      }
    },
  };

  const status: CommandModule<object, ClientArgs & FormatArgs & { 'data-dir': string }> = {
    command: 'status',
    describe: 'brokers (alive or fenced), the active controller, under-replicated and offline partitions',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).option('data-dir', {
        alias: 'd',
        type: 'string',
        default: DEFAULT_CLUSTER_DIR,
        describe: 'the directory of a cluster started by mq cluster start (for process ids)',
      }) as unknown as Argv<ClientArgs & FormatArgs & { 'data-dir': string }>,
    handler: async (args) => {
      const local = await readState(path.resolve(args['data-dir']));
      const client = makeClient(args);
      try {
        const admin = client.admin();
        const cluster = await admin.describeCluster();
        const names = await admin.listTopics();
        const topics = names.length > 0 ? await admin.describeTopics(names) : [];
        const underReplicated: Array<{ topic: string; partition: number; leader: number; replicas: number[]; isr: number[] }> = [];
        const offline: Array<{ topic: string; partition: number; replicas: number[]; isr: number[] }> = [];
        let partitions = 0;
        for (const t of topics) {
          for (const p of t.partitions) {
            partitions++;
            if (p.leader < 0) offline.push({ topic: t.name, partition: p.partition, replicas: p.replicas, isr: p.isr });
            else if (p.isr.length < p.replicas.length) underReplicated.push({ topic: t.name, partition: p.partition, leader: p.leader, replicas: p.replicas, isr: p.isr });
          }
        }
        const started = (id: number, port: number) => local?.brokers.find((x) => x.id === id && x.port === port);
        // The client is told a broker as "controller" (admin requests go there); the real active controller is in GET /cluster.
        let controllerId = cluster.controllerId;
        let kafka = new Map<number, string | null>();
        let decommissioned = new Set<number>();
        const access = httpApiAccess(args);
        for (const b of cluster.brokers) {
          const view = await clusterView(access, b.httpPort, b.host);
          if (view) {
            controllerId = view.controllerId;
            kafka = new Map((view.brokers ?? []).map((x) => [x.id, x.kafka ?? null]));
            decommissioned = new Set((view.brokers ?? []).filter((x) => x.decommissioned).map((x) => x.id));
            break;
          }
        }
        const brokers = cluster.brokers.map((b) => {
          const mine = started(b.id, b.port);
          const role: Role = mine?.role ?? (b.id === controllerId || (mine && !mine.role) ? 'broker,controller' : 'broker');
          return { id: b.id, role, endpoint: `${b.host}:${b.port}`, httpPort: b.httpPort, kafka: kafka.get(b.id) ?? null, rack: b.rack, pid: mine?.pid ?? null, state: `${b.fenced ? 'fenced' : 'alive'}${decommissioned.has(b.id) ? ',decommissioned' : ''}`, controller: b.id === controllerId };
        });
        // Dedicated controllers are not brokers: they are known from the processes started here.
        const controllers = await Promise.all(
          (local?.brokers ?? [])
            .filter((x) => x.role === 'controller')
            .map(async (x) => {
              const view = await clusterView(access, x.httpPort);
              return { id: x.id, role: 'controller' as Role, endpoint: `127.0.0.1:${x.port}`, httpPort: x.httpPort, kafka: null, rack: '', pid: x.pid, state: view ? 'alive' : 'unreachable', controller: x.id === controllerId };
            }),
        );
        const json = { clusterId: cluster.clusterId, controllerId, brokers, controllers, topics: topics.length, partitions, underReplicated, offline };
        if (args.format === 'json') return void (await writeLine(ctx.stdout, JSON.stringify(json)));
        await writeLine(
          ctx.stdout,
          table(
            ['ID', 'ENDPOINT', 'PID', 'STATE', 'RACK', 'CONTROLLER', 'ROLE', 'KAFKA'],
            [...brokers, ...controllers].map((b) => [String(b.id), b.endpoint, b.pid === null ? '-' : String(b.pid), b.state, b.rack || '-', b.controller ? 'active' : '', b.role, b.kafka ?? '-']),
          ),
        );
        const where = controllerId < 0 ? 'none (no quorum?)' : controllers.some((x) => x.id === controllerId) ? `controller ${controllerId}` : `broker ${controllerId}`;
        await writeLine(ctx.stdout, `\ncontroller: ${where}; ${topics.length} topics, ${partitions} partitions; ${underReplicated.length} under-replicated, ${offline.length} offline`);
        for (const p of underReplicated) await writeLine(ctx.stdout, `under-replicated: ${p.topic}-${p.partition} leader ${p.leader} replicas ${p.replicas.join(',')} isr ${p.isr.join(',')}`);
        for (const p of offline) await writeLine(ctx.stdout, `offline: ${p.topic}-${p.partition} replicas ${p.replicas.join(',')} isr ${p.isr.join(',')}`);
      } finally {
        await client.close({ timeoutMs: 1000 });
      }
    },
  };

  const stop: CommandModule<object, { 'data-dir': string; 'timeout-ms': number }> = {
    command: 'stop',
    describe: 'stop a cluster started by mq cluster start (SIGTERM, as Ctrl-C in its terminal)',
    builder: (y) =>
      y
        .option('data-dir', { alias: 'd', type: 'string', default: DEFAULT_CLUSTER_DIR, describe: 'the directory given to mq cluster start' })
        .option('timeout-ms', { type: 'number', default: 30_000, describe: 'how long to wait for every process to exit' }) as unknown as Argv<{ 'data-dir': string; 'timeout-ms': number }>,
    handler: async (args) => {
      const timeoutMs = args['timeout-ms'];
      if (!Number.isInteger(timeoutMs) || timeoutMs < 0) throw new UsageError(`--timeout-ms must be a whole number of milliseconds, got ${String(timeoutMs)}`);
      const root = path.resolve(args['data-dir']);
      const state = await readState(root);
      if (!state) throw new CommandError(`no cluster started by mq cluster start in ${root} (no ${STATE_FILE}; pass the --data-dir it was started with)`);
      const stopped = await stopCluster(state, timeoutMs);
      if (stopped.left.length > 0) {
        throw new CommandError(`processes ${stopped.left.join(', ')} still running ${timeoutMs} ms after SIGTERM (kill them, or wait and run mq cluster stop again)`);
      }
      await writeLine(
        ctx.stdout,
        stopped.signalled === 0 ? `no process of the cluster in ${root} is running` : `stopped the cluster in ${root} (${stopped.processes} process${stopped.processes === 1 ? '' : 'es'})`,
      );
    },
  };

  return {
    command: 'cluster <command>',
    describe: 'run and inspect a local multi-broker cluster',
    builder: (y) =>
      y
        .command(start as unknown as CommandModule)
        .command(status as unknown as CommandModule)
        .command(stop as unknown as CommandModule)
        .command(electLeadersCommand(ctx))
        .command(rebalanceCommand(ctx))
        .command(throttleCommand(ctx))
        .demandCommand(1, 'name a cluster command: start, status, stop, elect-leaders, rebalance, throttle'),
    handler: () => {},
  };
}
