/**
 * `mq top`: a terminal view of the cluster refreshed every second: brokers (fenced ones named), per topic its
 * partitions, under-replicated and offline partitions, records (sum of high watermarks) and records per second
 * since the last refresh, and per consumer group its state, members and total lag. On a terminal the screen is
 * redrawn; otherwise (or with --format json) one snapshot is printed per refresh.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Argv, CommandModule } from 'yargs';
import type { MqClient } from '@mq/client';
import { writeLine, type CliContext } from '../context.js';
import { table } from '../output.js';
import { connectClient, intOption, makeClient, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';

interface TopArgs extends ClientArgs, FormatArgs {
  'interval-ms': number;
  iterations: number;
  'include-internal': boolean;
  'max-groups': number;
}

export interface TopicRow {
  topic: string;
  partitions: number;
  underReplicated: number;
  offline: number;
  /** Records in the log (high watermark minus log start, summed over partitions). */
  records: number;
  /** Sum of the partitions' high watermarks: every record ever appended, deleted ones included. */
  appended: number;
  /** Records appended per second since the previous snapshot (null on the first). */
  rate: number | null;
}

export interface GroupRow {
  group: string;
  state: string;
  members: number;
  lag: number;
}

export interface TopSnapshot {
  at: number;
  clusterId: string;
  controllerId: number;
  brokers: number;
  fencedBrokers: number[];
  topics: TopicRow[];
  groups: GroupRow[];
}

/** One snapshot of the cluster; `previous` gives the rates. */
export async function snapshot(client: MqClient, options: { includeInternal: boolean; maxGroups: number; signal: AbortSignal }, previous?: TopSnapshot): Promise<TopSnapshot> {
  const admin = client.admin();
  const cluster = await admin.describeCluster({ signal: options.signal });
  const names = (await admin.listTopics({ signal: options.signal })).filter((n) => options.includeInternal || !n.startsWith('__')).sort();
  const described = names.length > 0 ? await admin.describeTopics(names, { signal: options.signal }) : [];
  const at = Date.now();
  const topics = await Promise.all(
    described.map(async (t): Promise<TopicRow> => {
      const online = t.partitions.filter((p) => p.leader >= 0);
      const ends = online.length > 0 ? await admin.listOffsets(t.name, online.map((p) => ({ partition: p.partition, spec: 'latest' as const })), { signal: options.signal }).catch(() => []) : [];
      const records = ends.reduce((n, e) => n + Math.max(0, e.high - e.low), 0);
      const appended = ends.reduce((n, e) => n + e.high, 0);
      const before = previous?.topics.find((x) => x.topic === t.name);
      const dt = previous ? (at - previous.at) / 1000 : 0;
      return {
        topic: t.name,
        partitions: t.partitions.length,
        underReplicated: t.partitions.filter((p) => p.leader >= 0 && p.isr.length < p.replicas.length).length,
        offline: t.partitions.length - online.length,
        records,
        appended,
        rate: before && dt > 0 ? Math.max(0, (appended - before.appended) / dt) : null,
      };
    }),
  );
  const groups: GroupRow[] = [];
  const listed = (await client.groups().listGroups({ signal: options.signal }).catch(() => [])).slice(0, options.maxGroups);
  for (const g of listed) {
    const d = await client.groups().describeGroup(g.groupId, { signal: options.signal }).catch(() => undefined);
    if (!d) continue;
    groups.push({ group: g.groupId, state: d.state, members: d.members.length, lag: d.offsets.reduce((n, o) => n + (o.lag ?? 0), 0) });
  }
  groups.sort((a, b) => b.lag - a.lag || (a.group < b.group ? -1 : 1));
  return {
    at,
    clusterId: cluster.clusterId,
    controllerId: cluster.controllerId,
    brokers: cluster.brokers.length,
    fencedBrokers: cluster.brokers.filter((b) => b.fenced).map((b) => b.id),
    topics,
    groups,
  };
}

/** The text view of one snapshot. */
export function render(s: TopSnapshot): string {
  const fenced = s.fencedBrokers.length > 0 ? `, fenced: ${s.fencedBrokers.join(', ')}` : '';
  const head = `mq top  ${new Date(s.at).toISOString()}  cluster ${s.clusterId}  ${s.brokers} broker${s.brokers === 1 ? '' : 's'}${fenced}  controller ${s.controllerId}`;
  const rate = (r: number | null) => (r === null ? '-' : r >= 100 ? Math.round(r).toString() : r.toFixed(1));
  const topics =
    s.topics.length === 0
      ? 'no topics'
      : table(
          ['TOPIC', 'PARTITIONS', 'UNDER-REPLICATED', 'OFFLINE', 'RECORDS', 'RECORDS/S'],
          s.topics.map((t) => [t.topic, String(t.partitions), String(t.underReplicated), String(t.offline), String(t.records), rate(t.rate)]),
        );
  const groups = s.groups.length === 0 ? 'no consumer groups' : table(['GROUP', 'STATE', 'MEMBERS', 'LAG'], s.groups.map((g) => [g.group, g.state, String(g.members), String(g.lag)]));
  return `${head}\n\n${topics}\n\n${groups}`;
}

export function topCommand(ctx: CliContext): CommandModule {
  const cmd: CommandModule<object, TopArgs> = {
    command: 'top',
    describe: 'a live view of the cluster: brokers, topics (health, records, records/s) and consumer groups (lag), refreshed every second',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .option('interval-ms', intOption('--interval-ms', 100, 'time between refreshes', 1000))
        .option('iterations', intOption('--iterations', 0, 'stop after this many refreshes (0: until Ctrl-C)', 0))
        .option('max-groups', intOption('--max-groups', 1, 'most consumer groups shown (the ones with the most lag)', 20))
        .option('include-internal', { type: 'boolean', default: false, describe: 'show internal topics (__consumer_offsets)' }) as unknown as Argv<TopArgs>,
    handler: async (args) => {
      const client = makeClient(args);
      const redraw = args.format !== 'json' && (ctx.stdout as { isTTY?: boolean }).isTTY === true;
      try {
        await connectClient(client, args);
        let previous: TopSnapshot | undefined;
        for (let i = 0; args.iterations === 0 || i < args.iterations; i++) {
          if (i > 0) {
            const aborted = await sleep(args['interval-ms'], false, { signal: ctx.signal }).catch(() => true);
            if (aborted) break;
          }
          if (ctx.signal.aborted) break;
          const s = await snapshot(client, { includeInternal: args['include-internal'], maxGroups: args['max-groups'], signal: ctx.signal }, previous);
          previous = s;
          if (args.format === 'json') await writeLine(ctx.stdout, JSON.stringify(s));
          else await writeLine(ctx.stdout, (redraw ? '\x1b[H\x1b[2J' : i > 0 ? '\n' : '') + render(s));
        }
      } finally {
        await client.close({ timeoutMs: 1000 });
      }
    },
  };
  return cmd as unknown as CommandModule;
}
