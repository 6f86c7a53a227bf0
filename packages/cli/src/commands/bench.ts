/** `mq bench produce|consume|e2e`: the benchmark harness of @mq/bench (see packages/bench/README.md). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv, CommandModule } from 'yargs';
import { benchBuilder, runBenchFromArgs, type BenchArgs } from '@mq/bench';
import { MqError } from '@mq/protocol/errors';
import type { CliContext } from '../context.js';

export function benchCommand(ctx: CliContext): CommandModule {
  // A local broker for the run is this same CLI: `mq broker start` in a child process.
  const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin.js');
  const cmd: CommandModule<object, BenchArgs> = {
    command: 'bench <workload>',
    describe: 'measure produce, consume or end-to-end throughput and latency (a local broker unless --bootstrap)',
    builder: (y) => benchBuilder(y as Argv),
    handler: async (args) => {
      const result = await runBenchFromArgs(args, { brokerCommand: [process.execPath, bin], out: ctx.stdout, err: ctx.stderr, signal: ctx.signal });
      if (result.errors > 0) throw new MqError('UNKNOWN', `bench: ${result.errors} records failed or went missing (${result.firstError ?? 'see above'})`);
    },
  };
  return cmd as unknown as CommandModule;
}
