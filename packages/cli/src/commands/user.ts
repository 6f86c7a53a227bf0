/**
 * `mq user create|delete|list`: SASL SCRAM users. The new user's password is
 * read from stdin (--password-stdin), a file (--password-file), or, when
 * neither is given, env MQ_PASSWORD; never from a flag (ps would show it).
 * The SCRAM credential is computed here: the password never reaches the
 * broker. The first user of a cluster may be created without logging in,
 * from the broker's own machine (loopback) only (see the broker README,
 * "Security: the first user").
 */
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import type { Argv, CommandModule } from 'yargs';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { table } from '../output.js';
import { intOption, withClient, withClientOptions, withFormat, out, type ClientArgs, type FormatArgs } from '../options.js';

type Args = ClientArgs & FormatArgs;
type Mechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
const MECHANISMS: Mechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512'];

async function readAll(stream: Readable, limit = 4096): Promise<string> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const c of stream) {
    const b = Buffer.isBuffer(c) ? c : Buffer.from(String(c));
    n += b.length;
    if (n > limit) throw new UsageError(`the password on stdin is longer than ${limit} bytes`);
    chunks.push(b);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** The new password: stdin, a file, or MQ_PASSWORD; one trailing newline dropped. */
async function newPassword(ctx: CliContext, args: { 'password-stdin'?: boolean; 'password-file'?: string }): Promise<string> {
  let pw: string | undefined;
  if (args['password-stdin'] && args['password-file']) throw new UsageError('give --password-stdin or --password-file, not both');
  if (args['password-stdin']) pw = await readAll(ctx.stdin);
  else if (args['password-file']) pw = await readFile(args['password-file'], 'utf8').catch((err: Error) => {
    throw new UsageError(`cannot read --password-file: ${err.message}`);
  });
  else pw = ctx.env.MQ_PASSWORD;
  if (pw === undefined) throw new UsageError('the new password comes from --password-stdin, --password-file FILE or env MQ_PASSWORD (never a flag: ps would show it)');
  pw = pw.replace(/\r?\n$/, '');
  if (pw.length === 0) throw new UsageError('the password is empty');
  return pw;
}

export function userCommand(ctx: CliContext): CommandModule {
  type CreateArgs = Args & { name: string; 'password-stdin'?: boolean; 'password-file'?: string; mechanism?: Mechanism[]; iterations?: number };
  const create: CommandModule<object, CreateArgs> = {
    command: 'create <name>',
    describe: 'create a user (or set a new password)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true, describe: 'user name (letters, digits, . _ @ + -)' })
        .option('password-stdin', { type: 'boolean', describe: 'read the new password from stdin' })
        .option('password-file', { type: 'string', requiresArg: true, describe: 'read the new password from this file' })
        .option('mechanism', { type: 'string', array: true, choices: MECHANISMS, describe: 'SCRAM mechanisms to store a credential for', defaultDescription: 'both' })
        .option('iterations', intOption('--iterations', 4096, 'SCRAM iterations (4096..16384)')) as unknown as Argv<CreateArgs>,
    handler: async (args) => {
      // With MQ_PASSWORD as the login password, the new one must come from stdin or a file.
      if (args.user !== undefined && !args['password-stdin'] && !args['password-file']) {
        throw new UsageError('logged in with --user/MQ_PASSWORD: give the new user\'s password with --password-stdin or --password-file');
      }
      const password = await newPassword(ctx, args);
      const mechanisms = args.mechanism && args.mechanism.length > 0 ? args.mechanism : MECHANISMS;
      await withClient(args, (c) => c.admin().createUser(args.name, password, { mechanisms, ...(args.iterations !== undefined ? { iterations: args.iterations } : {}) }));
      await out(ctx, args, { user: args.name, mechanisms }, () => `user "${args.name}" has a credential for ${mechanisms.join(' and ')}`);
    },
  };

  const del: CommandModule<object, Args & { name: string; mechanism?: Mechanism }> = {
    command: 'delete <name>',
    describe: 'delete a user (every mechanism, or one)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('name', { type: 'string', demandOption: true })
        .option('mechanism', { type: 'string', choices: MECHANISMS, describe: 'only this mechanism\'s credential' }) as unknown as Argv<Args & { name: string; mechanism?: Mechanism }>,
    handler: async (args) => {
      await withClient(args, (c) => c.admin().deleteUser(args.name, args.mechanism ? { mechanism: args.mechanism } : {}));
      await out(ctx, args, { deleted: args.name }, () => `deleted user "${args.name}"${args.mechanism ? ` (${args.mechanism})` : ''}`);
    },
  };

  const list: CommandModule<object, Args> = {
    command: 'list',
    describe: 'list users and their SCRAM mechanisms',
    builder: (y) => withFormat(withClientOptions(y, ctx.env)),
    handler: async (args) => {
      const users = await withClient(args, (c) => c.admin().listUsers());
      if (args.format === 'json') {
        await writeLine(ctx.stdout, JSON.stringify(users));
        return;
      }
      if (users.length === 0) {
        await writeLine(ctx.stdout, 'no users (create one with: mq user create <name> --password-stdin)');
        return;
      }
      await writeLine(ctx.stdout, table(['USER', 'MECHANISMS'], users.map((u) => [u.user, u.credentials.map((c) => `${c.mechanism} (${c.iterations})`).join(', ')])));
    },
  };

  return {
    command: 'user <command>',
    describe: 'create, delete and list users (SASL SCRAM)',
    builder: (y) =>
      y
        .command(create as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .command(list as unknown as CommandModule)
        .demandCommand(1, 'name a user command: create, delete or list'),
    handler: () => {
      throw new UsageError('name a user command: create, delete or list');
    },
  };
}
