/** `mq profile create|use|list|delete`: named connection settings (see profiles.ts), as `rpk profile` and `nats context`. */
import type { Argv, CommandModule } from 'yargs';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { intOption, out, withFormat, type FormatArgs } from '../options.js';
import { table } from '../output.js';
import { checkProfileName, profilesPath, readProfiles, writeProfiles, type Profile } from '../profiles.js';

interface CreateArgs extends FormatArgs {
  name: string;
  bootstrap: string;
  'request-timeout-ms'?: number;
  'connect-timeout-ms'?: number;
  use: boolean;
  force: boolean;
}

export function profileCommand(ctx: CliContext): CommandModule {
  const create: CommandModule<object, CreateArgs> = {
    command: 'create <name>',
    describe: 'save a profile (bootstrap address, timeouts) and use it',
    builder: (y) =>
      withFormat(y)
        .positional('name', { type: 'string', demandOption: true })
        .option('bootstrap', { alias: 'b', type: 'string', demandOption: true, requiresArg: true, describe: 'broker address host:port (or a comma-separated list)' })
        .option('request-timeout-ms', intOption('--request-timeout-ms', 1, 'request timeout for commands using this profile'))
        .option('connect-timeout-ms', intOption('--connect-timeout-ms', 1, 'connect timeout for commands using this profile'))
        .option('use', { type: 'boolean', default: true, describe: 'use it from now on (--no-use: only save it)' })
        .option('force', { type: 'boolean', default: false, describe: 'replace a profile of that name' }) as unknown as Argv<CreateArgs>,
    handler: async (args) => {
      const name = checkProfileName(args.name);
      const bootstrap = args.bootstrap.trim();
      if (bootstrap === '' || bootstrap.split(',').some((a) => !/^[^\s:,]+:\d{1,5}$/.test(a.trim()))) {
        throw new UsageError(`--bootstrap must be host:port (or a comma-separated list), got "${args.bootstrap}"`);
      }
      const file = readProfiles(ctx.env);
      if (file.profiles[name] && !args.force) throw new UsageError(`profile "${name}" exists (replace it with --force, or delete it with: mq profile delete ${name})`);
      const profile: Profile = {
        bootstrap,
        ...(args['request-timeout-ms'] !== undefined ? { requestTimeoutMs: args['request-timeout-ms'] } : {}),
        ...(args['connect-timeout-ms'] !== undefined ? { connectTimeoutMs: args['connect-timeout-ms'] } : {}),
      };
      file.profiles[name] = profile;
      if (args.use) file.current = name;
      const where = writeProfiles(ctx.env, file);
      await out(ctx, args, { name, ...profile, current: file.current === name, file: where }, () =>
        `saved profile "${name}" (bootstrap ${bootstrap}) in ${where}${args.use ? '; client commands use it when --bootstrap is not given' : ''}`,
      );
    },
  };

  const use: CommandModule<object, FormatArgs & { name: string }> = {
    command: 'use <name>',
    describe: 'use a profile for client commands without --bootstrap',
    builder: (y) => withFormat(y).positional('name', { type: 'string', demandOption: true }) as unknown as Argv<FormatArgs & { name: string }>,
    handler: async (args) => {
      const file = readProfiles(ctx.env);
      if (!file.profiles[args.name]) throw new UsageError(`no profile "${args.name}" (mq profile list shows them)`);
      file.current = args.name;
      writeProfiles(ctx.env, file);
      await out(ctx, args, { current: args.name }, () => `using profile "${args.name}" (bootstrap ${file.profiles[args.name]!.bootstrap})`);
    },
  };

  const list: CommandModule<object, FormatArgs> = {
    command: 'list',
    describe: 'list profiles; * marks the one in use',
    builder: (y) => withFormat(y),
    handler: async (args) => {
      const file = readProfiles(ctx.env);
      const names = Object.keys(file.profiles).sort();
      await out(ctx, args, { current: file.current ?? null, profiles: file.profiles, file: profilesPath(ctx.env) ?? null }, () =>
        names.length === 0
          ? 'no profiles (create one with: mq profile create NAME --bootstrap host:port)'
          : table(
              ['', 'PROFILE', 'BOOTSTRAP', 'REQUEST-TIMEOUT-MS', 'CONNECT-TIMEOUT-MS'],
              names.map((n) => {
                const p = file.profiles[n]!;
                return [n === file.current ? '*' : '', n, p.bootstrap, p.requestTimeoutMs === undefined ? '-' : String(p.requestTimeoutMs), p.connectTimeoutMs === undefined ? '-' : String(p.connectTimeoutMs)];
              }),
            ),
      );
    },
  };

  const del: CommandModule<object, FormatArgs & { name: string }> = {
    command: 'delete <name>',
    describe: 'delete a profile (if it is in use, no profile is in use afterwards)',
    builder: (y) => withFormat(y).positional('name', { type: 'string', demandOption: true }) as unknown as Argv<FormatArgs & { name: string }>,
    handler: async (args) => {
      const file = readProfiles(ctx.env);
      if (!file.profiles[args.name]) throw new UsageError(`no profile "${args.name}" (mq profile list shows them)`);
      delete file.profiles[args.name];
      const wasCurrent = file.current === args.name;
      if (wasCurrent) delete file.current;
      writeProfiles(ctx.env, file);
      await out(ctx, args, { deleted: args.name }, () => `deleted profile "${args.name}"${wasCurrent ? '; no profile is in use now' : ''}`);
    },
  };

  return {
    command: 'profile <command>',
    describe: 'named connection profiles (bootstrap, timeouts) for client commands',
    builder: (y) =>
      y
        .command(create as unknown as CommandModule)
        .command(use as unknown as CommandModule)
        .command(list as unknown as CommandModule)
        .command(del as unknown as CommandModule)
        .demandCommand(1, 'name a profile command: create, use, list or delete'),
    handler: () => {
      throw new UsageError('name a profile command: create, use, list or delete');
    },
  };
}
