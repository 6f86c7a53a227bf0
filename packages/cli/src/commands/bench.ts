/** `mq bench produce|consume|e2e` and `mq bench compare`: the benchmark harness of @mq/bench (see packages/bench/README.md). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Argv, CommandModule } from 'yargs';
import { benchBuilder, compareBuilder, runBenchFromArgs, runCompareFromArgs, type BenchArgs, type CompareArgs } from '@mq/bench';
import { MqError } from '@mq/protocol/errors';
import type { CliContext } from '../context.js';

export function benchCommand(ctx: CliContext): CommandModule {
  // A local broker for the run is this same CLI: `mq broker start` in a child process.
  const bin = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'bin.js');
  const run: CommandModule<object, BenchArgs> = {
    command: '$0 <workload>',
    describe: 'measure produce, consume or end-to-end throughput and latency (a local broker unless --bootstrap)',
    builder: (y) => benchBuilder(y as Argv),
    handler: async (args) => {
      const result = await runBenchFromArgs(args, { brokerCommand: [process.execPath, bin], out: ctx.stdout, err: ctx.stderr, signal: ctx.signal });
      if (result.errors > 0) throw new MqError('UNKNOWN', `bench: ${result.errors} records failed or went missing (${result.firstError ?? 'see above'})`);
    },
  };
  const compare: CommandModule<object, CompareArgs> = {
    command: 'compare <baseline> <current>',
    describe: 'compare the medians of two sets of --json runs; exit 1 only on a drop beyond --max-drop and the noise measured',
    builder: (y) => compareBuilder(y as Argv),
    handler: async (args) => {
      const report = await runCompareFromArgs(args, ctx.stdout);
      if (report.regressed) {
        const worse = report.scenarios.flatMap((s) => s.metrics.filter((m) => m.regressed).map((m) => `${s.scenario} ${m.metric} ${(m.change * 100).toFixed(1)}% worse (limit ${(m.threshold * 100).toFixed(1)}%)`));
        throw new MqError('UNKNOWN', `bench compare: regression: ${worse.join('; ')}`, { retriable: false });
      }
    },
  };
  const cmd: CommandModule = {
    command: 'bench <workload>',
    describe: 'measure produce, consume or end-to-end throughput and latency; compare saved runs (bench compare)',
    builder: (y) => y.command(compare as unknown as CommandModule).command(run as unknown as CommandModule),
    handler: () => {},
  };
  return cmd;
}
