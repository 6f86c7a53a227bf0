export { run, VERSION } from './cli.js';
export { COMMANDS } from './commands/index.js';
export { formatError, exitCodeOf, UsageError, EXIT_FAILURE, EXIT_USAGE } from './errors.js';
export type { CommandFactory } from './commands/index.js';
export type { CliContext, CliIo } from './context.js';
