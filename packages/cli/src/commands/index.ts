/**
 * Every `mq` command, in one list. A command is a factory taking the CLI
 * context and returning a yargs command module; add new ones here.
 */
import type { CommandModule } from 'yargs';
import type { CliContext } from '../context.js';
import { benchCommand } from './bench.js';
import { brokerCommand } from './broker.js';
import { consumeCommand } from './consume.js';
import { groupCommand } from './group.js';
import { produceCommand } from './produce.js';
import { topicCommand } from './topic.js';

export type CommandFactory = (ctx: CliContext) => CommandModule;

export const COMMANDS: readonly CommandFactory[] = [brokerCommand, topicCommand, produceCommand, consumeCommand, groupCommand, benchCommand];
