/** `mq produce <topic>`: one record per line of stdin. */
import { createInterface } from 'node:readline';
import type { Argv, CommandModule } from 'yargs';
import type { RecordMetadata } from '@mq/client';
import { parseCompression } from '@mq/client/internal';
import { parseAcks } from '@mq/protocol/acks';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { makeClient, nonNegativeInt, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';

interface ProduceArgs extends ClientArgs, FormatArgs {
  topic: string;
  key?: string;
  'key-separator'?: string;
  headers?: string;
  acks: string;
  partition?: number;
  compression: string;
  'linger-ms': number;
  idempotent: boolean;
}

const MAX_OUTSTANDING = 10_000;

/** Parses `k=v,k2=v2` into record headers. */
export function parseHeaders(spec: string | undefined): Array<{ key: string; value: string }> | undefined {
  if (spec === undefined || spec === '') return undefined;
  return spec.split(',').map((pair) => {
    const i = pair.indexOf('=');
    if (i <= 0) throw new UsageError(`--headers "${pair}" is not key=value (use --headers k1=v1,k2=v2)`);
    return { key: pair.slice(0, i), value: pair.slice(i + 1) };
  });
}

export function produceCommand(ctx: CliContext): CommandModule {
  const cmd: CommandModule<object, ProduceArgs> = {
    command: 'produce <topic>',
    describe: 'send one record per line of stdin',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('topic', { type: 'string', demandOption: true })
        .option('key', { alias: 'k', type: 'string', describe: 'key of every record' })
        .option('key-separator', { type: 'string', describe: 'split each line into key<SEP>value at the first SEP' })
        .option('headers', { alias: 'H', type: 'string', describe: 'headers of every record: k1=v1,k2=v2' })
        .option('acks', { type: 'string', choices: ['0', '1', 'all', '-1'], default: 'all', describe: 'acknowledgement level' })
        .option('partition', { alias: 'p', type: 'number', describe: 'send every record to this partition' })
        .option('compression', { type: 'string', choices: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], default: 'none' })
        .option('linger-ms', { type: 'number', default: 5, describe: 'how long a batch waits for more records' })
        .option('idempotent', { type: 'boolean', default: false, describe: 'idempotent producer: retries never write a record twice (needs --acks all)' })
        .conflicts('key', 'key-separator') as unknown as Argv<ProduceArgs>,
    handler: async (args) => {
      const partition = nonNegativeInt('--partition', args.partition);
      const headers = parseHeaders(args.headers);
      const sep = args['key-separator'];
      if (sep === '') throw new UsageError('--key-separator must not be empty');
      const client = makeClient(args);
      const producer = client.producer({
        acks: parseAcks(args.acks, 'INVALID_ARGUMENT'),
        compression: parseCompression(args.compression),
        lingerMs: nonNegativeInt('--linger-ms', args['linger-ms']) ?? 5,
        idempotent: args.idempotent,
      });
      let count = 0;
      let acked = 0;
      // Each line is sent as it arrives (so typing into a terminal works); results are printed in input
      // order through one promise chain; at most MAX_OUTSTANDING records are awaited at once.
      let chain: Promise<void> = Promise.resolve();
      let failure: unknown;
      const emit = (m: RecordMetadata): void | Promise<void> => {
        acked++;
        if (args.format === 'json') return writeLine(ctx.stdout, JSON.stringify(m));
      };
      try {
        // Fail fast, before reading stdin, when the topic or partition does not exist.
        const meta = await client.admin().describeTopic(args.topic);
        if (partition !== undefined && partition >= meta.partitions.length) {
          throw new UsageError(`partition ${partition} of topic "${args.topic}" does not exist (it has ${meta.partitions.length})`);
        }
        const lines = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
        let lineNo = 0;
        for await (const line of lines) {
          if (failure !== undefined) break;
          lineNo++;
          let key: string | undefined = args.key;
          let value = line;
          if (sep !== undefined) {
            const i = line.indexOf(sep);
            if (i < 0) throw new UsageError(`line ${lineNo} has no key separator "${sep}"`);
            key = line.slice(0, i);
            value = line.slice(i + sep.length);
          }
          const sent = producer.send(args.topic, { key, value, headers, partition });
          count++;
          chain = chain.then(() => sent).then(emit);
          chain.catch((err: unknown) => {
            failure ??= err;
          });
          if (count - acked >= MAX_OUTSTANDING) await chain.catch(() => undefined);
          if (ctx.signal.aborted) break;
        }
        await chain;
        await producer.flush();
      } finally {
        await chain.catch(() => undefined);
        await client.close({ timeoutMs: 2000 });
      }
      if (args.format !== 'json') ctx.stderr.write(`produced ${acked} record${acked === 1 ? '' : 's'} to "${args.topic}"\n`);
    },
  };
  return cmd as unknown as CommandModule;
}
