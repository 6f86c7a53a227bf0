/** Options shared by commands: how to reach the broker and how to print. */
import type { Argv } from 'yargs';
import { MqClient } from '@mq/client';
import { FORMATS, type OutputFormat } from './output.js';
import { UsageError } from './errors.js';
import { writeLine, type CliContext } from './context.js';

export const DEFAULT_BOOTSTRAP = 'localhost:9092';

export interface ClientArgs {
  bootstrap: string;
  'request-timeout-ms': number;
}

export interface FormatArgs {
  format: OutputFormat;
}

export function withClientOptions<T>(y: Argv<T>, env: NodeJS.ProcessEnv): Argv<T & ClientArgs> {
  return y
    .option('bootstrap', {
      alias: 'b',
      type: 'string',
      describe: 'broker address host:port (or a comma-separated list); env MQ_BOOTSTRAP',
      default: env.MQ_BOOTSTRAP || DEFAULT_BOOTSTRAP,
      defaultDescription: env.MQ_BOOTSTRAP ? `${env.MQ_BOOTSTRAP} (MQ_BOOTSTRAP)` : DEFAULT_BOOTSTRAP,
    })
    .option('request-timeout-ms', {
      type: 'number',
      describe: 'how long to wait for the broker to answer',
      default: 10_000,
    }) as unknown as Argv<T & ClientArgs>;
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
    connectTimeoutMs: Math.min(args['request-timeout-ms'], 5000),
    retry: { retries: 3, initialDelayMs: 100, maxDelayMs: 1000 },
  });
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

export function nonNegativeInt(flag: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || v < 0) throw new UsageError(`${flag} must be an integer >= 0, got ${v}`);
  return v;
}

export function positiveInt(flag: string, v: number | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!Number.isSafeInteger(v) || v < 1) throw new UsageError(`${flag} must be an integer >= 1, got ${v}`);
  return v;
}

/** Runs `fn` with a client made from the command's options, and closes it afterwards. */
export async function withClient<T>(args: ClientArgs, fn: (c: MqClient) => Promise<T>): Promise<T> {
  const client = makeClient(args);
  try {
    return await fn(client);
  } finally {
    await client.close({ timeoutMs: 1000 });
  }
}

/** Prints `json` as one line under `--format json`, otherwise the text `text()` builds. */
export function out(ctx: CliContext, args: FormatArgs, json: unknown, text: () => string): void | Promise<void> {
  return writeLine(ctx.stdout, args.format === 'json' ? JSON.stringify(json) : text());
}

