/**
 * `mq quota set|delete|list`: client quotas (Kafka's model), enforced by
 * throttling on every broker. An entity is a user, a client id or both;
 * `--default-user` / `--default-client` stand for every one without a quota
 * of its own.
 *
 *   mq quota set --client-id loader --producer-byte-rate 1048576
 *   mq quota set --user alice --consumer-byte-rate 5242880 --request-rate 200
 *   mq quota set --default-user --producer-byte-rate 10485760
 *   mq quota delete --user alice [--key request_rate]
 *   mq quota list [--user alice] [--client-id loader]
 */
import type { ClientQuota, ClientQuotaEntity, ClientQuotaKey } from '@mq/client';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;
const KEYS: ClientQuotaKey[] = ['producer_byte_rate', 'consumer_byte_rate', 'request_rate'];
const DEFAULT = '<default>';

interface EntityArgs {
  user?: string;
  'client-id'?: string;
  'default-user'?: boolean;
  'default-client'?: boolean;
}

function withEntity<T>(y: Argv<T>): Argv<T & EntityArgs> {
  return y
    .option('user', { type: 'string', requiresArg: true, describe: 'a user (the principal User:<name>)' })
    .option('client-id', { type: 'string', requiresArg: true, describe: 'a client id' })
    .option('default-user', { type: 'boolean', describe: 'every user without a quota of its own (<default>)' })
    .option('default-client', { type: 'boolean', describe: 'every client id without a quota of its own (<default>)' }) as unknown as Argv<T & EntityArgs>;
}

function entityOf(args: EntityArgs, required: boolean): ClientQuotaEntity {
  if (args.user !== undefined && args['default-user']) throw new UsageError('give --user NAME or --default-user, not both');
  if (args['client-id'] !== undefined && args['default-client']) throw new UsageError('give --client-id ID or --default-client, not both');
  const user = args['default-user'] ? DEFAULT : args.user;
  const clientId = args['default-client'] ? DEFAULT : args['client-id'];
  if (required && user === undefined && clientId === undefined) throw new UsageError('name the entity: --user NAME, --client-id ID (or both), --default-user, --default-client');
  return { ...(user !== undefined ? { user } : {}), ...(clientId !== undefined ? { clientId } : {}) };
}

function entityText(e: ClientQuotaEntity): string {
  return [e.user !== undefined ? `user=${e.user}` : '', e.clientId !== undefined ? `client-id=${e.clientId}` : ''].filter((s) => s).join(',');
}

function rows(quotas: ClientQuota[]): string[][] {
  return quotas.flatMap((q) => KEYS.filter((k) => q.values[k] !== undefined).map((k) => [q.entity.user ?? '', q.entity.clientId ?? '', k, String(q.values[k])]));
}

const HEADER = ['USER', 'CLIENT-ID', 'QUOTA', 'VALUE (per second)'];

export function quotaCommand(ctx: CliContext): CommandModule {
  type SetArgs = Args & EntityArgs & { 'producer-byte-rate'?: number; 'consumer-byte-rate'?: number; 'request-rate'?: number };
  const set: CommandModule<object, SetArgs> = {
    command: 'set',
    describe: 'set quota values of a user, a client id or both',
    builder: (y) =>
      withFormat(withEntity(withClientOptions(y, ctx.env)))
        .option('producer-byte-rate', { type: 'number', requiresArg: true, describe: 'bytes per second produced (record bytes)' })
        .option('consumer-byte-rate', { type: 'number', requiresArg: true, describe: 'bytes per second fetched (record bytes)' })
        .option('request-rate', { type: 'number', requiresArg: true, describe: 'requests per second (every API but the handshake and login)' }) as unknown as Argv<SetArgs>,
    handler: async (args) => {
      const entity = entityOf(args, true);
      const values: Partial<Record<ClientQuotaKey, number>> = {};
      if (args['producer-byte-rate'] !== undefined) values.producer_byte_rate = args['producer-byte-rate'];
      if (args['consumer-byte-rate'] !== undefined) values.consumer_byte_rate = args['consumer-byte-rate'];
      if (args['request-rate'] !== undefined) values.request_rate = args['request-rate'];
      if (Object.keys(values).length === 0) throw new UsageError('give at least one of --producer-byte-rate, --consumer-byte-rate, --request-rate');
      for (const [k, v] of Object.entries(values)) if (!Number.isFinite(v)) throw new UsageError(`--${k.replace(/_/g, '-')} must be a number`);
      await withClient(args, (c) => c.admin().alterClientQuotas([{ entity, set: values }]));
      await out(ctx, args, { entity, values }, () => `set ${entityText(entity)}: ${Object.entries(values).map(([k, v]) => `${k}=${v}`).join(' ')}`);
    },
  };

  type DeleteArgs = Args & EntityArgs & { key?: ClientQuotaKey[] };
  const del: CommandModule<object, DeleteArgs> = {
    command: 'delete',
    describe: 'remove quota values of an entity (all of them unless --key)',
    builder: (y) =>
      withFormat(withEntity(withClientOptions(y, ctx.env))).option('key', { type: 'string', array: true, choices: KEYS, describe: 'only these quota(s)' }) as unknown as Argv<DeleteArgs>,
    handler: async (args) => {
      const entity = entityOf(args, true);
      const remove = args.key && args.key.length > 0 ? [...new Set(args.key)] : KEYS;
      await withClient(args, async (c) => {
        const admin = c.admin();
        // Only the keys the entity has (removing a key it lacks is no change, and an entity with none is not there).
        const current = (await admin.describeClientQuotas(entity)).find((q) => q.entity.user === entity.user && q.entity.clientId === entity.clientId);
        const present = remove.filter((k) => current?.values[k] !== undefined);
        if (present.length > 0) await admin.alterClientQuotas([{ entity, remove: present }]);
        await out(ctx, args, { entity, removed: present }, () => (present.length === 0 ? `${entityText(entity)} has no such quota` : `removed ${present.join(', ')} of ${entityText(entity)}`));
      });
    },
  };

  type ListArgs = Args & EntityArgs;
  const list: CommandModule<object, ListArgs> = {
    command: 'list',
    describe: 'list client quotas (all, or those of a user and/or client id)',
    builder: (y) => withFormat(withEntity(withClientOptions(y, ctx.env))) as unknown as Argv<ListArgs>,
    handler: async (args) => {
      const quotas = await withClient(args, (c) => c.admin().describeClientQuotas(entityOf(args, false)));
      if (args.format === 'json') {
        await writeLine(ctx.stdout, JSON.stringify(quotas));
        return;
      }
      await writeLine(ctx.stdout, quotas.length === 0 ? 'no quotas' : table(HEADER, rows(quotas)));
    },
  };

  return {
    command: 'quota <command>',
    describe: 'set, delete and list client quotas (produce/fetch bytes per second, requests per second; enforced by throttling)',
    builder: (y) =>
      y
        .command(set as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .command(list as unknown as CommandModule)
        .demandCommand(1, 'name a quota command: set, delete or list'),
    handler: () => {
      throw new UsageError('name a quota command: set, delete or list');
    },
  };
}
