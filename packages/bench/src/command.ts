import type { Argv, CommandModule } from 'yargs';
import { MqError } from '@mq/protocol/errors';
import { collectEnvironment } from './env.js';
import { BROKER_HEAP_FLAGS, startLocalBroker, type LocalBroker } from './local-broker.js';
import { formatResultTable, type BenchResult } from './result.js';
import type { BenchTarget } from './target.js';
import { createMemoryTarget } from './targets/memory.js';
import { runConsume } from './workloads/consume.js';
import { runE2e } from './workloads/e2e.js';
import { runProduce } from './workloads/produce.js';
import type { WorkloadContext } from './workloads/run-context.js';

export const BENCH_TARGETS = ['mq', 'memory', 'nats', 'redis', 'rabbitmq'] as const;
type TargetName = (typeof BENCH_TARGETS)[number];

export interface BenchCommandOptions {
  /** How to run `mq` for a local broker (the CLI passes its own bin). */
  brokerCommand?: string[];
  /** Where results go (default stdout) and progress goes (default stderr). */
  out?: NodeJS.WritableStream;
  err?: NodeJS.WritableStream;
  /** Stops the run (the CLI passes its Ctrl-C signal); without it SIGINT is handled here. */
  signal?: AbortSignal;
}

export interface BenchArgs {
  workload: 'produce' | 'consume' | 'e2e';
  target: TargetName;
  bootstrap?: string;
  flush?: 'os' | 'interval' | 'always';
  'broker-config'?: string[];
  'broker-cpu-prof'?: string;
  'broker-heap'?: 'tuned' | 'v8';
  'memory-retain'?: boolean;
  'peer-address'?: string;
  'redis-read'?: 'xreadgroup' | 'xread';
  durability?: string;
  replicas?: number;
  records?: number;
  duration?: number;
  size?: number;
  keys?: string;
  partitions?: number;
  acks?: string;
  'batch-bytes'?: number;
  'linger-ms'?: number;
  compression?: string;
  producers?: number;
  window?: number;
  rate?: number;
  warmup?: number;
  consumers?: number;
  group?: string | boolean;
  topic?: string;
  prepare?: boolean;
  'idle-timeout-ms'?: number;
  json?: boolean;
  quiet?: boolean;
  'progress-ms'?: number;
}

function parseBrokerConfig(entries: string[] | undefined, flush: string | undefined): Record<string, string> {
  const config: Record<string, string> = {};
  for (const e of entries ?? []) {
    const i = e.indexOf('=');
    if (i <= 0) throw new MqError('INVALID_ARGUMENT', `--broker-config "${e}" is not key=value`);
    config[e.slice(0, i)] = e.slice(i + 1);
  }
  if (flush !== undefined) config['log.flush.policy'] = flush;
  return config;
}

async function openTarget(args: BenchArgs, opts: BenchCommandOptions): Promise<{ target: BenchTarget; broker: LocalBroker | null }> {
  const address = args['peer-address'];
  const needAddress = (): string => {
    if (!address) throw new MqError('INVALID_ARGUMENT', `--target ${args.target} needs --peer-address host:port of a running server`);
    return address;
  };
  // A cluster's address is a comma-separated list: Redis and RabbitMQ connect to the first (RabbitMQ's client then finds each stream's leader).
  const first = (): string => needAddress().split(',')[0];
  const port = (): number => Number(first().split(':').pop());
  const host = (): string => first().split(':')[0] || '127.0.0.1';
  const durability = args.durability === undefined ? {} : { durability: args.durability };
  const replicas = args.replicas ?? 1;
  if (!Number.isInteger(replicas) || replicas < 1) throw new MqError('INVALID_ARGUMENT', `--replicas must be an integer >= 1, got ${String(args.replicas)}`);
  if (replicas > 1 && (args.target === 'memory' || args.target === 'redis' || (args.target === 'mq' && !args.bootstrap))) {
    throw new MqError('INVALID_ARGUMENT', `--replicas ${replicas} needs a cluster: mq with --bootstrap, nats or rabbitmq (not ${args.target === 'mq' ? 'a local broker' : args.target})`);
  }
  const replicated = replicas > 1 ? { replicas } : {};
  switch (args.target) {
    case 'memory':
      return { target: createMemoryTarget({ retain: args['memory-retain'] ?? true }), broker: null };
    case 'nats': {
      const { createNatsTarget } = await import('./peers/nats.js');
      return { target: await createNatsTarget({ servers: needAddress().split(','), ...durability, ...replicated }), broker: null };
    }
    case 'redis': {
      const { createRedisTarget } = await import('./peers/redis.js');
      return { target: await createRedisTarget({ host: host(), port: port(), ...durability, ...(args['redis-read'] ? { groupMode: args['redis-read'] } : {}) }), broker: null };
    }
    case 'rabbitmq': {
      const { createRabbitTarget } = await import('./peers/rabbitmq.js');
      return { target: await createRabbitTarget({ host: host(), port: port(), ...durability, ...replicated }), broker: null };
    }
    case 'mq': {
      const { createMqTarget } = await import('./targets/mq.js');
      const config = parseBrokerConfig(args['broker-config'], args.flush);
      if (args.bootstrap) {
        if (Object.keys(config).length > 0) throw new MqError('INVALID_ARGUMENT', '--flush and --broker-config apply to a local broker; a running broker (--bootstrap) keeps its own configuration');
        return { target: await createMqTarget({ bootstrap: args.bootstrap, ...durability, ...replicated }), broker: null };
      }
      const profDir = args['broker-cpu-prof'];
      const heapFlags = args['broker-heap'] === 'v8' ? [] : BROKER_HEAP_FLAGS;
      const broker = await startLocalBroker({
        ...(opts.brokerCommand ? { command: opts.brokerCommand } : {}),
        config,
        heapFlags,
        ...(profDir ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profDir}`] } : {}),
      });
      try {
        const heap = heapFlags.length > 0 ? ` (broker heap: ${heapFlags.join(' ')})` : ' (broker heap: V8 defaults)';
        const target = await createMqTarget({ bootstrap: broker.bootstrap, durability: args.durability ?? describeFlush(config['log.flush.policy']) + heap });
        return { target, broker };
      } catch (err) {
        await broker.close();
        throw err;
      }
    }
    default:
      throw new MqError('INVALID_ARGUMENT', `--target must be one of ${BENCH_TARGETS.join(', ')}`);
  }
}

function describeFlush(policy: string | undefined): string {
  switch (policy) {
    case 'always':
      return 'local broker, log.flush.policy=always: fsync before every ack';
    case 'os':
      return 'local broker, log.flush.policy=os: ack after the write to the OS, no fsync';
    case 'interval':
    case undefined:
      return 'local broker, log.flush.policy=interval (the default): ack after the write to the OS, fsync every log.flush.interval.ms (1 s)';
    default:
      return `local broker, log.flush.policy=${policy}`;
  }
}

/** Runs one workload as the command line describes it; returns the result (and prints it). */
export async function runBenchFromArgs(args: BenchArgs, opts: BenchCommandOptions = {}): Promise<BenchResult> {
  const out = opts.out ?? process.stdout;
  const err = opts.err ?? process.stderr;
  const environment = collectEnvironment();
  const { target, broker } = await openTarget(args, opts);
  const abort = new AbortController();
  const onSigint = (): void => abort.abort();
  if (opts.signal) opts.signal.addEventListener('abort', onSigint, { once: true });
  else process.once('SIGINT', onSigint);
  const ctx: WorkloadContext = {
    progress: args.quiet ? null : err,
    environment,
    signal: abort.signal,
    ...(args['progress-ms'] ? { progressIntervalMs: args['progress-ms'] } : {}),
  };
  const common = {
    ...(args.topic === undefined ? {} : { topic: args.topic }),
    ...(args.size === undefined ? {} : { size: args.size }),
    ...(args.partitions === undefined ? {} : { partitions: args.partitions }),
    ...(args.keys === undefined ? {} : { keys: args.keys }),
    ...(args['idle-timeout-ms'] === undefined ? {} : { idleTimeoutMs: args['idle-timeout-ms'] }),
  };
  const producing = {
    ...(args.acks === undefined ? {} : { acks: args.acks }),
    ...(args['batch-bytes'] === undefined ? {} : { batchBytes: args['batch-bytes'] }),
    ...(args['linger-ms'] === undefined ? {} : { lingerMs: args['linger-ms'] }),
    ...(args.compression === undefined ? {} : { compression: args.compression }),
  };
  let result: BenchResult;
  try {
    if (args.workload === 'produce') {
      result = await runProduce(
        target,
        {
          ...common,
          ...producing,
          ...(args.records === undefined ? {} : { records: args.records }),
          ...(args.duration === undefined ? {} : { duration: args.duration }),
          ...(args.producers === undefined ? {} : { producers: args.producers }),
          ...(args.window === undefined ? {} : { window: args.window }),
          ...(args.rate === undefined ? {} : { rate: args.rate }),
          ...(args.warmup === undefined ? {} : { warmup: args.warmup }),
        },
        ctx,
      );
    } else if (args.workload === 'consume') {
      result = await runConsume(
        target,
        {
          ...common,
          ...(args.records === undefined ? {} : { records: args.records }),
          ...(args.consumers === undefined ? {} : { consumers: args.consumers }),
          ...(args.group === undefined ? {} : { group: args.group }),
          ...(args.prepare === undefined ? {} : { prepare: args.prepare }),
        },
        ctx,
      );
    } else {
      result = await runE2e(
        target,
        {
          ...common,
          ...producing,
          ...(args.records === undefined ? {} : { records: args.records }),
          ...(args.duration === undefined ? {} : { duration: args.duration }),
          ...(args.rate === undefined ? {} : { rate: args.rate }),
          ...(args.consumers === undefined ? {} : { consumers: args.consumers }),
          ...(args.group === undefined ? {} : { group: args.group }),
          ...(args.window === undefined ? {} : { window: args.window }),
        },
        ctx,
      );
    }
    if (args.topic === undefined) await target.deleteTopic(result.parameters.topic as string).catch(() => undefined);
  } finally {
    if (opts.signal) opts.signal.removeEventListener('abort', onSigint);
    else process.off('SIGINT', onSigint);
    await target.close().catch(() => undefined);
    await broker?.close();
  }
  if (broker) result.parameters.localBroker = true;
  out.write(args.json ? JSON.stringify(result) + '\n' : formatResultTable(result) + '\n');
  return result;
}

/** The options every bench workload takes. */
export function benchBuilder(y: Argv): Argv<BenchArgs> {
  return y
    .positional('workload', { choices: ['produce', 'consume', 'e2e'] as const, describe: 'what to measure', demandOption: true })
    .option('target', { choices: BENCH_TARGETS, default: 'mq' as TargetName, describe: 'system under test (peers need --peer-address)' })
    .option('bootstrap', { type: 'string', describe: 'host:port of a running mq broker; without it a local broker is started for the run' })
    .option('flush', { choices: ['os', 'interval', 'always'] as const, describe: 'local broker: log.flush.policy (always = fsync before ack)' })
    .option('broker-config', { type: 'string', array: true, describe: 'local broker: extra config key=value (repeatable)' })
    .option('broker-cpu-prof', { type: 'string', describe: 'local broker: write a --cpu-prof profile into this directory' })
    .option('memory-retain', { type: 'boolean', describe: 'memory target: keep the records (default); --no-memory-retain acknowledges only (the harness\'s own cost at a rate)' })
    .option('broker-heap', { choices: ['tuned', 'v8'] as const, describe: 'local broker: BROKER_HEAP_FLAGS (tuned, default) or V8 defaults (v8)' })
    .option('peer-address', { type: 'string', describe: 'host:port of a peer server (nats, redis, rabbitmq)' })
    .option('redis-read', { choices: ['xreadgroup', 'xread'] as const, describe: 'redis: how a group reads' })
    .option('durability', { type: 'string', describe: 'override the durability statement printed with the result' })
    .option('replicas', { type: 'number', describe: 'replicas of each topic/stream (mq --bootstrap: RF with min.insync.replicas a majority; nats: R; rabbitmq: initial-cluster-size)' })
    .option('records', { type: 'number', describe: 'records to send (produce, e2e) or prepare and read (consume)' })
    .option('duration', { type: 'number', describe: 'seconds to run instead of --records (produce, e2e)' })
    .option('size', { type: 'number', describe: 'value bytes per record (default 100)' })
    .option('keys', { type: 'string', describe: 'none | uniform:K | hot (90% one key)' })
    .option('partitions', { type: 'number', describe: 'partitions of the topic (default 1)' })
    .option('acks', { type: 'string', describe: '0 | 1 | all (default 1)' })
    .option('batch-bytes', { type: 'number', describe: 'producer batch size in bytes' })
    .option('linger-ms', { type: 'number', describe: 'producer linger in ms' })
    .option('compression', { choices: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], describe: 'batch compression' })
    .option('producers', { type: 'number', describe: 'producers (connections) in this process' })
    .option('window', { type: 'number', describe: 'outstanding records per producer (1 = await each ack; produce 16384, e2e 65536)' })
    .option('rate', { type: 'number', describe: 'target records/s, open loop (produce: optional; e2e: default 10000)' })
    .option('warmup', { type: 'number', describe: 'produce: seconds of the same load first, not measured (default 0)' })
    .option('consumers', { type: 'number', describe: 'consumers (need --group when > 1)' })
    .option('group', { type: 'string', describe: 'read as this consumer group (empty: a generated name)' })
    .option('topic', { type: 'string', describe: 'topic name (default: a fresh one, deleted afterwards)' })
    .option('prepare', { type: 'boolean', describe: 'consume: fill the topic first (--no-prepare reads an existing --topic)' })
    .option('idle-timeout-ms', { type: 'number', describe: 'stop waiting after this long without a record' })
    .option('json', { type: 'boolean', default: false, describe: 'print one JSON object instead of the table' })
    .option('quiet', { type: 'boolean', default: false, describe: 'no progress lines on stderr' })
    .option('progress-ms', { type: 'number', describe: 'progress interval (default 1000)' }) as unknown as Argv<BenchArgs>;
}

/** `bench <produce|consume|e2e>` as a yargs command module (the mq CLI registers it). */
export function buildBenchCommand(opts: BenchCommandOptions = {}): CommandModule<object, BenchArgs> {
  return {
    command: 'bench <workload>',
    describe: 'measure produce, consume or end-to-end throughput and latency',
    builder: (y) => benchBuilder(y as Argv),
    handler: async (args) => {
      const result = await runBenchFromArgs(args, opts);
      if (result.errors > 0) {
        (opts.err ?? process.stderr).write(`bench: ${result.errors} errors (${result.firstError ?? 'see above'})\n`);
        process.exitCode = 1;
      }
    },
  };
}
