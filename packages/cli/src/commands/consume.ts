/**
 * `mq consume <topic..>`: print records as text, a kcat-style format string or JSON Lines; from a
 * chosen start (earliest, end, an offset, the last N, a time) until Ctrl-C, a count, an idle time or
 * the end of the log (--exit-at-end).
 */
import type { Argv, CommandModule } from 'yargs';
import type { ConsumerRecord, GroupConsumer, MqClient, TopicPartitionOffset } from '@mq/client';
import type { CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { connectClient, intOption, makeClient, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';
import { parseDatetime } from './group.js';

interface ConsumeArgs extends ClientArgs, FormatArgs {
  topic: string[];
  regex: boolean;
  'from-beginning': boolean;
  partition?: number;
  offset?: string;
  'max-messages'?: number;
  'timeout-ms'?: number;
  'exit-at-end'?: boolean;
  'print-key'?: boolean;
  'format-string'?: string;
  'value-encoding': 'utf8' | 'base64';
  group?: string;
  'isolation-level': 'read_uncommitted' | 'read_committed';
}

/** Where reading starts in each partition. */
export type StartSpec =
  | { kind: 'earliest' }
  | { kind: 'latest' }
  | { kind: 'offset'; offset: number }
  /** The last `count` records of each partition. */
  | { kind: 'last'; count: number }
  /** The first record at or after `timestamp` (ms since the epoch) in each partition. */
  | { kind: 'time'; timestamp: number };

/** Parses `--offset`: earliest|beginning, latest|end, N, -N (the last N per partition), @<epoch ms|ISO 8601>. */
export function parseStartOffset(raw: string): StartSpec {
  if (raw === 'earliest' || raw === 'beginning') return { kind: 'earliest' };
  if (raw === 'latest' || raw === 'end') return { kind: 'latest' };
  if (raw.startsWith('@')) return { kind: 'time', timestamp: parseDatetime(raw.slice(1), '--offset @') };
  const m = /^(-?)(\d+)$/.exec(raw);
  const n = m ? Number(m[2]) : NaN;
  if (!m || !Number.isSafeInteger(n) || (m[1] === '-' && n === 0)) {
    throw new UsageError(`--offset must be earliest, latest, end, a number >= 0, -N (the last N records) or @TIME (epoch ms or ISO 8601), got "${raw}"`);
  }
  return m[1] === '-' ? { kind: 'last', count: n } : { kind: 'offset', offset: n };
}

function text(b: Buffer | null, encoding: BufferEncoding): string | null {
  return b === null ? null : b.toString(encoding);
}

/** Headers as a JSON object; a key that repeats maps to the list of its values, in record order. */
export function headersJson(headers: ConsumerRecord['headers'], encoding: BufferEncoding): Record<string, string | null | Array<string | null>> {
  const out: Record<string, string | null | Array<string | null>> = {};
  const repeated = new Set<string>();
  for (const h of headers) {
    const v = text(h.value, encoding);
    if (!Object.prototype.hasOwnProperty.call(out, h.key)) out[h.key] = v;
    else if (repeated.has(h.key)) (out[h.key] as Array<string | null>).push(v);
    else {
      out[h.key] = [out[h.key] as string | null, v];
      repeated.add(h.key);
    }
  }
  return out;
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
    headers: headersJson(r.headers, encoding),
  });
}

const FORMAT_TOKENS = 'topic %t, partition %p, offset %o, key %k, value %s, headers %h, timestamp %T, key bytes %K, value bytes %S, %% and \\n \\t \\r \\\\';

/**
 * Compiles a kcat-style format string into a record printer: %t topic, %p partition, %o offset,
 * %k key, %s value, %h headers (k=v,k2=v2), %T timestamp (ms), %K / %S key / value size in bytes
 * (-1 for null), %% a percent sign; \n, \t, \r and \\ escapes. As in kcat nothing is added: end the
 * format with \n for one line per record. A null key or value prints as nothing.
 */
export function compileFormat(format: string, encoding: BufferEncoding): (r: ConsumerRecord) => string {
  const parts: Array<string | ((r: ConsumerRecord) => string)> = [];
  let lit = '';
  const flush = () => {
    if (lit) parts.push(lit);
    lit = '';
  };
  for (let i = 0; i < format.length; i++) {
    const c = format[i]!;
    const next = format[i + 1];
    if (c === '\\' && next !== undefined && 'ntr\\'.includes(next)) {
      lit += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'r' ? '\r' : '\\';
      i++;
    } else if (c === '%') {
      const field = fieldOf(next, encoding);
      if (field === undefined) throw new UsageError(`--format-string has an unknown field "%${next ?? ''}" (known: ${FORMAT_TOKENS})`);
      i++;
      if (typeof field === 'string') lit += field;
      else {
        flush();
        parts.push(field);
      }
    } else lit += c;
  }
  flush();
  return (r) => parts.map((p) => (typeof p === 'string' ? p : p(r))).join('');
}

function fieldOf(token: string | undefined, encoding: BufferEncoding): string | ((r: ConsumerRecord) => string) | undefined {
  switch (token) {
    case '%':
      return '%';
    case 't':
      return (r) => r.topic;
    case 'p':
      return (r) => String(r.partition);
    case 'o':
      return (r) => String(r.offset);
    case 'k':
      return (r) => text(r.key, encoding) ?? '';
    case 's':
      return (r) => text(r.value, encoding) ?? '';
    case 'K':
      return (r) => String(r.key === null ? -1 : r.key.length);
    case 'S':
      return (r) => String(r.value === null ? -1 : r.value.length);
    case 'T':
      return (r) => String(r.timestamp);
    case 'h':
      return (r) => r.headers.map((h) => `${h.key}=${text(h.value, encoding) ?? ''}`).join(',');
    default:
      return undefined;
  }
}

/** Internal topics (`__consumer_offsets`) are left out of regex matches. */
function matchTopics(all: readonly string[], patterns: readonly string[]): string[] {
  const res = patterns.map((p) => {
    try {
      return new RegExp(`^(?:${p})$`);
    } catch (err) {
      throw new UsageError(`--regex "${p}" is not a regular expression: ${(err as Error).message}`);
    }
  });
  return all.filter((t) => !t.startsWith('__') && res.some((re) => re.test(t))).sort();
}

/** The start offset and the log end (high watermark, now) of every partition to read. */
async function startPositions(
  client: MqClient,
  topics: readonly string[],
  partition: number | undefined,
  start: StartSpec,
): Promise<Array<{ topic: string; partition: number; offset: number; end: number }>> {
  const admin = client.admin();
  const out: Array<{ topic: string; partition: number; offset: number; end: number }> = [];
  for (const topic of topics) {
    const meta = await admin.describeTopic(topic);
    if (partition !== undefined && partition >= meta.partitions.length) {
      throw new UsageError(`partition ${partition} of topic "${topic}" does not exist (it has ${meta.partitions.length})`);
    }
    const parts = partition !== undefined ? [partition] : meta.partitions.map((p) => p.partition);
    const marks = await admin.listOffsets(topic, parts.map((p) => ({ partition: p, spec: 'latest' as const })));
    const byTime =
      start.kind === 'time' ? new Map((await admin.listOffsets(topic, parts.map((p) => ({ partition: p, spec: start.timestamp })))).map((o) => [o.partition, o.offset])) : undefined;
    for (const m of marks) {
      let offset: number;
      switch (start.kind) {
        case 'earliest':
          offset = m.low;
          break;
        case 'latest':
          offset = m.high;
          break;
        case 'offset':
          offset = start.offset;
          break;
        case 'last':
          offset = Math.max(m.low, m.high - start.count);
          break;
        case 'time': {
          // -1: no record at or after that time, so start at the end.
          const at = byTime!.get(m.partition) ?? -1;
          offset = at < 0 ? m.high : at;
          break;
        }
      }
      out.push({ topic, partition: m.partition, offset, end: m.high });
    }
  }
  return out;
}

export function consumeCommand(ctx: CliContext): CommandModule {
  const cmd: CommandModule<object, ConsumeArgs> = {
    command: 'consume <topic..>',
    describe: 'print records of one or more topics (until Ctrl-C, --max-messages, --timeout-ms or --exit-at-end)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('topic', { type: 'string', array: true, demandOption: true, describe: 'topic names (regular expressions with --regex)' })
        .option('regex', { type: 'boolean', default: false, describe: 'the topic arguments are regular expressions matched against whole topic names (internal topics left out)' })
        .option('isolation-level', {
          type: 'string',
          choices: ['read_uncommitted', 'read_committed'],
          default: 'read_uncommitted',
          describe: 'read_committed: only committed transactions (up to the last stable offset; aborted records dropped)',
        })
        .option('from-beginning', { type: 'boolean', describe: 'start at the earliest record (default: only new records)' })
        .option('partition', { alias: 'p', ...intOption('--partition', 0, 'read only this partition') })
        .option('offset', {
          alias: 'o',
          type: 'string',
          describe: 'start: earliest|beginning, latest|end, N (needs --partition), -N (the last N records of each partition), @TIME (epoch ms or ISO 8601: the first record at or after it)',
        })
        .option('max-messages', { alias: 'n', ...intOption('--max-messages', 1, 'exit after this many records') })
        .option('timeout-ms', { ...intOption('--timeout-ms', 0, 'exit when no record arrives for this long (counted from when the group has assigned partitions)') })
        .option('exit-at-end', { alias: 'e', type: 'boolean', describe: 'exit once every partition is read up to its end as it was at start (kcat -e)' })
        .option('print-key', { type: 'boolean', describe: 'text format: print key<TAB>value' })
        .option('format-string', {
          alias: 'f',
          type: 'string',
          describe: "text format: kcat-style, e.g. '%t %p %o %T %k %s %h\\n' (%t topic, %p partition, %o offset, %k key, %s value, %h headers, %T timestamp, %K/%S sizes)",
        })
        .option('value-encoding', { type: 'string', choices: ['utf8', 'base64'], default: 'utf8', describe: 'how keys, values and headers are printed' })
        .option('group', {
          alias: 'g',
          type: 'string',
          describe: 'consume as a member of this consumer group: partitions are shared with its other members and progress is committed (--from-beginning only applies when the group has no committed offset)',
        })
        .conflicts('group', ['partition', 'offset', 'exit-at-end'])
        .conflicts('from-beginning', 'offset')
        .conflicts('format-string', 'print-key') as unknown as Argv<ConsumeArgs>,
    handler: async (args) => {
      const partition = args.partition;
      const max = args['max-messages'];
      const idleMs = args['timeout-ms'];
      const start: StartSpec = args.offset !== undefined ? parseStartOffset(args.offset) : { kind: args['from-beginning'] ? 'earliest' : 'latest' };
      if (start.kind === 'offset' && partition === undefined) throw new UsageError('--offset with a number needs --partition');
      if (args['format-string'] !== undefined && args.format === 'json') throw new UsageError('--format-string is for --format text');
      const encoding = args['value-encoding'] as BufferEncoding;
      const print =
        args.format === 'json'
          ? (r: ConsumerRecord) => `${recordJson(r, encoding)}\n`
          : args['format-string'] !== undefined
            ? compileFormat(args['format-string'], encoding)
            : args['print-key']
              ? (r: ConsumerRecord) => `${text(r.key, encoding) ?? ''}\t${text(r.value, encoding) ?? ''}\n`
              : (r: ConsumerRecord) => `${text(r.value, encoding) ?? ''}\n`;
      const client = makeClient(args);
      const autoOffsetReset = start.kind === 'earliest' ? 'earliest' : 'latest';
      let group: GroupConsumer | undefined;
      const isolationLevel = args['isolation-level'];
      const consumer =
        args.group !== undefined ? (group = client.consumer({ groupId: args.group, autoOffsetReset, isolationLevel })) : client.consumer({ autoOffsetReset, isolationLevel });
      let seen = 0;
      try {
        await connectClient(client, args, ctx.signal);
        let topics = [...new Set(args.topic)];
        if (args.regex) {
          topics = matchTopics(await client.admin().listTopics(), topics);
          if (topics.length === 0 && !group) throw new UsageError(`no topic matches ${args.topic.map((p) => `"${p}"`).join(', ')}`);
        }
        // Progress toward --exit-at-end: the offset each partition must reach, and where it is.
        const ends = new Map<string, number>();
        const positions = new Map<string, number>();
        if (group) {
          for (const t of args.regex ? [] : topics) await client.admin().describeTopic(t); // an unknown topic fails now, not after the join
          group.subscribe(args.regex ? new RegExp(`^(?:${args.topic.join('|')})$`) : topics);
          // The join is not idle time: --timeout-ms counts from the assignment (bounded by the join's own timeouts and Ctrl-C).
          await group.waitForAssignment(ctx.signal).catch((err: unknown) => {
            if (!ctx.signal.aborted) throw err;
          });
        } else {
          const starts = await startPositions(client, topics, partition, start);
          consumer.assign(starts.map((s): TopicPartitionOffset => ({ topic: s.topic, partition: s.partition, offset: s.offset })));
          for (const s of starts) {
            const k = `${s.topic}\u0000${s.partition}`;
            ends.set(k, s.end);
            positions.set(k, s.offset);
          }
        }
        const atEnd = () => [...ends].every(([k, end]) => (positions.get(k) ?? 0) >= end);
        let lastRecordAt = Date.now();
        while (!ctx.signal.aborted && (max === undefined || seen < max) && !(args['exit-at-end'] && atEnd())) {
          const wait = idleMs === undefined ? 1000 : Math.max(0, Math.min(1000, lastRecordAt + idleMs - Date.now()));
          let records: ConsumerRecord[];
          try {
            records = await consumer.poll(wait, { signal: ctx.signal, maxRecords: max === undefined ? undefined : max - seen });
          } catch (err) {
            if (ctx.signal.aborted) break;
            throw err;
          }
          for (const r of records) {
            if (!ctx.stdout.write(print(r))) await new Promise((resolve) => ctx.stdout.once('drain', resolve));
            positions.set(`${r.topic}\u0000${r.partition}`, r.offset + 1);
          }
          seen += records.length;
          if (records.length > 0) lastRecordAt = Date.now();
          else if (idleMs !== undefined && Date.now() - lastRecordAt >= idleMs) break;
          else if (args['exit-at-end']) {
            // Nothing came: the fetch position may have passed the end over offsets with no record (compaction, control batches).
            for (const [k, end] of ends) {
              if ((positions.get(k) ?? 0) >= end) continue;
              const [topic, p] = k.split('\u0000') as [string, string];
              positions.set(k, await consumer.position({ topic, partition: Number(p) }, { signal: ctx.signal }));
            }
          }
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

