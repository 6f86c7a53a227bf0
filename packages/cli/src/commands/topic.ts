/** `mq topic create|list|describe|delete|alter|alter-config|trim`: topics, their partitions and configs. */
import type { Argv, CommandModule } from 'yargs';
import type { TopicDescription, Watermarks } from '@mq/client';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { list, table } from '../output.js';
import { reassignCommand } from './scaleout.js';
import { intFlag, intOption, parseKeyValues, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;

function partitionRows(d: TopicDescription, marks: Map<number, Watermarks>, rates: Map<number, number>): string[][] {
  return d.partitions.map((p) => {
    const m = marks.get(p.partition);
    const rate = rates.get(p.partition);
    return [
      String(p.partition),
      p.leader < 0 ? 'none' : String(p.leader),
      list(p.replicas),
      list(p.isr),
      m ? String(m.low) : '-',
      m ? String(m.high) : '-',
      rate === undefined ? '-' : String(Math.round(rate)),
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
    describe: 'show partitions (leader, replicas, ISR, watermarks, produce bytes/s over the last 10 s) and configs of a topic',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).positional('name', { type: 'string', demandOption: true }) as unknown as Argv<
        Args & { name: string }
      >,
    handler: async (args) => {
      const { d, marks, configs, rates } = await withClient(args, async (c) => {
        const admin = c.admin();
        const d = await admin.describeTopic(args.name);
        const offsets = await admin.listOffsets(
          args.name,
          d.partitions.filter((p) => p.leader >= 0).map((p) => ({ partition: p.partition, spec: 'latest' as const })),
        );
        const marks = new Map<number, Watermarks>(offsets.map((o) => [o.partition, { low: o.low, high: o.high }]));
        const configs = (await admin.describeConfigs({ topics: [args.name] }))[0]?.entries ?? [];
        // Each partition's produce rate, from its leader (a hot partition shows here); a leader that does not answer leaves "-".
        const leaders = [...new Set(d.partitions.map((p) => p.leader).filter((l) => l >= 0))];
        const dirs = await Promise.all(leaders.map((id) => admin.describeLogDirs(id, [args.name]).catch(() => undefined)));
        const rates = new Map<number, number>();
        for (const dir of dirs) for (const r of dir?.replicas ?? []) if (r.leader && r.topic === args.name) rates.set(r.partition, r.bytesInPerSec);
        return { d, marks, configs, rates };
      });
      if (args.format === 'json') {
        await writeLine(
          ctx.stdout,
          JSON.stringify({
            name: d.name,
            topicId: d.topicId,
            partitions: d.partitions.map((p) => ({ ...p, ...(marks.get(p.partition) ?? {}), ...(rates.has(p.partition) ? { bytesInPerSec: rates.get(p.partition) } : {}) })),
            configs: Object.fromEntries(configs.map((e) => [e.name, e.value])),
          }),
        );
        return;
      }
      const rf = d.partitions[0]?.replicas.length ?? 0;
      const overridden = configs.filter((e) => e.source === 'topic').map((e) => `${e.name}=${e.value}`);
      const lines = [
        `topic ${d.name}  partitions ${d.partitions.length}  replication ${rf}${overridden.length ? `  configs ${overridden.join(' ')}` : ''}`,
        table(['PARTITION', 'LEADER', 'REPLICAS', 'ISR', 'LOW', 'HIGH', 'IN B/S', 'ERROR'], partitionRows(d, marks, rates)),
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

  const alterConfig: CommandModule<object, Args & { name: string; set?: string[]; delete?: string[]; 'dry-run': boolean }> = {
    command: 'alter-config <name>',
    describe: "set or remove a topic's configs (the others keep their values)",
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true })
        .option('set', { alias: 's', type: 'string', array: true, requiresArg: true, describe: 'config key=value to set (repeatable)' })
        .option('delete', { alias: 'd', type: 'string', array: true, requiresArg: true, describe: "config key to remove: it falls back to the broker's default (repeatable)" })
        .option('dry-run', { type: 'boolean', default: false, describe: 'validate and show the result without changing the topic' }) as unknown as Argv<
        Args & { name: string; set?: string[]; delete?: string[]; 'dry-run': boolean }
      >,
    handler: async (args) => {
      const set = parseKeyValues('--set', args.set);
      const remove = [...new Set((args.delete ?? []).map((k) => k.trim()))];
      if (Object.keys(set).length === 0 && remove.length === 0) throw new UsageError('give at least one --set key=value or --delete key');
      const both = remove.filter((k) => k in set);
      if (both.length > 0) throw new UsageError(`${both.join(', ')} given to both --set and --delete`);
      const r = await withClient(args, (c) => c.admin().alterConfigs(args.name, { set, delete: remove }, { validateOnly: args['dry-run'] }));
      const changed = new Set([...Object.keys(set), ...remove]);
      const entries = r.entries.filter((e) => changed.has(e.name));
      await out(ctx, args, { topic: args.name, dryRun: args['dry-run'], configs: Object.fromEntries(r.entries.map((e) => [e.name, e.value])), changed: entries }, () =>
        [
          `${args['dry-run'] ? 'would alter' : 'altered'} configs of topic "${args.name}":`,
          table(['CONFIG', 'VALUE', 'SOURCE'], entries.map((e) => [e.name, e.value, e.source])),
        ].join('\n'),
      );
    },
  };

  const trim: CommandModule<object, Args & { name: string; partition: number[]; 'before-offset': number }> = {
    command: 'trim <name>',
    describe: 'delete the records below an offset in partitions of a topic (DeleteRecords)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true })
        .option('partition', {
          alias: 'p',
          type: 'string',
          array: true,
          demandOption: true,
          requiresArg: true,
          describe: 'partition to trim (repeatable) [integer]',
          coerce: (ps: unknown[]) => ps.map((p) => intFlag('--partition', 0)(p)!),
        })
        .option('before-offset', {
          demandOption: true,
          ...intOption('--before-offset', -1, 'delete the records below this offset; -1 = up to the high watermark (everything committed)'),
        }) as unknown as Argv<Args & { name: string; partition: number[]; 'before-offset': number }>,
    handler: async (args) => {
      const partitions = [...new Set(args.partition)];
      const r = await withClient(args, (c) =>
        c.admin().deleteRecords(args.name, partitions.map((partition) => ({ partition, offset: args['before-offset'] }))),
      );
      await out(ctx, args, { topic: args.name, partitions: r }, () =>
        [`trimmed topic "${args.name}":`, table(['PARTITION', 'LOW'], r.map((x) => [String(x.partition), String(x.low)]))].join('\n'),
      );
    },
  };

  return {
    command: 'topic <command>',
    describe: 'create, list, describe, alter, reconfigure, trim and delete topics',
    builder: (y) =>
      y
        .command(create as unknown as CommandModule)
        .command(listCmd as unknown as CommandModule)
        .command(describe as unknown as CommandModule)
        .command(alter as unknown as CommandModule)
        .command(alterConfig as unknown as CommandModule)
        .command(trim as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .command(reassignCommand(ctx))
        .demandCommand(1, 'name a topic command: create, list, describe, alter, alter-config, trim, reassign or delete'),
    handler: () => {
      throw new UsageError('name a topic command: create, list, describe, alter, alter-config, trim or delete');
    },
  };
}
