#!/usr/bin/env node
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { buildBenchCommand } from './command.js';

// `mq-bench <workload>`: the same command as `mq bench`, runnable without the
// mq CLI (the peer comparison runs it once per case, each in a fresh process).
const bench = buildBenchCommand();
await yargs(hideBin(process.argv))
  .scriptName('mq-bench')
  .command({ ...bench, command: '$0 <workload>' })
  .strict()
  .fail((msg, err) => {
    process.stderr.write(`mq-bench: ${err ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : msg}\n`);
    process.exit(2);
  })
  .help()
  .parseAsync();
