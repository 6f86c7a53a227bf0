/** `mq consume <topic>`: print records as text or JSON Lines. */
import type { Argv, CommandModule } from 'yargs';
import type { ConsumerRecord, TopicPartitionOffset } from '@mq/client';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { makeClient, nonNegativeInt, positiveInt, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';

interface ConsumeArgs extends ClientArgs, FormatArgs {
  topic: string;
  'from-beginning': boolean;
  partition?: number;
  offset?: string;
  'max-messages'?: number;
  'timeout-ms'?: number;
  'print-key': boolean;
  'value-encoding': 'utf8' | 'base64';
  group?: string;
}

function text(b: Buffer | null, encoding: BufferEncoding): string | null {
  return b === null ? null : b.toString(encoding);
}

/** One JSON Lines object per record. */
export function recordJson(r: ConsumerRecord, encoding: BufferEncoding): string {
  return JSON.stringify({
    topic: r.topic,
    partition: r.partition,
    offset: r.offset,
    timestamp: r.timestamp,
    key: text(r.key, encoding),
    value: text(r.value, encoding),
    headers: Object.fromEntries(r.headers.map((h) => [h.key, text(h.value, encoding)])),
  });
}

export function consumeCommand(ctx: CliContext): CommandModule {
  const cmd: CommandModule<object, ConsumeArgs> = {
    command: 'consume <topic>',
    describe: 'print records of a topic (until Ctrl-C, --max-messages or --timeout-ms)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('topic', { type: 'string', demandOption: true })
        .option('from-beginning', { type: 'boolean', describe: 'start at the earliest record (default: only new records)' })
        .option('partition', { alias: 'p', type: 'number', describe: 'read only this partition' })
        .option('offset', { type: 'string', describe: 'start offset: a number, earliest or latest (needs --partition for a number)' })
        .option('max-messages', { alias: 'n', type: 'number', describe: 'exit after this many records' })
        .option('timeout-ms', { type: 'number', describe: 'exit when no record arrives for this long' })
        .option('print-key', { type: 'boolean', default: false, describe: 'text format: print key<TAB>value' })
        .option('value-encoding', { type: 'string', choices: ['utf8', 'base64'], default: 'utf8', describe: 'how keys, values and headers are printed' })
        .option('group', {
          alias: 'g',
          type: 'string',
          describe: 'consume as a member of this consumer group: partitions are shared with its other members and progress is committed (--from-beginning only applies when the group has no committed offset)',
        })
        .conflicts('group', ['partition', 'offset'])
        .conflicts('from-beginning', 'offset') as unknown as Argv<ConsumeArgs>,
    handler: async (args) => {
      const partition = nonNegativeInt('--partition', args.partition);
      const max = positiveInt('--max-messages', args['max-messages']);
      const idleMs = nonNegativeInt('--timeout-ms', args['timeout-ms']);
      let start: number | 'earliest' | 'latest' = args['from-beginning'] ? 'earliest' : 'latest';
      if (args.offset !== undefined) {
        if (args.offset === 'earliest' || args.offset === 'latest') start = args.offset;
        else {
          const n = Number(args.offset);
          if (!/^\d+$/.test(args.offset) || !Number.isSafeInteger(n)) {
            throw new UsageError(`--offset must be a number >= 0, earliest or latest, got "${args.offset}"`);
          }
          if (partition === undefined) throw new UsageError('--offset with a number needs --partition');
          start = n;
        }
      }
      const encoding = args['value-encoding'] as BufferEncoding;
      const client = makeClient(args);
      const autoOffsetReset = start === 'earliest' ? 'earliest' : 'latest';
      const group = args.group !== undefined ? client.consumer({ groupId: args.group, autoOffsetReset }) : undefined;
      const consumer = group ?? client.consumer({ autoOffsetReset });
      let seen = 0;
      try {
        const meta = await client.admin().describeTopic(args.topic);
        if (partition !== undefined && partition >= meta.partitions.length) {
          throw new UsageError(`partition ${partition} of topic "${args.topic}" does not exist (it has ${meta.partitions.length})`);
        }
        const parts = partition !== undefined ? [partition] : meta.partitions.map((p) => p.partition);
        if (group) group.subscribe([args.topic]);
        else consumer.assign(parts.map((p): TopicPartitionOffset => ({ topic: args.topic, partition: p, ...(typeof start === 'number' ? { offset: start } : {}) })));
        let lastRecordAt = Date.now();
        while (!ctx.signal.aborted && (max === undefined || seen < max)) {
          const wait = idleMs === undefined ? 1000 : Math.max(0, Math.min(1000, lastRecordAt + idleMs - Date.now()));
          let records: ConsumerRecord[];
          try {
            records = await consumer.poll(wait, { signal: ctx.signal, maxRecords: max === undefined ? undefined : max - seen });
          } catch (err) {
            if (ctx.signal.aborted) break;
            throw err;
          }
          for (const r of records) {
            const line =
              args.format === 'json'
                ? recordJson(r, encoding)
                : args['print-key']
                  ? `${text(r.key, encoding) ?? ''}\t${text(r.value, encoding) ?? ''}`
                  : (text(r.value, encoding) ?? '');
            await writeLine(ctx.stdout, line);
          }
          seen += records.length;
          if (records.length > 0) lastRecordAt = Date.now();
          else if (idleMs !== undefined && Date.now() - lastRecordAt >= idleMs) break;
        }
      } finally {
        await consumer.close();
        await client.close({ timeoutMs: 1000 });
      }
      if (args.format !== 'json') ctx.stderr.write(`consumed ${seen} record${seen === 1 ? '' : 's'}\n`);
    },
  };
  return cmd as unknown as CommandModule;
}
