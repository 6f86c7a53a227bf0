/** `mq broker start`: run one broker in the foreground until SIGINT/SIGTERM. */
import type { Argv, CommandModule } from 'yargs';
import type { CliContext } from '../context.js';
import { parseKeyValues } from '../options.js';

interface StartArgs {
  'data-dir'?: string;
  host?: string;
  port?: number;
  'http-port'?: number;
  config?: string;
  'config-set'?: string[];
  'broker-id'?: number;
  'controller-voters'?: string;
  'process-roles'?: string;
  'controller-bootstrap-servers'?: string;
}

export function brokerCommand(ctx: CliContext): CommandModule {
  const start: CommandModule<object, StartArgs> = {
    command: 'start',
    describe: 'run a broker in the foreground (Ctrl-C stops it cleanly)',
    builder: (y) =>
      y
        .option('data-dir', { alias: 'd', type: 'string', describe: 'where data and configs live', defaultDescription: './mq-data' })
        .option('host', { type: 'string', describe: 'interface to listen on', defaultDescription: '127.0.0.1' })
        .option('port', { type: 'number', describe: 'WebSocket port for clients (0: any free port)', defaultDescription: '9092' })
        .option('http-port', { type: 'number', describe: 'HTTP API port (0: any free port)', defaultDescription: '9080' })
        .option('broker-id', { type: 'number', describe: 'this broker\'s id' })
        .option('controller-voters', { type: 'string', describe: 'join a cluster: id@host:raftPort of every controller voter, comma separated (sets controller.quorum.voters)' })
        .option('process-roles', { type: 'string', describe: 'broker,controller (a voter that also hosts partitions), controller (a dedicated voter) or broker (hosts partitions, follows the controllers) (sets process.roles)' })
        .option('controller-bootstrap-servers', { type: 'string', describe: 'host:port (inter-broker port, inter.broker.port) of the controllers, comma separated, for a broker-only process (sets controller.quorum.bootstrap.servers)' })
        .option('config', { type: 'string', describe: 'broker config file (key=value lines, or .json)' })
        .option('config-set', { type: 'string', array: true, describe: 'broker config key=value (repeatable; overrides --config)' }) as unknown as Argv<StartArgs>,
    handler: async (args) => {
      const config = parseKeyValues('--config-set', args['config-set']);
      if (args['controller-voters'] !== undefined) config['controller.quorum.voters'] = args['controller-voters'];
      if (args['process-roles'] !== undefined) config['process.roles'] = args['process-roles'];
      if (args['controller-bootstrap-servers'] !== undefined) config['controller.quorum.bootstrap.servers'] = args['controller-bootstrap-servers'];
      // Loaded here so that client commands never load the broker.
      const { startBroker } = await import('@mq/broker');
      const broker = await startBroker({
        ...(args['data-dir'] !== undefined ? { dataDir: args['data-dir'] } : {}),
        ...(args.host !== undefined ? { host: args.host } : {}),
        ...(args.port !== undefined ? { port: args.port } : {}),
        ...(args['http-port'] !== undefined ? { httpPort: args['http-port'] } : {}),
        ...(args['broker-id'] !== undefined ? { brokerId: args['broker-id'] } : {}),
        ...(args.config !== undefined ? { configFile: args.config } : {}),
        config,
      });
      // Run until SIGINT/SIGTERM; then close gracefully (a second signal forces the exit).
      await new Promise<void>((resolve) => {
        if (ctx.signal.aborted) resolve();
        else ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await broker.close();
    },
  };
  return {
    command: 'broker <command>',
    describe: 'run a broker',
    builder: (y) => y.command(start as unknown as CommandModule).demandCommand(1, 'name a broker command: start'),
    handler: () => {},
  };
}
