/**
 * The `mq` command line: yargs with every command from commands/index.ts.
 * Any failure — a bad flag, an unknown topic, a broker that is not running —
 * ends as one line on stderr and a non-zero exit code, never a stack trace.
 */
import yargs from 'yargs';
import { COMMANDS } from './commands/index.js';
import type { CliContext, CliIo } from './context.js';
import { UsageError, exitCodeOf, formatError } from './errors.js';

export const VERSION = '0.1.0';

/** Runs the CLI on `argv` (without node and script); resolves with the exit code. */
export async function run(argv: string[], io: CliIo, signal: AbortSignal = new AbortController().signal): Promise<number> {
  const ctx: CliContext = { ...io, signal };
  let failure: unknown;
  const y = yargs(argv)
    .scriptName('mq')
    .usage('mq: a distributed message queue\n\nUsage: $0 <command> [options]')
    .strict()
    .recommendCommands()
    .demandCommand(1, 'name a command')
    .version(VERSION)
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((msg: string | undefined, err: Error | undefined) => {
      failure = err ?? new UsageError(`${msg ?? 'invalid command line'} (see: mq --help)`);
      throw failure;
    })
    .epilogue('Client commands reach the broker at --bootstrap (default localhost:9092, or env MQ_BOOTSTRAP).');
  const first = argv.find((a) => !a.startsWith('-'));
  for (const entry of COMMANDS) {
    if (typeof entry === 'function') {
      y.command(entry(ctx));
    } else if (entry.command.split(' ')[0] === first) {
      y.command((await entry.load())(ctx));
    } else {
      // Listed for --help; never run (the real module is loaded when its name is the command).
      y.command({ command: entry.command, describe: entry.describe, builder: (b) => b, handler: () => {} });
    }
  }
  try {
    await y.parseAsync();
  } catch (err) {
    failure ??= err;
  }
  if (failure !== undefined) {
    io.stderr.write(`${formatError(failure)}\n`);
    if (io.env.MQ_DEBUG && failure instanceof Error && failure.stack) io.stderr.write(`${failure.stack}\n`);
    return exitCodeOf(failure);
  }
  return 0;
}
