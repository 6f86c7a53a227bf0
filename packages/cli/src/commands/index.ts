/**
 * Every `mq` command, in one list. A command is a factory taking the CLI
 * context and returning a yargs command module; add new ones here. A heavy
 * command can be listed `lazy(...)`: its module is imported only when that
 * command runs (`mq --help` shows its name and description either way), so
 * `mq topic list` does not pay for loading the benchmark harness.
 */
import type { CommandModule } from 'yargs';
import type { CliContext } from '../context.js';
import { brokerCommand } from './broker.js';
import { clusterCommand } from './cluster.js';
import { consumeCommand } from './consume.js';
import { groupCommand } from './group.js';
import { produceCommand } from './produce.js';
import { profileCommand } from './profile.js';
import { topicCommand } from './topic.js';
import { topCommand } from './top.js';
import { userCommand } from './user.js';
import { aclCommand } from './acl.js';
import { quotaCommand } from './quota.js';
import { controllerCommand } from './controller.js';

export type CommandFactory = (ctx: CliContext) => CommandModule;

export interface LazyCommand {
  /** The yargs command string, e.g. `bench <workload>`. */
  command: string;
  describe: string;
  load: () => Promise<CommandFactory>;
}

export type CommandEntry = CommandFactory | LazyCommand;

export function lazy(command: string, describe: string, load: () => Promise<CommandFactory>): LazyCommand {
  return { command, describe, load };
}

export const COMMANDS: readonly CommandEntry[] = [
  brokerCommand,
  clusterCommand,
  topicCommand,
  produceCommand,
  consumeCommand,
  groupCommand,
  profileCommand,
  topCommand,
  userCommand,
  aclCommand,
  quotaCommand,
  controllerCommand,
  lazy('bench <workload>', 'measure produce, consume or end-to-end throughput and latency (a local broker unless --bootstrap)', () =>
    import('./bench.js').then((m) => m.benchCommand),
  ),
];
