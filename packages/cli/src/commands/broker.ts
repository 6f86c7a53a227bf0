/** `mq broker start`: run one broker in the foreground until SIGINT/SIGTERM. */
import { decommissionCommand } from './scaleout.js';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { LOG_FORMATS, textLogStream, useTextLogs, type LogFormat } from '../log-text.js';
import { parseKeyValues } from '../options.js';
import { CommandError } from '../errors.js';

interface StartArgs {
  'data-dir'?: string;
  host?: string;
  port?: number;
  'http-port'?: number;
  'kafka-port'?: number;
  config?: string;
  'config-set'?: string[];
  'broker-id'?: number;
  'controller-voters'?: string;
  'process-roles'?: string;
  'controller-bootstrap-servers'?: string;
  'log-format': LogFormat;
}

/** The start-up summary for a person: where the broker listens, its data and its topics. */
export function startupSummary(b: { brokerId: number; clusterId: string; port: number; httpPort: number; kafkaPort?: number | undefined; dataDir: string; host: string; loopback: boolean }, topics: number | string): string {
  const host = b.host === '0.0.0.0' || b.host === '::' ? '127.0.0.1' : b.host;
  return [
    `mq broker ${b.brokerId} is running (cluster ${b.clusterId})`,
    `  clients   ws://${host}:${b.port}    (mq topic list --bootstrap ${host}:${b.port})`,
    `  HTTP API  http://${host}:${b.httpPort}`,
    b.kafkaPort !== undefined ? `  Kafka     ${host}:${b.kafkaPort}    (Kafka clients: kcat -b ${host}:${b.kafkaPort} -L)` : '  Kafka     no Kafka listener (give one with --kafka-port N)',
    `  data dir  ${path.resolve(b.dataDir)}`,
    `  topics    ${topics}`,
    b.loopback
      ? '  network   loopback only: other machines cannot connect (no authentication yet)'
      : `  network   ${b.host}: other machines can connect, with no authentication (allow.insecure=true)`,
    'Warnings and errors are shown below; all logs as JSON with --log-format json (the default when not on a terminal).',
    'Ctrl-C stops it cleanly.',
  ].join('\n');
}

export function brokerCommand(ctx: CliContext): CommandModule {
  const start: CommandModule<object, StartArgs> = {
    command: 'start',
    describe: 'run a broker in the foreground (Ctrl-C stops it cleanly)',
    builder: (y) =>
      y
        .option('data-dir', { alias: 'd', type: 'string', describe: 'where data and configs live', defaultDescription: './mq-data' })
        .option('host', { type: 'string', describe: 'interface to listen on (beyond loopback needs --config-set allow.insecure=true: there is no authentication yet)', defaultDescription: '127.0.0.1' })
        .option('port', { type: 'number', describe: 'WebSocket port for clients (0: any free port)', defaultDescription: '9092' })
        .option('http-port', { type: 'number', describe: 'HTTP API port (0: any free port)', defaultDescription: '9080' })
        .option('kafka-port', { type: 'number', describe: 'Kafka-protocol port for Kafka clients (kafkajs, kcat; 0: any free port, -1: none); a single broker tries 9093 by default and starts without it if 9093 is taken', defaultDescription: '9093' })
        .option('broker-id', { type: 'number', describe: 'this broker\'s id' })
        .option('controller-voters', { type: 'string', describe: 'join a cluster: id@host:raftPort of every controller voter, comma separated (sets controller.quorum.voters)' })
        .option('process-roles', { type: 'string', describe: 'broker,controller (a voter that also hosts partitions), controller (a dedicated voter) or broker (hosts partitions, follows the controllers) (sets process.roles)' })
        .option('controller-bootstrap-servers', { type: 'string', describe: 'host:port (inter-broker port, inter.broker.port) of the controllers, comma separated, for a broker-only process (sets controller.quorum.bootstrap.servers)' })
        .option('config', { type: 'string', describe: 'broker config file (key=value lines, or .json)' })
        .option('config-set', { type: 'string', array: true, describe: 'broker config key=value (repeatable; overrides --config)' })
        .option('log-format', {
          choices: LOG_FORMATS,
          default: (LOG_FORMATS as readonly string[]).includes(ctx.env.MQ_LOG_FORMAT ?? '') ? (ctx.env.MQ_LOG_FORMAT as LogFormat) : 'auto',
          describe: 'auto: a start-up summary and warnings as text on a terminal, JSON logs otherwise; env MQ_LOG_FORMAT',
        }) as unknown as Argv<StartArgs>,
    handler: async (args) => {
      const config = parseKeyValues('--config-set', args['config-set']);
      if (args['controller-voters'] !== undefined) config['controller.quorum.voters'] = args['controller-voters'];
      if (args['process-roles'] !== undefined) config['process.roles'] = args['process-roles'];
      if (args['controller-bootstrap-servers'] !== undefined) config['controller.quorum.bootstrap.servers'] = args['controller-bootstrap-servers'];
      // Loaded here so that client commands never load the broker (an optional peer dependency of @mq/cli).
      const { startBroker, isLoopbackHost, DEFAULT_KAFKA_PORT } = await loadBroker();
      const text = useTextLogs(args['log-format'], ctx.stdout as { isTTY?: boolean });
      const logger = text ? (await import('pino')).pino({ name: 'mq-broker', level: ctx.env.MQ_LOG_LEVEL ?? 'warn' }, textLogStream(ctx.stdout)) : undefined;
      const broker = await startBroker({
        ...(args['data-dir'] !== undefined ? { dataDir: args['data-dir'] } : {}),
        ...(args.host !== undefined ? { host: args.host } : {}),
        ...(args.port !== undefined ? { port: args.port } : {}),
        ...(args['http-port'] !== undefined ? { httpPort: args['http-port'] } : {}),
        ...(args['kafka-port'] !== undefined ? { kafkaPort: args['kafka-port'] } : {}),
        defaultKafkaPort: DEFAULT_KAFKA_PORT,
        ...(args['broker-id'] !== undefined ? { brokerId: args['broker-id'] } : {}),
        ...(args.config !== undefined ? { configFile: args.config } : {}),
        config,
      }, logger ? { logger } : {});
      if (text) await writeLine(ctx.stdout, startupSummary({ ...broker, host: args.host ?? '127.0.0.1', loopback: isLoopbackHost(args.host ?? '127.0.0.1') }, await topicCount(broker.port)));
      // Run until SIGINT/SIGTERM; then close gracefully (a second signal forces the exit).
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      if (text) await writeLine(ctx.stdout, 'stopping: finishing requests in flight, flushing and closing the logs ...');
      await broker.close();
      if (text) await writeLine(ctx.stdout, 'stopped');
    },
  };
  return {
    command: 'broker <command>',
    describe: 'run a broker',
    builder: (y) => y.command(start as unknown as CommandModule).command(decommissionCommand(ctx)).demandCommand(1, 'name a broker command: start, decommission'),
    handler: () => {},
  };
}

/** Topics on the broker just started (asked over its own port, so both broker modes answer alike), or why not. */
async function topicCount(port: number): Promise<string> {
  const { MqClient } = await import('@mq/client');
  const client = new MqClient({ bootstrap: `127.0.0.1:${port}`, clientId: 'mq-cli', requestTimeoutMs: 3000, retry: { retries: 2, initialDelayMs: 100, maxDelayMs: 500 } });
  try {
    const topics = await client.admin().listTopics();
    return `${topics.length}${topics.length > 0 ? ` (${topics.slice(0, 5).join(', ')}${topics.length > 5 ? ', ...' : ''})` : ' (create one with: mq topic create <name>)'}`;
  } catch (err) {
    return `unknown (${(err as Error).message})`;
  } finally {
    await client.close({ timeoutMs: 1000 }).catch(() => undefined);
  }
}

/**
 * @mq/broker, which @mq/cli has as an optional peer dependency so that users of the client commands do not
 * install a server; `mq broker start` without it says how to get it.
 */
async function loadBroker(): Promise<typeof import('@mq/broker')> {
  try {
    return await import('@mq/broker');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_MODULE_NOT_FOUND' && /'@mq\/broker'/.test(e.message)) {
      throw new CommandError('mq broker start needs the broker package: npm i -g @mq/broker beside @mq/cli (or npx -p @mq/cli -p @mq/broker mq broker start)');
    }
    throw err;
  }
}
