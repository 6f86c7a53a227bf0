/**
 * `mq cluster start`: a local cluster in one command — N `mq broker start`
 * processes, each a controller voter with its own data directory under
 * --data-dir, stopped together on Ctrl-C. Broker 1 takes the default ports
 * (9092, HTTP 9080), so client commands work without --bootstrap.
 * `mq cluster status`: brokers (alive or fenced, pid when started here),
 * the active controller, under-replicated and offline partitions.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { makeClient, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';

export const DEFAULT_CLUSTER_DIR = './mq-cluster';
const STATE_FILE = 'cluster.json';

interface StartArgs {
  brokers: number;
  'data-dir': string;
  port: number;
  'http-port': number;
  'raft-port': number;
  'config-set'?: string[];
}

interface ClusterState {
  startedAt: string;
  brokers: Array<{ id: number; pid: number; port: number; httpPort: number; raftPort: number; dataDir: string; log: string }>;
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

async function waitReady(httpPort: number, brokers: number, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !signal.aborted) {
    try {
      const res = await fetch(`http://127.0.0.1:${httpPort}/cluster`, { signal: AbortSignal.timeout(2000) });
      const s = (await res.json()) as { controllerId: number; brokers: Array<{ fenced: boolean }> };
      if (s.controllerId > 0 && s.brokers.length === brokers && s.brokers.every((b) => !b.fenced)) return true;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return false;
}

export function clusterCommand(ctx: CliContext): CommandModule {
  const start: CommandModule<object, StartArgs> = {
    command: 'start',
    describe: 'start a local cluster of broker processes (Ctrl-C stops them all)',
    builder: (y) =>
      y
        .option('brokers', { alias: 'n', type: 'number', default: 3, describe: 'number of brokers (each is also a controller voter)' })
        .option('data-dir', { alias: 'd', type: 'string', default: DEFAULT_CLUSTER_DIR, describe: 'parent of the brokers\' data directories (broker-1, broker-2, ...)' })
        .option('port', { type: 'number', default: 9092, describe: 'client port of broker 1 (broker n: port + n - 1)' })
        .option('http-port', { type: 'number', default: 9080, describe: 'HTTP port of broker 1 (broker n: http-port + n - 1)' })
        .option('raft-port', { type: 'number', default: 19091, describe: 'controller (Raft) port of broker 1 (broker n: raft-port + n - 1)' })
        .option('config-set', { type: 'string', array: true, describe: 'broker config key=value for every broker (repeatable)' }) as unknown as Argv<StartArgs>,
    handler: async (args) => {
      const n = args.brokers;
      if (!Number.isInteger(n) || n < 1 || n > 15) throw new UsageError(`--brokers must be between 1 and 15, got ${n}`);
      const root = path.resolve(args['data-dir']);
      await mkdir(root, { recursive: true });
      const ids = Array.from({ length: n }, (_, i) => i + 1);
      const voters = ids.map((id) => `${id}@127.0.0.1:${args['raft-port'] + id - 1}`).join(',');
      const bin = process.argv[1]!;
      const children = new Map<number, ChildProcess>();
      const state: ClusterState = { startedAt: new Date().toISOString(), brokers: [] };
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
            const dataDir = path.join(root, `broker-${id}`);
            await mkdir(dataDir, { recursive: true });
            const logPath = path.join(dataDir, 'broker.log');
            const port = args.port + id - 1;
            const httpPort = args['http-port'] + id - 1;
            const child = spawn(
              process.execPath,
              [
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
                '--controller-voters',
                voters,
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
              if (!stopping) void writeLine(ctx.stderr, `mq: broker ${id} exited (${signal ?? `code ${code}`}); see ${logPath}`);
            });
            try {
              await waitListening(child, log, 30_000);
            } catch (err) {
              throw new Error(`broker ${id} ${(err as Error).message}; see ${logPath}`);
            }
            state.brokers.push({ id, pid: child.pid ?? -1, port, httpPort, raftPort: args['raft-port'] + id - 1, dataDir, log: logPath });
          }),
        );
        state.brokers.sort((a, b) => a.id - b.id);
        // Listening is not ready: wait until the controller has every broker registered and unfenced.
        const ready = await waitReady(state.brokers[0]!.httpPort, n, 60_000, ctx.signal);
        if (!ready) await writeLine(ctx.stderr, 'mq: the brokers are running but not all are registered with the controller yet (see mq cluster status)');
        await writeFile(path.join(root, STATE_FILE), JSON.stringify(state, null, 2) + '\n');
        await writeLine(
          ctx.stdout,
          table(
            ['BROKER', 'PID', 'ADDRESS', 'HTTP', 'RAFT', 'DATA'],
            state.brokers.map((b) => [String(b.id), String(b.pid), `127.0.0.1:${b.port}`, String(b.httpPort), String(b.raftPort), b.dataDir]),
          ),
        );
        await writeLine(ctx.stdout, `cluster of ${n} broker${n === 1 ? '' : 's'} running; bootstrap 127.0.0.1:${args.port}; Ctrl-C stops it (mq cluster status shows its health)`);
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
      let local: ClusterState | undefined;
      try {
        local = JSON.parse(await readFile(path.join(path.resolve(args['data-dir']), STATE_FILE), 'utf8')) as ClusterState;
      } catch {
        local = undefined;
      }
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
        const brokers = cluster.brokers.map((b) => {
          const pid = local?.brokers.find((x) => x.id === b.id && x.port === b.port)?.pid ?? null;
          return { id: b.id, endpoint: `${b.host}:${b.port}`, httpPort: b.httpPort, rack: b.rack, pid, state: b.fenced ? 'fenced' : 'alive', controller: b.id === cluster.controllerId };
        });
        const json = { clusterId: cluster.clusterId, controllerId: cluster.controllerId, brokers, topics: topics.length, partitions, underReplicated, offline };
        if (args.format === 'json') return void (await writeLine(ctx.stdout, JSON.stringify(json)));
        await writeLine(
          ctx.stdout,
          table(
            ['BROKER', 'ENDPOINT', 'PID', 'STATE', 'RACK', 'CONTROLLER'],
            brokers.map((b) => [String(b.id), b.endpoint, b.pid === null ? '-' : String(b.pid), b.state, b.rack || '-', b.controller ? 'active' : '']),
          ),
        );
        await writeLine(ctx.stdout, `\ncontroller: ${cluster.controllerId < 0 ? 'none (no quorum?)' : `broker ${cluster.controllerId}`}; ${topics.length} topics, ${partitions} partitions; ${underReplicated.length} under-replicated, ${offline.length} offline`);
        for (const p of underReplicated) await writeLine(ctx.stdout, `under-replicated: ${p.topic}-${p.partition} leader ${p.leader} replicas ${p.replicas.join(',')} isr ${p.isr.join(',')}`);
        for (const p of offline) await writeLine(ctx.stdout, `offline: ${p.topic}-${p.partition} replicas ${p.replicas.join(',')} isr ${p.isr.join(',')}`);
      } finally {
        await client.close({ timeoutMs: 1000 });
      }
    },
  };

  return {
    command: 'cluster <command>',
    describe: 'run and inspect a local multi-broker cluster',
    builder: (y) => y.command(start as unknown as CommandModule).command(status as unknown as CommandModule).demandCommand(1, 'name a cluster command: start, status'),
    handler: () => {},
  };
}
