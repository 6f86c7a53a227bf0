#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { buildBenchCommand } from './command.js';
import { compareBuilder, runCompareFromArgs, type CompareArgs } from './compare.js';

// `mq-bench <workload>`: the same command as `mq bench`, runnable without the
// mq CLI (the peer comparison runs it once per case, each in a fresh process).
const bench = buildBenchCommand();
await yargs(hideBin(process.argv))
  .scriptName('mq-bench')
  .command<CompareArgs>({
    command: 'compare <baseline> <current>',
    describe: 'compare the medians of two sets of --json runs; exit 1 on a drop beyond --max-drop and the noise',
    builder: (y) => compareBuilder(y),
    handler: async (args) => {
      if ((await runCompareFromArgs(args)).regressed) process.exitCode = 1;
    },
  })
  .command({ ...bench, command: '$0 <workload>' })
  .strict()
  .fail((msg, err) => {
    process.stderr.write(`mq-bench: ${err ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : msg}\n`);
    process.exit(2);
  })
  .help()
  .parseAsync();
