/**
 * `mq controller add-voter|remove-voter|describe`: the metadata quorum's
 * membership on a running cluster (Kafka's KIP-853 `kafka-metadata-quorum
 * add-controller|remove-controller|describe`), over the admin API of @mq/client.
 */
import type { Argv, CommandModule } from 'yargs';
import type { QuorumDescription, QuorumMembership } from '@mq/client';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { intOption, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;

/** `host:port` of a Raft listener. */
export function parseRaftAddress(raw: unknown): string {
  const s = String(raw ?? '').trim();
  const m = /^(.+):(\d+)$/.exec(s);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new UsageError(`--address "${s}" is not host:port of the controller's Raft listener (its controller.raft.address), e.g. --address 127.0.0.1:19094`);
  return s;
}

function membershipText(verb: string, id: number, m: QuorumMembership): string {
  return `${verb} controller ${id}: voters ${m.voters.join(', ')}${m.learners.length ? `, learners ${m.learners.join(', ')}` : ''}`;
}

function describeText(q: QuorumDescription): string {
  return [
    `active controller ${q.leaderId > 0 ? q.leaderId : 'none'} (term ${q.leaderEpoch}), metadata log committed to ${q.highWatermark}`,
    table(
      ['ID', 'ROLE', 'ADDRESS', 'LOG END', 'LAG', 'STATUS'],
      q.members.map((m) => [String(m.id), m.id === q.leaderId ? 'leader' : m.voter ? 'voter' : 'learner', m.address || '?', String(m.logEnd), String(m.lag), m.recentlyActive ? 'active' : 'not heard from']),
    ),
  ].join('\n');
}

export function controllerCommand(ctx: CliContext): CommandModule {
  type Add = Args & { id: number; address: string; 'timeout-ms': number };
  const add: CommandModule<object, Add> = {
    command: 'add-voter',
    describe: 'add a running controller (started with controller.raft.address) to the metadata quorum: it catches up as a learner, then votes',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .option('id', { ...intOption('--id', 1, 'the controller\'s id (its broker.id)'), demandOption: true })
        .option('address', { type: 'string', requiresArg: true, demandOption: true, describe: 'host:port of its Raft listener (its controller.raft.address)', coerce: parseRaftAddress })
        .option('timeout-ms', { ...intOption('--timeout-ms', 1, 'how long it may take to catch up before the change is undone', 60_000) }) as unknown as Argv<Add>,
    handler: async (args) => {
      const m = await withClient(args, (c) => c.admin().addRaftVoter(args.id, args.address, { timeoutMs: args['timeout-ms'] }));
      await out(ctx, args, { id: args.id, address: args.address, ...m }, () => membershipText('added', args.id, m));
    },
  };
  type Remove = Args & { id: number; 'timeout-ms': number };
  const remove: CommandModule<object, Remove> = {
    command: 'remove-voter',
    describe: 'remove a controller from the metadata quorum (the active one steps down); refused for the last voter',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .option('id', { ...intOption('--id', 1, 'the controller\'s id'), demandOption: true })
        .option('timeout-ms', { ...intOption('--timeout-ms', 1, 'how long to wait for the change to commit', 30_000) }) as unknown as Argv<Remove>,
    handler: async (args) => {
      const m = await withClient(args, (c) => c.admin().removeRaftVoter(args.id, { timeoutMs: args['timeout-ms'] }));
      await out(ctx, args, { id: args.id, ...m }, () => `${membershipText('removed', args.id, m)} (stop its process now)`);
    },
  };
  const describe: CommandModule<object, Args> = {
    command: 'describe',
    describe: 'the metadata quorum: the active controller, each voter and learner with its address, log end and lag',
    builder: (y) => withFormat(withClientOptions(y, ctx.env)) as unknown as Argv<Args>,
    handler: async (args) => {
      const q = await withClient(args, (c) => c.admin().describeQuorum());
      await out(ctx, args, q, () => describeText(q));
    },
  };
  return {
    command: 'controller <command>',
    describe: 'the controller quorum: add-voter, remove-voter, describe',
    builder: (y) =>
      y
        .command(add as unknown as CommandModule)
        .command(remove as unknown as CommandModule)
        .command(describe as unknown as CommandModule)
        .demandCommand(1, 'name a controller command: add-voter, remove-voter, describe'),
    handler: () => {},
  };
}
