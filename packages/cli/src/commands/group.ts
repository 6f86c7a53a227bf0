/** `mq group list|describe|reset-offsets|delete`: consumer groups, their members, offsets and lag. */
import type { Argv, CommandModule } from 'yargs';
import type { GroupDescription, ResetSpec } from '@mq/client';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { intFlag, intOption, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;

/** The states `group list --state` accepts: the broker's group states. */
export const GROUP_STATES: readonly string[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

/** The text form of `mq group describe`: the group line, then one row per partition, then idle members. */
export function describeText(d: GroupDescription): string {
  const lines = [
    `group ${d.groupId}: ${d.state}, ${d.members.length} member${d.members.length === 1 ? '' : 's'}` +
      (d.protocol ? `, protocol ${d.protocol}, generation ${d.generationId}` : '') +
      `, total lag ${d.totalLag}`,
  ];
  const clientOf = new Map(d.members.map((m) => [m.memberId, m]));
  if (d.offsets.length > 0) {
    lines.push(
      table(
        ['TOPIC', 'PARTITION', 'COMMITTED', 'LOG-END', 'LAG', 'MEMBER', 'CLIENT-ID', 'HOST'],
        d.offsets.map((o) => {
          const m = o.owner ? clientOf.get(o.owner) : undefined;
          return [
            o.topic,
            String(o.partition),
            o.committedOffset < 0 ? '-' : String(o.committedOffset),
            o.logEndOffset === null ? '-' : String(o.logEndOffset),
            o.lag === null ? '-' : String(o.lag),
            o.owner ?? '-',
            m?.clientId ?? '-',
            m?.clientHost ?? '-',
          ];
        }),
      ),
    );
  }
  const idle = d.members.filter((m) => m.assignment.length === 0);
  if (idle.length > 0) {
    lines.push(`${idle.length} idle member${idle.length === 1 ? '' : 's'} (no partitions assigned):`);
    for (const m of idle) lines.push(`  ${m.memberId}  ${m.clientId}  ${m.clientHost}`);
  }
  return lines.join('\n');
}

/** Parses a time flag (`--to-datetime`, `consume --offset @...`): ISO 8601 (e.g. 2026-11-29T08:00:00Z) or milliseconds since the epoch. */
export function parseDatetime(raw: string, flag = '--to-datetime'): number {
  const ms = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isSafeInteger(ms) || ms < 0) throw new UsageError(`${flag} must be ISO 8601 (e.g. 2026-11-29T08:00:00Z) or epoch milliseconds, got "${raw}"`);
  return ms;
}

const ISO_DURATION = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;

/**
 * Parses `--by-duration`: an ISO 8601 duration in weeks, days, hours, minutes
 * and seconds (e.g. PT30M, P1DT12H; years and months are refused, their length
 * varies) or milliseconds. Returns milliseconds.
 */
export function parseDuration(raw: string, flag = '--by-duration'): number {
  const s = raw.trim();
  if (/^\d+$/.test(s)) return Number(s);
  const m = ISO_DURATION.exec(s);
  if (!m || s.toUpperCase() === 'P' || s.toUpperCase().endsWith('T')) {
    throw new UsageError(`${flag} must be an ISO 8601 duration such as PT30M, PT2H or P1DT12H (weeks, days, hours, minutes, seconds), or milliseconds, got "${raw}"`);
  }
  const [w, d, h, min, sec] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
  const ms = Math.round(((((w! * 7 + d!) * 24 + h!) * 60 + min!) * 60 + sec!) * 1000);
  if (!Number.isSafeInteger(ms)) throw new UsageError(`${flag} "${raw}" is too long`);
  return ms;
}

interface ResetArgs extends Args {
  group: string;
  topic: string;
  partition?: number[];
  'to-earliest'?: boolean;
  'to-latest'?: boolean;
  'to-offset'?: number;
  'to-datetime'?: string;
  'shift-by'?: number;
  'by-duration'?: string;
  'dry-run': boolean;
}

type ResetFlags = Pick<ResetArgs, 'to-earliest' | 'to-latest' | 'to-offset' | 'to-datetime' | 'shift-by' | 'by-duration'>;

/** The one reset target the flags name; `now` (ms) anchors --by-duration. */
export function resetSpecOf(args: ResetFlags, now: number = Date.now()): ResetSpec {
  const given = [
    args['to-earliest'] ? 'earliest' : null,
    args['to-latest'] ? 'latest' : null,
    args['to-offset'] !== undefined ? 'offset' : null,
    args['to-datetime'] !== undefined ? 'datetime' : null,
    args['shift-by'] !== undefined ? 'shift' : null,
    args['by-duration'] !== undefined ? 'duration' : null,
  ].filter(Boolean);
  if (given.length !== 1) throw new UsageError('give exactly one of --to-earliest, --to-latest, --to-offset N, --to-datetime D, --shift-by N, --by-duration D');
  if (args['to-earliest']) return 'earliest';
  if (args['to-latest']) return 'latest';
  if (args['to-offset'] !== undefined) {
    const n = args['to-offset'];
    if (!Number.isSafeInteger(n) || n < 0) throw new UsageError(`--to-offset must be an integer >= 0, got ${n}`);
    return { offset: n };
  }
  if (args['shift-by'] !== undefined) return { shiftBy: args['shift-by'] };
  if (args['by-duration'] !== undefined) return { datetime: Math.max(0, now - parseDuration(args['by-duration'])) };
  return { datetime: parseDatetime(args['to-datetime']!) };
}

export function groupCommand(ctx: CliContext): CommandModule {
  const listCmd: CommandModule<object, Args & { state?: string[] }> = {
    command: 'list',
    describe: 'list consumer groups and their states',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env)).option('state', {
        type: 'string',
        array: true,
        choices: GROUP_STATES as string[],
        describe: 'only groups in these states',
      }) as unknown as Argv<Args & { state?: string[] }>,
    handler: async (args) => {
      const groups = await withClient(args, (c) => c.groups().listGroups({ states: args.state }));
      await out(ctx, args, groups, () =>
        groups.length === 0 ? 'no consumer groups' : table(['GROUP', 'STATE', 'PROTOCOL-TYPE'], groups.map((g) => [g.groupId, g.state, g.protocolType])),
      );
    },
  };

  const describe: CommandModule<object, Args & { group: string }> = {
    command: 'describe <group>',
    describe: 'members, assignment, committed offset, log end and lag per partition',
    builder: (y) => withFormat(withClientOptions(y, ctx.env)).positional('group', { type: 'string', demandOption: true }) as unknown as Argv<Args & { group: string }>,
    handler: async (args) => {
      const d = await withClient(args, (c) => c.groups().describeGroup(args.group));
      await out(ctx, args, d, () => describeText(d));
    },
  };

  const reset: CommandModule<object, ResetArgs> = {
    command: 'reset-offsets <group>',
    describe: "move a group's committed offsets on a topic (refused while the group has active members)",
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('group', { type: 'string', demandOption: true })
        .option('topic', { alias: 't', type: 'string', demandOption: true, describe: 'topic whose offsets move' })
        .option('partition', { alias: 'p', type: 'string', array: true, describe: 'only these partitions (default: all) [integer]', coerce: (ps: unknown[]) => ps.map((p) => intFlag('--partition', 0)(p)!) })
        .option('to-earliest', { type: 'boolean', describe: 'to the first offset still in the log' })
        .option('to-latest', { type: 'boolean', describe: 'to the log end (skip everything there now)' })
        .option('to-offset', intOption('--to-offset', 0, 'to this offset (clamped to the log range)'))
        .option('to-datetime', { type: 'string', describe: 'to the first record at or after this time (ISO 8601 or epoch ms)' })
        .option('shift-by', {
          type: 'string',
          requiresArg: true,
          describe: 'move each committed offset by N (negative: back), clamped to the log range [integer]',
          coerce: intFlag('--shift-by', -Number.MAX_SAFE_INTEGER),
        })
        .option('by-duration', { type: 'string', requiresArg: true, describe: 'to the first record of the last D (ISO 8601 duration such as PT30M or P1D, or ms)' })
        .option('dry-run', { type: 'boolean', default: false, describe: 'show the new offsets without committing them' }) as unknown as Argv<ResetArgs>,
    handler: async (args) => {
      const spec = resetSpecOf(args);
      const r = await withClient(args, (c) =>
        c.groups().resetOffsets(args.group, args.topic, spec, { partitions: args.partition, dryRun: args['dry-run'] }),
      );
      await out(ctx, args, { group: args.group, dryRun: args['dry-run'], offsets: r }, () =>
        [
          `${args['dry-run'] ? 'would reset' : 'reset'} group "${args.group}" on topic "${args.topic}":`,
          table(
            ['TOPIC', 'PARTITION', 'PREVIOUS', 'NEW'],
            r.map((x) => [x.topic, String(x.partition), x.previousOffset < 0 ? '-' : String(x.previousOffset), String(x.offset)]),
          ),
        ].join('\n'),
      );
    },
  };

  const del: CommandModule<object, Args & { group: string }> = {
    command: 'delete <group>',
    describe: 'delete an empty group and its committed offsets',
    builder: (y) => withFormat(withClientOptions(y, ctx.env)).positional('group', { type: 'string', demandOption: true }) as unknown as Argv<Args & { group: string }>,
    handler: async (args) => {
      await withClient(args, (c) => c.groups().deleteGroup(args.group));
      await out(ctx, args, { group: args.group, deleted: true }, () => `deleted group "${args.group}"`);
    },
  };

  return {
    command: 'group <command>',
    describe: 'list, describe, reset offsets of and delete consumer groups',
    builder: (y) =>
      y
        .command(listCmd as unknown as CommandModule)
        .command(describe as unknown as CommandModule)
        .command(reset as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .demandCommand(1, 'name a group command: list, describe, reset-offsets or delete'),
    handler: () => {
      throw new UsageError('name a group command: list, describe, reset-offsets or delete');
    },
  };
}
