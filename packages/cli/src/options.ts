/** Options shared by commands: how to reach the broker and how to print. */
import type { Argv } from 'yargs';
import { readFileSync } from 'node:fs';
import { MqClient, MqError, type TlsOptions } from '@mq/client';
import { FORMATS, type OutputFormat } from './output.js';
import { UsageError } from './errors.js';
import { writeLine, type CliContext } from './context.js';
import { selectedProfile } from './profiles.js';

export const DEFAULT_BOOTSTRAP = 'localhost:9092';

export interface ClientArgs {
  bootstrap: string;
  /** The profile named with --profile (resolveClientArgs applies it). */
  profile?: string;
  'request-timeout-ms': number;
  'connect-timeout-ms': number;
  /** Log in as this user (SASL SCRAM); the password comes from MQ_PASSWORD or the profile, never a flag. */
  user?: string;
  'sasl-mechanism'?: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  /** Resolved by resolveClientArgs from MQ_PASSWORD or the profile (not a flag: a password on the command line shows in ps). */
  password?: string;
  'tls-ca'?: string;
  'tls-cert'?: string;
  'tls-key'?: string;
  'tls-servername'?: string;
  'tls-insecure'?: boolean;
  tls?: boolean;
}

/** How long the CLI waits for the broker to answer a request. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** How long the CLI waits, in all, for a first answer from the cluster (connect, handshake, metadata). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5000;

export interface FormatArgs {
  format: OutputFormat;
}

export function withClientOptions<T>(y: Argv<T>, env: NodeJS.ProcessEnv): Argv<T & ClientArgs> {
  const connection = y
    .option('bootstrap', {
      alias: 'b',
      type: 'string',
      describe: 'broker address host:port (or a comma-separated list); else env MQ_BOOTSTRAP, else the profile (mq profile), else localhost:9092',
      defaultDescription: env.MQ_BOOTSTRAP ? `${env.MQ_BOOTSTRAP} (MQ_BOOTSTRAP)` : DEFAULT_BOOTSTRAP,
    })
    .option('profile', { type: 'string', requiresArg: true, describe: 'take the bootstrap address and timeouts from this profile (mq profile list); env MQ_PROFILE' })
    .option('request-timeout-ms', { ...intOption('--request-timeout-ms', 1, 'how long to wait for the broker to answer a request'), defaultDescription: '10000' })
    .option('connect-timeout-ms', {
      ...intOption('--connect-timeout-ms', 1, 'how long to wait, in all, for a first answer from the cluster (a host that accepts but never answers fails after this)'),
      defaultDescription: String(DEFAULT_CONNECT_TIMEOUT_MS),
    });
  return loginOptions(connection).middleware((argv) => resolveClientArgs(argv as unknown as Partial<ClientArgs>, env)) as unknown as Argv<T & ClientArgs>;
}

/** The login and TLS flags alone (--user, --tls-*), for a command that connects but takes no --bootstrap (mq cluster start). */
export function withLoginOptions<T>(y: Argv<T>, env: NodeJS.ProcessEnv): Argv<T & Partial<ClientArgs>> {
  return loginOptions(y)
    .middleware((argv) => resolveClientArgs(argv as unknown as Partial<ClientArgs>, env)) as unknown as Argv<T & Partial<ClientArgs>>;
}

function loginOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('user', { type: 'string', requiresArg: true, describe: 'log in as this user (SASL SCRAM); the password comes from env MQ_PASSWORD or the profile, never a flag; env MQ_USER' })
    .option('tls', { type: 'boolean', describe: 'connect with TLS (wss://) using the system CAs; implied by any --tls-* flag; env MQ_TLS=1' })
    .option('tls-ca', { type: 'string', requiresArg: true, describe: 'PEM file of the CA that signs the brokers\' certificates; env MQ_TLS_CA' })
    .option('tls-cert', { type: 'string', requiresArg: true, describe: 'PEM client certificate (mutual TLS: its CN is your principal); env MQ_TLS_CERT' })
    .option('tls-key', { type: 'string', requiresArg: true, describe: 'PEM key of --tls-cert; env MQ_TLS_KEY' })
    .option('tls-servername', { type: 'string', requiresArg: true, describe: 'the host name the broker certificate must carry (default: the host connected to)' })
    .option('tls-insecure', { type: 'boolean', describe: 'do not verify the broker certificate (tests only)' })
    .option('sasl-mechanism', { type: 'string', choices: ['SCRAM-SHA-256', 'SCRAM-SHA-512'], describe: 'SCRAM mechanism of the login', defaultDescription: 'SCRAM-SHA-256' });
}

/**
 * Fills what the command line left out: the bootstrap address from MQ_BOOTSTRAP, then the profile
 * (--profile, MQ_PROFILE or the one in use), then localhost:9092; the timeouts from the profile, then
 * the defaults. A flag always wins.
 */
export function resolveClientArgs(argv: Partial<ClientArgs>, env: NodeJS.ProcessEnv): void {
  const fromEnv = env.MQ_BOOTSTRAP || undefined;
  const needProfile = argv.profile !== undefined || (argv.bootstrap === undefined && fromEnv === undefined) || argv['request-timeout-ms'] === undefined || argv['connect-timeout-ms'] === undefined;
  const selected = needProfile ? selectedProfile(env, argv.profile) : undefined;
  argv.bootstrap ??= fromEnv ?? selected?.profile.bootstrap ?? DEFAULT_BOOTSTRAP;
  argv['request-timeout-ms'] ??= selected?.profile.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  argv['connect-timeout-ms'] ??= selected?.profile.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  // Credentials: --user, else MQ_USER, else the profile's; the password from MQ_PASSWORD, else the profile's.
  const user = argv.user ?? (env.MQ_USER || undefined) ?? (argv.profile !== undefined || env.MQ_PROFILE ? selected?.profile.user : selectedProfile(env, undefined)?.profile.user);
  if (user !== undefined) {
    argv.user = user;
    const password = env.MQ_PASSWORD ?? (selected ?? selectedProfile(env, argv.profile))?.profile.password;
    if (password === undefined) throw new UsageError(`--user ${user} needs a password: set MQ_PASSWORD (or a "password" in the profile, in profiles.json under $XDG_CONFIG_HOME/mq, readable only by you)`);
    argv.password = password;
  }
}

/** The client's tls option from the --tls-* flags (or MQ_TLS, MQ_TLS_CA, MQ_TLS_CERT, MQ_TLS_KEY). */
export function tlsOf(args: ClientArgs, env: NodeJS.ProcessEnv = process.env): { tls: TlsOptions } | Record<string, never> {
  const ca = args['tls-ca'] ?? (env.MQ_TLS_CA || undefined);
  const cert = args['tls-cert'] ?? (env.MQ_TLS_CERT || undefined);
  const key = args['tls-key'] ?? (env.MQ_TLS_KEY || undefined);
  const on = args.tls || env.MQ_TLS === '1' || ca !== undefined || cert !== undefined || key !== undefined || args['tls-servername'] !== undefined || args['tls-insecure'];
  if (!on) return {};
  if ((cert === undefined) !== (key === undefined)) throw new UsageError('--tls-cert and --tls-key go together');
  const read = (flag: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new UsageError(`cannot read ${flag} ${file}: ${(err as Error).message}`);
    }
  };
  return {
    tls: {
      ...(ca !== undefined ? { ca: read('--tls-ca', ca) } : {}),
      ...(cert !== undefined ? { cert: read('--tls-cert', cert), key: read('--tls-key', key!) } : {}),
      ...(args['tls-servername'] !== undefined ? { servername: args['tls-servername'] } : {}),
      ...(args['tls-insecure'] ? { rejectUnauthorized: false } : {}),
    },
  };
}

/** The client's sasl option from resolved arguments. */
export function saslOf(args: ClientArgs): { sasl: { mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string } } | Record<string, never> {
  if (args.user === undefined || args.password === undefined) return {};
  return { sasl: { mechanism: args['sasl-mechanism'] ?? 'SCRAM-SHA-256', username: args.user, password: args.password } };
}

export function withFormat<T>(y: Argv<T>): Argv<T & FormatArgs> {
  return y.option('format', {
    type: 'string',
    choices: FORMATS as OutputFormat[],
    default: 'text' as OutputFormat,
    describe: 'text for people, json for scripts',
  }) as unknown as Argv<T & FormatArgs>;
}

/** A client that fails fast: few retries, so "broker not running" is reported within a second or two. */
export function makeClient(args: ClientArgs): MqClient {
  return new MqClient({
    bootstrap: args.bootstrap,
    clientId: 'mq-cli',
    requestTimeoutMs: args['request-timeout-ms'],
    connectTimeoutMs: Math.min(args['request-timeout-ms'], connectTimeoutOf(args)),
    retry: { retries: 3, initialDelayMs: 100, maxDelayMs: 1000 },
    ...saslOf(args),
    ...tlsOf(args),
  });
}

function connectTimeoutOf(args: ClientArgs): number {
  return args['connect-timeout-ms'] ?? DEFAULT_CONNECT_TIMEOUT_MS;
}

/**
 * Reaches the cluster (connection, handshake, metadata) within --connect-timeout-ms in all, retries
 * included: a host that accepts connections but never answers fails after that long, in one line.
 */
export async function connectClient(client: MqClient, args: ClientArgs, signal?: AbortSignal): Promise<void> {
  const ms = connectTimeoutOf(args);
  const timeout = AbortSignal.timeout(ms);
  try {
    await client.connect({ signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    if (timeout.aborted && !signal?.aborted) {
      throw new MqError(
        'REQUEST_TIMED_OUT',
        `no answer from the cluster at ${args.bootstrap} within ${ms} ms (is that a broker's WebSocket port? wait longer with --connect-timeout-ms)`,
        { retriable: false },
      );
    }
    throw err;
  }
}

/**
 * A yargs coerce function for an integer flag: `--partitions abc` is a usage error (exit 2) naming the
 * flag and the text given, before any broker is contacted.
 */
export function intFlag(flag: string, min: number, max = Number.MAX_SAFE_INTEGER): (raw: unknown) => number | undefined {
  return (raw) => {
    if (raw === undefined) return undefined;
    if (Array.isArray(raw)) throw new UsageError(`${flag} was given more than once`);
    const s = String(raw).trim();
    const n = /^[-+]?\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`;
      throw new UsageError(`${flag} must be an integer ${range}, got "${String(raw)}"`);
    }
    return n;
  };
}

/** The yargs option of an integer flag checked by intFlag (shown as [integer] in --help). */
export function intOption(flag: string, min: number, describe: string, defaultValue?: number) {
  return {
    type: 'string' as const,
    requiresArg: true,
    describe: `${describe} [integer]`,
    coerce: intFlag(flag, min),
    ...(defaultValue === undefined ? {} : { default: defaultValue as unknown as string }),
  };
}

/** Parses repeated `key=value` flags into an object. */
export function parseKeyValues(flag: string, entries: readonly string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of entries ?? []) {
    const i = e.indexOf('=');
    if (i <= 0) throw new UsageError(`${flag} "${e}" is not key=value`);
    out[e.slice(0, i).trim()] = e.slice(i + 1);
  }
  return out;
}

/** Runs `fn` with a client made from the command's options, and closes it afterwards. */
export async function withClient<T>(args: ClientArgs, fn: (c: MqClient) => Promise<T>): Promise<T> {
  const client = makeClient(args);
  try {
    await connectClient(client, args);
    return await fn(client);
  } finally {
    await client.close({ timeoutMs: 1000 });
  }
}

/** Prints `json` as one line under `--format json`, otherwise the text `text()` builds. */
export function out(ctx: CliContext, args: FormatArgs, json: unknown, text: () => string): void | Promise<void> {
  return writeLine(ctx.stdout, args.format === 'json' ? JSON.stringify(json) : text());
}

