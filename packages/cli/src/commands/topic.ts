/** `mq topic create|list|describe|delete|alter`: topics and their partitions. */
import type { Argv, CommandModule } from 'yargs';
import type { TopicDescription, Watermarks } from '@mq/client';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { list, table } from '../output.js';
import { intOption, parseKeyValues, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;

function partitionRows(d: TopicDescription, marks: Map<number, Watermarks>): string[][] {
  return d.partitions.map((p) => {
    const m = marks.get(p.partition);
    return [
      String(p.partition),
      p.leader < 0 ? 'none' : String(p.leader),
      list(p.replicas),
      list(p.isr),
      m ? String(m.low) : '-',
      m ? String(m.high) : '-',
      p.error === 'NONE' ? '' : p.error,
    ];
  });
}

export function topicCommand(ctx: CliContext): CommandModule {
  const create: CommandModule<object, Args & { name: string; partitions: number; 'replication-factor': number; config?: string[] }> = {
    command: 'create <name>',
    describe: 'create a topic',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true, describe: 'topic name' })
        .option('partitions', { alias: 'p', ...intOption('--partitions', 1, 'number of partitions', 1) })
        .option('replication-factor', { alias: 'r', ...intOption('--replication-factor', 1, 'copies of each partition', 1) })
        .option('config', { alias: 'c', type: 'string', array: true, describe: 'topic config key=value (repeatable)' }) as unknown as Argv<
        Args & { name: string; partitions: number; 'replication-factor': number; config?: string[] }
      >,
    handler: async (args) => {
      const configs = parseKeyValues('--config', args.config);
      const r = await withClient(args, (c) =>
        c.admin().createTopic(args.name, { numPartitions: args.partitions, replicationFactor: args['replication-factor'], configs }),
      );
      await out(ctx, args, r, () => {
        const cfg = Object.keys(configs).length > 0 ? `, configs ${Object.entries(configs).map(([k, v]) => `${k}=${v}`).join(' ')}` : '';
        return `created topic "${r.topic}" with ${r.numPartitions} partition${r.numPartitions === 1 ? '' : 's'}, replication factor ${r.replicationFactor}${cfg}`;
      });
    },
  };

  const listCmd: CommandModule<object, Args> = {
    command: 'list',
    describe: 'list topics',
    builder: (y) => withFormat(withClientOptions(y, ctx.env)),
    handler: async (args) => {
      const topics = await withClient(args, async (c) => {
        const names = await c.admin().listTopics();
        return names.length > 0 ? c.admin().describeTopics(names) : [];
      });
      if (args.format === 'json') {
        await writeLine(
          ctx.stdout,
          JSON.stringify(
            topics.map((t) => ({ name: t.name, partitions: t.partitions.length, replicationFactor: t.partitions[0]?.replicas.length ?? 0 })),
          ),
        );
        return;
      }
      if (topics.length === 0) {
        await writeLine(ctx.stdout, 'no topics (create one with: mq topic create <name>)');
        return;
      }
      await writeLine(
        ctx.stdout,
        table(
          ['TOPIC', 'PARTITIONS', 'REPLICATION'],
          topics.map((t) => [t.name, String(t.partitions.length), String(t.partitions[0]?.replicas.length ?? 0)]),
        ),
      );
    },
  };

  const describe: CommandModule<object, Args & { name: string }> = {
    command: 'describe <name>',
    describe: 'show partitions (leader, replicas, ISR, watermarks) and configs of a topic',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).positional('name', { type: 'string', demandOption: true }) as unknown as Argv<
        Args & { name: string }
      >,
    handler: async (args) => {
      const { d, marks, configs } = await withClient(args, async (c) => {
        const admin = c.admin();
        const d = await admin.describeTopic(args.name);
        const offsets = await admin.listOffsets(
          args.name,
          d.partitions.filter((p) => p.leader >= 0).map((p) => ({ partition: p.partition, spec: 'latest' as const })),
        );
        const marks = new Map<number, Watermarks>(offsets.map((o) => [o.partition, { low: o.low, high: o.high }]));
        const configs = (await admin.describeConfigs({ topics: [args.name] }))[0]?.entries ?? [];
        return { d, marks, configs };
      });
      if (args.format === 'json') {
        await writeLine(
          ctx.stdout,
          JSON.stringify({
            name: d.name,
            topicId: d.topicId,
            partitions: d.partitions.map((p) => ({ ...p, ...(marks.get(p.partition) ?? {}) })),
            configs: Object.fromEntries(configs.map((e) => [e.name, e.value])),
          }),
        );
        return;
      }
      const rf = d.partitions[0]?.replicas.length ?? 0;
      const overridden = configs.filter((e) => e.source === 'topic').map((e) => `${e.name}=${e.value}`);
      const lines = [
        `topic ${d.name}  partitions ${d.partitions.length}  replication ${rf}${overridden.length ? `  configs ${overridden.join(' ')}` : ''}`,
        table(['PARTITION', 'LEADER', 'REPLICAS', 'ISR', 'LOW', 'HIGH', 'ERROR'], partitionRows(d, marks)),
      ];
      await writeLine(ctx.stdout, lines.join('\n'));
    },
  };

  const del: CommandModule<object, Args & { name: string }> = {
    command: 'delete <name>',
    describe: 'delete a topic and its data',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).positional('name', { type: 'string', demandOption: true }) as unknown as Argv<
        Args & { name: string }
      >,
    handler: async (args) => {
      await withClient(args, (c) => c.admin().deleteTopics([args.name]));
      await out(ctx, args, { deleted: args.name }, () => `deleted topic "${args.name}"`);
    },
  };

  const alter: CommandModule<object, Args & { name: string; partitions: number }> = {
    command: 'alter <name>',
    describe: 'add partitions to a topic (keyed records then map to other partitions)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true })
        .option('partitions', { alias: 'p', demandOption: true, ...intOption('--partitions', 1, 'the new total number of partitions') }) as unknown as Argv<
        Args & { name: string; partitions: number }
      >,
    handler: async (args) => {
      const [r] = await withClient(args, (c) => c.admin().createPartitions([{ topic: args.name, count: args.partitions }]));
      await out(ctx, args, r, () => `topic "${args.name}" now has ${args.partitions} partitions${r?.warning ? ` (warning: ${r.warning})` : ''}`);
    },
  };

  return {
    command: 'topic <command>',
    describe: 'create, list, describe, alter and delete topics',
    builder: (y) =>
      y
        .command(create as unknown as CommandModule)
        .command(listCmd as unknown as CommandModule)
        .command(describe as unknown as CommandModule)
        .command(alter as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .demandCommand(1, 'name a topic command: create, list, describe, alter or delete'),
    handler: () => {
      throw new UsageError('name a topic command: create, list, describe, alter or delete');
    },
  };
}
