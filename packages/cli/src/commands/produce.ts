/**
 * `mq produce <topic>`: one record per line of stdin, as text (optionally key<SEP>value) or as
 * JSON Lines (`--input json`: `{key, value, headers, partition, timestamp}`), values as text or base64.
 *
 * Lines are sent as they arrive (typing into a terminal works, and input is never held in memory), and
 * each line is parsed completely before it is sent: a bad line is never sent. At the first bad line the
 * command stops reading, waits for the lines before it, and exits 2 saying exactly how many records
 * were produced (with `--format json` each of them is also printed with its partition and offset).
 *
 * With `--transactional-id` the lines are sent in transactions: all of stdin in one, or one per
 * `--txn-records N` lines. A bad line (or a failed send) aborts the open transaction: read_committed
 * consumers see only the transactions committed before it.
 */
import { createInterface } from 'node:readline';
import type { Argv, CommandModule } from 'yargs';
import type { ProducerRecord, RecordMetadata } from '@mq/client';
import { parseCompression } from '@mq/client/internal';
import { parseAcks } from '@mq/protocol/acks';
import { writeLine, type CliContext } from '../context.js';
import { UsageError } from '../errors.js';
import { connectClient, intOption, makeClient, withClientOptions, withFormat, type ClientArgs, type FormatArgs } from '../options.js';
import { parseDatetime } from './group.js';

interface ProduceArgs extends ClientArgs, FormatArgs {
  topic: string;
  input: 'text' | 'json';
  key?: string;
  'key-separator'?: string;
  header?: string[];
  headers?: string;
  'value-encoding': 'utf8' | 'base64';
  'null-empty': boolean;
  timestamp?: string;
  acks: string;
  partition?: number;
  compression: string;
  'linger-ms': number;
  'max-request-bytes'?: number;
  'buffer-memory'?: number;
  idempotent: boolean;
  'transactional-id'?: string;
  'txn-records'?: number;
}

type Header = { key: string; value: Buffer | string | null };

const MAX_OUTSTANDING = 10_000;
/** The client's default batch buffer; lowered to fit --max-request-bytes / --buffer-memory. */
const DEFAULT_BATCH_BYTES = 64 * 1024;

/** Parses the legacy `--headers k=v,k2=v2` into record headers (a value cannot hold a comma: use -H). */
export function parseHeaders(spec: string | undefined): Header[] | undefined {
  if (spec === undefined || spec === '') return undefined;
  return spec.split(',').map((pair) => {
    const i = pair.indexOf('=');
    if (i <= 0) throw new UsageError(`--headers "${pair}" is not key=value (use --headers k1=v1,k2=v2)`);
    return { key: pair.slice(0, i), value: pair.slice(i + 1) };
  });
}

/** Parses repeated `-H k=v`: one header each, the value is everything after the first '=' (commas included); a key may repeat. */
export function parseHeaderFlags(entries: readonly string[] | undefined): Header[] {
  return (entries ?? []).map((e) => {
    const i = e.indexOf('=');
    if (i <= 0) throw new UsageError(`-H "${e}" is not key=value`);
    return { key: e.slice(0, i), value: e.slice(i + 1) };
  });
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Decodes one text field of the input: as is, or strict base64 (a typo is an error, not garbage bytes). */
export function decodeField(s: string, encoding: 'utf8' | 'base64', what: string): Buffer | string {
  if (encoding === 'utf8') return s;
  if (!BASE64.test(s)) throw new UsageError(`${what} is not base64`);
  return Buffer.from(s, 'base64');
}

export interface LineOptions {
  input: 'text' | 'json';
  encoding: 'utf8' | 'base64';
  key?: string;
  separator?: string;
  headers: Header[];
  partition?: number;
  partitions: number;
  timestamp?: number;
  nullEmpty: boolean;
}

const JSON_FIELDS = new Set(['key', 'value', 'headers', 'partition', 'timestamp']);

/** One input line as the record to send; a UsageError (without the line number) when the line is wrong. */
export function parseLine(line: string, o: LineOptions): ProducerRecord {
  if (o.input === 'json') return parseJsonLine(line, o);
  let key: string | undefined = o.key;
  let value = line;
  if (o.separator !== undefined) {
    const i = line.indexOf(o.separator);
    if (i < 0) throw new UsageError(`no key separator "${o.separator}"`);
    key = line.slice(0, i);
    value = line.slice(i + o.separator.length);
  }
  return {
    key: key === undefined ? undefined : decodeField(key, o.encoding, 'the key'),
    value: o.nullEmpty && value === '' ? null : decodeField(value, o.encoding, 'the value'),
    headers: o.headers.length > 0 ? o.headers : undefined,
    partition: o.partition,
    timestamp: o.timestamp,
  };
}

function parseJsonLine(line: string, o: LineOptions): ProducerRecord {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch (err) {
    throw new UsageError(`not JSON: ${(err as Error).message}`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) throw new UsageError('not a JSON object {key, value, headers, partition, timestamp}');
  const r = obj as Record<string, unknown>;
  for (const k of Object.keys(r)) {
    if (!JSON_FIELDS.has(k)) throw new UsageError(`unknown field "${k}" (known: key, value, headers, partition, timestamp)`);
  }
  if (!('value' in r)) throw new UsageError('no "value" (null for a tombstone)');
  const bytes = (v: unknown, what: string): Buffer | string | null => {
    if (v === null) return null;
    if (typeof v !== 'string') throw new UsageError(`${what} must be a string or null`);
    return decodeField(v, o.encoding, what);
  };
  const headers = [...o.headers, ...jsonHeaders(r.headers, bytes)];
  let partition = o.partition;
  if (r.partition !== undefined) {
    if (!Number.isSafeInteger(r.partition) || (r.partition as number) < 0) throw new UsageError(`"partition" must be an integer >= 0, got ${JSON.stringify(r.partition)}`);
    partition = r.partition as number;
    if (partition >= o.partitions) throw new UsageError(`"partition" ${partition} does not exist (the topic has ${o.partitions})`);
  }
  let timestamp = o.timestamp;
  if (r.timestamp !== undefined) {
    if (typeof r.timestamp === 'number') {
      if (!Number.isSafeInteger(r.timestamp) || r.timestamp < 0) throw new UsageError(`"timestamp" must be epoch ms >= 0 or ISO 8601, got ${r.timestamp}`);
      timestamp = r.timestamp;
    } else if (typeof r.timestamp === 'string') timestamp = parseDatetime(r.timestamp, '"timestamp"');
    else throw new UsageError('"timestamp" must be epoch ms or an ISO 8601 string');
  }
  return {
    key: r.key === undefined ? undefined : bytes(r.key, '"key"'),
    value: bytes(r.value, '"value"'),
    headers: headers.length > 0 ? headers : undefined,
    partition,
    timestamp,
  };
}

/** `headers` of a JSON line: {k: v | [v, ...]} (the shape `mq consume --format json` prints) or [{key, value}, ...]. */
function jsonHeaders(h: unknown, bytes: (v: unknown, what: string) => Buffer | string | null): Header[] {
  if (h === undefined || h === null) return [];
  if (Array.isArray(h)) {
    return h.map((e, i) => {
      if (typeof e !== 'object' || e === null || typeof (e as { key?: unknown }).key !== 'string') {
        throw new UsageError(`"headers"[${i}] must be {"key": string, "value": string or null}`);
      }
      const { key, value } = e as { key: string; value?: unknown };
      return { key, value: bytes(value ?? null, `header "${key}"`) };
    });
  }
  if (typeof h !== 'object') throw new UsageError('"headers" must be an object or a list of {key, value}');
  const out: Header[] = [];
  for (const [key, v] of Object.entries(h)) {
    for (const one of Array.isArray(v) ? v : [v]) out.push({ key, value: bytes(one, `header "${key}"`) });
  }
  return out;
}

export function produceCommand(ctx: CliContext): CommandModule {
  const cmd: CommandModule<object, ProduceArgs> = {
    command: 'produce <topic>',
    describe: 'send one record per line of stdin (text, or JSON Lines with --input json)',
    builder: (y) =>
      withFormat(withClientOptions(y, ctx.env))
        .positional('topic', { type: 'string', demandOption: true })
        .option('input', {
          type: 'string',
          choices: ['text', 'json'],
          default: 'text',
          describe: 'text: each line is a value; json: each line is {"key", "value", "headers", "partition", "timestamp"} (value null: a tombstone)',
        })
        .option('key', { alias: 'k', type: 'string', describe: 'key of every record' })
        .option('key-separator', { type: 'string', describe: 'text input: split each line into key<SEP>value at the first SEP' })
        .option('header', { alias: 'H', type: 'string', array: true, describe: 'a header of every record, k=v (repeatable; the value may hold commas)' })
        .option('headers', { type: 'string', describe: 'headers of every record: k1=v1,k2=v2 (values without commas; see -H)' })
        .option('value-encoding', { type: 'string', choices: ['utf8', 'base64'], default: 'utf8', describe: 'how keys, values and header values of the input are written' })
        .option('null-empty', { alias: 'Z', type: 'boolean', default: false, describe: 'text input: an empty line is a null value (a tombstone)' })
        .option('timestamp', { type: 'string', describe: 'create time of every record: epoch ms or ISO 8601 (default now)' })
        .option('acks', { type: 'string', choices: ['0', '1', 'all', '-1'], default: 'all', describe: 'acknowledgement level' })
        .option('partition', { alias: 'p', ...intOption('--partition', 0, 'send every record to this partition') })
        .option('compression', { type: 'string', choices: ['none', 'gzip', 'snappy', 'lz4', 'zstd'], default: 'none' })
        .option('linger-ms', intOption('--linger-ms', 0, 'how long a batch waits for more records', 5))
        .option('max-request-bytes', intOption('--max-request-bytes', 128, 'largest produce request (default 1 MiB, never above what the broker accepts)'))
        .option('buffer-memory', intOption('--buffer-memory', 128, 'memory for records not yet acknowledged (default 32 MiB)'))
        .option('idempotent', { type: 'boolean', default: false, describe: 'idempotent producer: retries never write a record twice (needs --acks all)' })
        .option('transactional-id', { type: 'string', describe: 'send in transactions under this transactional id (fences an earlier producer with the same id)' })
        .option('txn-records', intOption('--txn-records', 1, 'with --transactional-id: commit a transaction every N lines (default: all of stdin is one transaction)'))
        .conflicts('key', 'key-separator') as unknown as Argv<ProduceArgs>,
    handler: async (args) => {
      const sep = args['key-separator'];
      if (sep === '') throw new UsageError('--key-separator must not be empty');
      if (args.input === 'json' && (sep !== undefined || args.key !== undefined || args['null-empty'])) {
        throw new UsageError('--key, --key-separator and --null-empty are for --input text (JSON lines carry their own key and null values)');
      }
      const acks = parseAcks(args.acks, 'INVALID_ARGUMENT');
      if (args.idempotent && acks !== -1) throw new UsageError(`--idempotent needs --acks all, got --acks ${args.acks}`);
      const transactionalId = args['transactional-id'];
      const txnRecords = args['txn-records'];
      if (transactionalId === '') throw new UsageError('--transactional-id must not be empty');
      if (transactionalId !== undefined && acks !== -1) throw new UsageError(`--transactional-id needs --acks all, got --acks ${args.acks}`);
      if (txnRecords !== undefined && transactionalId === undefined) throw new UsageError('--txn-records needs --transactional-id');
      const base: Omit<LineOptions, 'partitions'> = {
        input: args.input,
        encoding: args['value-encoding'],
        key: args.key,
        separator: sep,
        headers: [...(parseHeaders(args.headers) ?? []), ...parseHeaderFlags(args.header)],
        partition: args.partition,
        timestamp: args.timestamp === undefined ? undefined : parseDatetime(args.timestamp, '--timestamp'),
        nullEmpty: args['null-empty'],
      };
      const maxRequestBytes = args['max-request-bytes'];
      const bufferMemory = args['buffer-memory'];
      const client = makeClient(args);
      const producer = client.producer({
        acks,
        compression: parseCompression(args.compression),
        lingerMs: args['linger-ms'],
        idempotent: args.idempotent || transactionalId !== undefined,
        ...(transactionalId !== undefined ? { transactionalId } : {}),
        ...(maxRequestBytes !== undefined ? { maxRequestBytes } : {}),
        ...(bufferMemory !== undefined ? { bufferMemory } : {}),
        batchBytes: Math.min(DEFAULT_BATCH_BYTES, maxRequestBytes ?? DEFAULT_BATCH_BYTES, bufferMemory ?? DEFAULT_BATCH_BYTES),
      });
      let count = 0;
      let acked = 0;
      // Each line is sent as it arrives (so typing into a terminal works); results are printed in input
      // order through one promise chain; at most MAX_OUTSTANDING records are awaited at once.
      let chain: Promise<void> = Promise.resolve();
      let failure: unknown;
      let badLine: UsageError | undefined;
      // Transactions: records of the open transaction are printed and counted once it commits.
      let inTxn: RecordMetadata[] = [];
      let open = false;
      const emit = (m: RecordMetadata): void | Promise<void> => {
        if (transactionalId !== undefined) {
          inTxn.push(m);
          return;
        }
        acked++;
        if (args.format === 'json') return writeLine(ctx.stdout, JSON.stringify(m));
      };
      const commit = async (): Promise<void> => {
        await chain;
        await producer.commitTransaction();
        open = false;
        const done = inTxn;
        inTxn = [];
        acked += done.length;
        if (args.format === 'json') for (const m of done) await writeLine(ctx.stdout, JSON.stringify(m));
      };
      try {
        await connectClient(client, args, ctx.signal);
        // Fail fast, before reading stdin, when the topic or partition does not exist.
        const meta = await client.admin().describeTopic(args.topic);
        if (args.partition !== undefined && args.partition >= meta.partitions.length) {
          throw new UsageError(`partition ${args.partition} of topic "${args.topic}" does not exist (it has ${meta.partitions.length})`);
        }
        const options: LineOptions = { ...base, partitions: meta.partitions.length };
        if (transactionalId !== undefined) await producer.initTransactions({ signal: ctx.signal });
        const lines = createInterface({ input: ctx.stdin, crlfDelay: Infinity });
        let lineNo = 0;
        for await (const line of lines) {
          if (failure !== undefined) break;
          lineNo++;
          if (args.input === 'json' && line.trim() === '') continue;
          let record: ProducerRecord;
          try {
            record = parseLine(line, options);
          } catch (err) {
            if (!(err instanceof UsageError)) throw err;
            badLine = new UsageError(`line ${lineNo}: ${err.message}`);
            break;
          }
          if (transactionalId !== undefined && !open) {
            await producer.beginTransaction();
            open = true;
          }
          const sent = producer.send(args.topic, record);
          count++;
          chain = chain.then(() => sent).then(emit);
          chain.catch((err: unknown) => {
            failure ??= err;
          });
          if (count - acked - inTxn.length >= MAX_OUTSTANDING) await chain.catch(() => undefined);
          if (open && txnRecords !== undefined && count % txnRecords === 0 && failure === undefined) await commit();
          if (ctx.signal.aborted) break;
        }
        lines.close();
        await chain;
        if (open && !badLine && !ctx.signal.aborted) await commit();
        await producer.flush();
      } finally {
        await chain.catch(() => undefined);
        if (open) await producer.abortTransaction().catch(() => undefined);
        await client.close({ timeoutMs: 2000 });
      }
      if (badLine) {
        const written =
          acked === 0
            ? 'nothing was produced'
            : `the ${acked} record${acked === 1 ? '' : 's'} before it ${acked === 1 ? 'was' : 'were'} produced to "${args.topic}", nothing after it${transactionalId !== undefined ? ' (the open transaction was aborted)' : ''}`;
        throw new UsageError(`${badLine.message} (${written})`);
      }
      if (args.format !== 'json') ctx.stderr.write(`produced ${acked} record${acked === 1 ? '' : 's'} to "${args.topic}"\n`);
    },
  };
  return cmd as unknown as CommandModule;
}
