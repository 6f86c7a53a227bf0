/**
 * `mq acl add|remove|list`: who may do what to which topic, group,
 * transactional id or the cluster (enforced with authorization.enabled=true).
 *
 *   mq acl add --allow User:alice --operation read --topic orders
 *   mq acl add --allow User:alice --operation read --group app- --prefixed
 *   mq acl add --deny User:* --operation write --topic audit
 *   mq acl remove --principal User:alice --topic orders
 *   mq acl list [--principal User:alice] [--topic orders]
 */
import type { Acl, AclFilter, AclOperation, AclResourceType } from '@mq/client';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;
const OPERATIONS: AclOperation[] = ['all', 'read', 'write', 'create', 'delete', 'alter', 'describe', 'alter-configs', 'describe-configs', 'idempotent-write', 'cluster-action'];

interface ResourceArgs {
  topic?: string;
  group?: string;
  'transactional-id'?: string;
  cluster?: boolean;
  prefixed?: boolean;
}

function withResource<T>(y: Argv<T>): Argv<T & ResourceArgs> {
  return y
    .option('topic', { type: 'string', requiresArg: true, describe: 'a topic (or topic name prefix with --prefixed; * for every topic)' })
    .option('group', { type: 'string', requiresArg: true, describe: 'a consumer group (or prefix)' })
    .option('transactional-id', { type: 'string', requiresArg: true, describe: 'a transactional id (or prefix)' })
    .option('cluster', { type: 'boolean', describe: 'the cluster (users, ACLs, idempotent producers)' })
    .option('prefixed', { type: 'boolean', describe: 'the name is a prefix' }) as unknown as Argv<T & ResourceArgs>;
}

function resourceOf(args: ResourceArgs, required: boolean): Pick<Acl, 'resourceType' | 'resourceName'> | undefined {
  const given: Array<[AclResourceType, string]> = [];
  if (args.topic !== undefined) given.push(['topic', args.topic]);
  if (args.group !== undefined) given.push(['group', args.group]);
  if (args['transactional-id'] !== undefined) given.push(['transactional-id', args['transactional-id']]);
  if (args.cluster) given.push(['cluster', 'mq-cluster']);
  if (given.length > 1) throw new UsageError('name one resource: --topic, --group, --transactional-id or --cluster');
  if (given.length === 0) {
    if (required) throw new UsageError('name the resource: --topic NAME, --group NAME, --transactional-id ID or --cluster');
    return undefined;
  }
  return { resourceType: given[0]![0], resourceName: given[0]![1] };
}

function principalOf(p: string): string {
  const v = p.includes(':') ? p : `User:${p}`;
  if (!/^User:[^\s;,]+$/.test(v)) throw new UsageError(`principal "${p}" is not User:<name> (User:* for everyone)`);
  return v;
}

function rows(acls: Acl[]): string[][] {
  return acls.map((a) => [a.principal, a.permission, a.operation, a.resourceType, a.resourceName, a.patternType ?? 'literal']);
}

export function aclCommand(ctx: CliContext): CommandModule {
  type AddArgs = Args & ResourceArgs & { allow?: string; deny?: string; operation: AclOperation[] };
  const add: CommandModule<object, AddArgs> = {
    command: 'add',
    describe: 'allow or deny a principal an operation on a resource',
    builder: (y) =>
      withFormat(withResource(withClientOptions(y, ctx.env)))
        .option('allow', { type: 'string', requiresArg: true, describe: 'the principal allowed (User:alice, or alice)' })
        .option('deny', { type: 'string', requiresArg: true, describe: 'the principal denied (deny wins over allow)' })
        .option('operation', { type: 'string', array: true, choices: OPERATIONS, demandOption: true, describe: 'operation(s)' }) as unknown as Argv<AddArgs>,
    handler: async (args) => {
      if ((args.allow === undefined) === (args.deny === undefined)) throw new UsageError('give one of --allow PRINCIPAL or --deny PRINCIPAL');
      const resource = resourceOf(args, true)!;
      const principal = principalOf((args.allow ?? args.deny)!);
      const acls: Acl[] = args.operation.map((operation) => ({
        ...resource,
        patternType: args.prefixed ? 'prefixed' : 'literal',
        principal,
        operation,
        permission: args.allow !== undefined ? 'allow' : 'deny',
      }));
      await withClient(args, (c) => c.admin().createAcls(acls));
      await out(ctx, args, acls, () => `added:\n${table(['PRINCIPAL', 'PERMISSION', 'OPERATION', 'TYPE', 'NAME', 'PATTERN'], rows(acls))}`);
    },
  };

  type FilterArgs = Args & ResourceArgs & { principal?: string; operation?: AclOperation; permission?: 'allow' | 'deny' };
  const filterOf = (args: FilterArgs): AclFilter => ({
    ...(resourceOf(args, false) ?? {}),
    ...(args.prefixed !== undefined ? { patternType: args.prefixed ? 'prefixed' : 'literal' } : {}),
    ...(args.principal ? { principal: principalOf(args.principal) } : {}),
    ...(args.operation ? { operation: args.operation } : {}),
    ...(args.permission ? { permission: args.permission } : {}),
  });
  const withFilter = (y: Argv<object>) =>
    withFormat(withResource(withClientOptions(y, ctx.env)))
      .option('principal', { type: 'string', requiresArg: true, describe: 'only this principal\'s ACLs' })
      .option('operation', { type: 'string', choices: OPERATIONS, describe: 'only this operation' })
      .option('permission', { type: 'string', choices: ['allow', 'deny'], describe: 'only allows or denies' }) as unknown as Argv<FilterArgs>;

  const remove: CommandModule<object, FilterArgs> = {
    command: 'remove',
    describe: 'remove every ACL matching the filter (at least one of --principal or a resource)',
    builder: withFilter,
    handler: async (args) => {
      const filter = filterOf(args);
      if (filter.principal === undefined && filter.resourceType === undefined) throw new UsageError('name --principal or a resource (--topic, --group, --transactional-id, --cluster): removing every ACL at once is not offered');
      const removed = await withClient(args, (c) => c.admin().deleteAcls([filter]));
      await out(ctx, args, removed, () => (removed.length === 0 ? 'no ACL matched' : `removed:\n${table(['PRINCIPAL', 'PERMISSION', 'OPERATION', 'TYPE', 'NAME', 'PATTERN'], rows(removed))}`));
    },
  };

  const list: CommandModule<object, FilterArgs> = {
    command: 'list',
    describe: 'list ACLs (all, or those matching the filter)',
    builder: withFilter,
    handler: async (args) => {
      const acls = await withClient(args, (c) => c.admin().describeAcls(filterOf(args)));
      if (args.format === 'json') {
        await writeLine(ctx.stdout, JSON.stringify(acls));
        return;
      }
      await writeLine(ctx.stdout, acls.length === 0 ? 'no ACLs' : table(['PRINCIPAL', 'PERMISSION', 'OPERATION', 'TYPE', 'NAME', 'PATTERN'], rows(acls)));
    },
  };

  return {
    command: 'acl <command>',
    describe: 'add, remove and list ACLs (authorization.enabled=true enforces them)',
    builder: (y) =>
      y
        .command(add as unknown as CommandModule)
        .command(remove as unknown as CommandModule)
        .command(list as unknown as CommandModule)
        .demandCommand(1, 'name an acl command: add, remove or list'),
    handler: () => {
      throw new UsageError('name an acl command: add, remove or list');
    },
  };
}
