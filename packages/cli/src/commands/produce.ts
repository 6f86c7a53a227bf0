/** `mq produce <topic>`: one record per line of stdin. */
import { createInterface } from 'node:readline';
import type { Argv, CommandModule } from 'yargs';
import type { ProducerRecord, RecordMetadata } from '@mq/client';
import { parseAcks, parseCompression } from '@mq/client/internal';
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
}

const CHUNK = 1000;
const MAX_CHUNKS_IN_FLIGHT = 8;

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
        .conflicts('key', 'key-separator') as unknown as Argv<ProduceArgs>,
    handler: async (args) => {
      const partition = nonNegativeInt('--partition', args.partition);
      const headers = parseHeaders(args.headers);
      const sep = args['key-separator'];
      if (sep === '') throw new UsageError('--key-separator must not be empty');
      const client = makeClient(args);
      const producer = client.producer({
        acks: parseAcks(args.acks),
        compression: parseCompression(args.compression),
        lingerMs: nonNegativeInt('--linger-ms', args['linger-ms']) ?? 5,
      });
      let count = 0;
      const inFlight: Array<Promise<RecordMetadata[]>> = [];
      const emit = async (results: RecordMetadata[]) => {
        if (args.format !== 'json') return;
        for (const r of results) await writeLine(ctx.stdout, JSON.stringify(r));
      };
      try {
        // Fail fast, before reading stdin, when the topic or partition does not exist.
        const meta = await client.admin().describeTopic(args.topic);
        if (partition !== undefined && partition >= meta.partitions.length) {
          throw new UsageError(`partition ${partition} of topic "${args.topic}" does not exist (it has ${meta.partitions.length})`);
        }
        const lines = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
        let chunk: ProducerRecord[] = [];
        let lineNo = 0;
        const flushChunk = async () => {
          if (chunk.length === 0) return;
          inFlight.push(producer.sendBatch(args.topic, chunk));
          count += chunk.length;
          chunk = [];
          while (inFlight.length >= MAX_CHUNKS_IN_FLIGHT) await emit(await inFlight.shift()!);
        };
        for await (const line of lines) {
          lineNo++;
          let key: string | undefined = args.key;
          let value = line;
          if (sep !== undefined) {
            const i = line.indexOf(sep);
            if (i < 0) throw new UsageError(`line ${lineNo} has no key separator "${sep}"`);
            key = line.slice(0, i);
            value = line.slice(i + sep.length);
          }
          chunk.push({ key, value, headers, partition });
          if (chunk.length >= CHUNK) await flushChunk();
          if (ctx.signal.aborted) break;
        }
        await flushChunk();
        while (inFlight.length > 0) await emit(await inFlight.shift()!);
        await producer.flush();
      } finally {
        await Promise.allSettled(inFlight);
        await client.close({ timeoutMs: 2000 });
      }
      if (args.format !== 'json') ctx.stderr.write(`produced ${count} record${count === 1 ? '' : 's'} to "${args.topic}"\n`);
    },
  };
  return cmd as unknown as CommandModule;
}
