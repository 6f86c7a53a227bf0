import { MqError } from '@mq/protocol/errors';
import { formatKeySpec, parseKeySpec, type KeySpec } from './keys.js';
import { parseAcks as parseAcksValue, type Acks } from '@mq/protocol/acks';
import type { Compression } from './target.js';

export const DEFAULT_RECORDS = 1_000_000;
export const DEFAULT_SIZE = 100;
export const DEFAULT_PARTITIONS = 1;
export const DEFAULT_ACKS: Acks = 1;
/** Batch size and linger: null leaves each client's own default in force. */
export const DEFAULT_BATCH_BYTES: number | null = null;
export const DEFAULT_LINGER_MS: number | null = null;
export const DEFAULT_COMPRESSION: Compression = 'none';
export const DEFAULT_PRODUCERS = 1;
export const DEFAULT_CONSUMERS = 1;
/** Records one producer may have outstanding; a bound, so the harness never buffers without limit. */
export const DEFAULT_WINDOW = 16_384;
export const DEFAULT_E2E_RATE = 10_000;
export const DEFAULT_E2E_SECONDS = 10;
/** Unacknowledged records the e2e producer may have before its schedule waits. */
export const DEFAULT_E2E_WINDOW = 65_536;
/** A consume or e2e run that receives nothing for this long stops and reports what is missing. */
export const DEFAULT_IDLE_TIMEOUT_MS = 15_000;

const COMPRESSIONS: readonly Compression[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

export interface CommonBenchOptions {
  topic?: string;
  size?: number;
  partitions?: number;
  keys?: string | KeySpec;
  idleTimeoutMs?: number;
}

export interface ProduceBenchOptions extends CommonBenchOptions {
  /** Stop after this many records (default 1,000,000 unless `duration` is given). */
  records?: number;
  /** Or stop after this many seconds. */
  duration?: number;
  acks?: Acks | 'all' | string | number;
  batchBytes?: number;
  lingerMs?: number;
  compression?: Compression | string;
  producers?: number;
  /** Outstanding records per producer; 1 awaits each acknowledgement before the next send. */
  window?: number;
  /** Open-loop target rate (records/s, all producers together); latency is measured from the intended send time. */
  rate?: number;
  /** Seconds of the same load run first and not measured (JIT, connections, metadata); default 0. */
  warmup?: number;
}

export interface ConsumeBenchOptions extends CommonBenchOptions {
  /** Records to prepare (produce first) and then read back. */
  records?: number;
  consumers?: number;
  /** Read as a consumer group (name given, or generated when true); otherwise every consumer reads alone. */
  group?: string | boolean;
  /** Read an existing topic holding `records` records instead of preparing one. */
  prepare?: boolean;
}

export interface E2eBenchOptions extends CommonBenchOptions {
  rate?: number;
  duration?: number;
  records?: number;
  acks?: Acks | 'all' | string | number;
  batchBytes?: number;
  lingerMs?: number;
  compression?: Compression | string;
  consumers?: number;
  group?: string | boolean;
  /** Records the producer may have unacknowledged; when full the schedule waits (and latency shows it). */
  window?: number;
}

export interface ParsedCommon {
  topic: string;
  size: number;
  partitions: number;
  keys: KeySpec;
  idleTimeoutMs: number;
}

export interface ParsedProduceOptions extends ParsedCommon {
  records: number | null;
  duration: number | null;
  acks: Acks;
  batchBytes: number | null;
  lingerMs: number | null;
  compression: Compression;
  producers: number;
  window: number;
  rate: number | null;
  warmup: number;
}

export interface ParsedConsumeOptions extends ParsedCommon {
  records: number;
  consumers: number;
  group: string | null;
  prepare: boolean;
}

export interface ParsedE2eOptions extends ParsedCommon {
  rate: number;
  records: number;
  acks: Acks;
  batchBytes: number | null;
  lingerMs: number | null;
  compression: Compression;
  consumers: number;
  group: string | null;
  window: number;
}

function invalid(message: string): never {
  throw new MqError('INVALID_ARGUMENT', message);
}

function int(name: string, v: unknown, min: number, fallback: number): number {
  if (v === undefined || v === null) return fallback;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min) invalid(`--${name} must be an integer >= ${min}, got ${String(v)}`);
  return n;
}

function optionalInt(name: string, v: unknown, min: number, fallback: number | null): number | null {
  return v === undefined || v === null ? fallback : int(name, v, min, 0);
}

function positive(name: string, v: unknown): number | null {
  if (v === undefined || v === null) return null;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isFinite(n) || n <= 0) invalid(`--${name} must be a positive number, got ${String(v)}`);
  return n;
}

/** --acks: DEFAULT_ACKS when absent, else @mq/protocol's parser (INVALID_ARGUMENT for anything but 0, 1, all). */
export function parseAcks(v: unknown): Acks {
  if (v === undefined || v === null) return DEFAULT_ACKS;
  return parseAcksValue(v, 'INVALID_ARGUMENT');
}

export function parseCompression(v: unknown): Compression {
  if (v === undefined || v === null) return DEFAULT_COMPRESSION;
  if (typeof v === 'string' && (COMPRESSIONS as readonly string[]).includes(v)) return v as Compression;
  return invalid(`--compression must be one of ${COMPRESSIONS.join(', ')}, got ${String(v)}`);
}

let topicSeq = 0;
function defaultTopic(kind: string): string {
  return `bench-${kind}-${process.pid}-${Date.now().toString(36)}-${topicSeq++}`;
}

function parseCommon(kind: string, o: CommonBenchOptions): ParsedCommon {
  const topic = o.topic ?? defaultTopic(kind);
  if (typeof topic !== 'string' || !/^[A-Za-z0-9._-]{1,249}$/.test(topic)) invalid(`--topic "${String(topic)}" is not valid (letters, digits, ".", "_" and "-", at most 249)`);
  const keys = typeof o.keys === 'object' && o.keys !== null ? { ...o.keys } : parseKeySpec(o.keys ?? 'none');
  return {
    topic,
    size: int('size', o.size, 1, DEFAULT_SIZE),
    partitions: int('partitions', o.partitions, 1, DEFAULT_PARTITIONS),
    keys,
    idleTimeoutMs: int('idle-timeout-ms', o.idleTimeoutMs, 100, DEFAULT_IDLE_TIMEOUT_MS),
  };
}

export function parseProduceOptions(o: ProduceBenchOptions = {}): ParsedProduceOptions {
  const common = parseCommon('produce', o);
  const duration = positive('duration', o.duration);
  if (o.records !== undefined && duration !== null) invalid('give either --records or --duration, not both');
  const records = duration === null ? int('records', o.records, 1, DEFAULT_RECORDS) : null;
  const producers = int('producers', o.producers, 1, DEFAULT_PRODUCERS);
  const window = int('window', o.window, 1, DEFAULT_WINDOW);
  const rate = positive('rate', o.rate);
  const warmup = o.warmup ?? 0;
  if (typeof warmup !== 'number' || !Number.isFinite(warmup) || warmup < 0 || warmup > 3600) {
    invalid(`--warmup must be a number of seconds from 0 to 3600, not ${String(o.warmup)}`);
  }
  return {
    ...common,
    records,
    duration,
    warmup,
    acks: parseAcks(o.acks),
    batchBytes: optionalInt('batch-bytes', o.batchBytes, 1, DEFAULT_BATCH_BYTES),
    lingerMs: optionalInt('linger-ms', o.lingerMs, 0, DEFAULT_LINGER_MS),
    compression: parseCompression(o.compression),
    producers,
    window,
    rate,
  };
}

function parseGroup(kind: string, g: string | boolean | undefined): string | null {
  if (g === undefined || g === false) return null;
  if (g === true || g === '') return `bench-${kind}-group-${process.pid}-${Date.now().toString(36)}`;
  if (!/^[A-Za-z0-9._-]{1,249}$/.test(g)) invalid(`--group "${g}" is not valid (letters, digits, ".", "_" and "-")`);
  return g;
}

export function parseConsumeOptions(o: ConsumeBenchOptions = {}): ParsedConsumeOptions {
  const common = parseCommon('consume', o);
  const consumers = int('consumers', o.consumers, 1, DEFAULT_CONSUMERS);
  const group = parseGroup('consume', o.group);
  if (consumers > 1 && group === null) invalid(`--consumers ${consumers} needs --group: several consumers share a topic only as a group`);
  const prepare = o.prepare ?? true;
  if (!prepare && o.topic === undefined) invalid('--no-prepare reads an existing topic: give its name with --topic and its record count with --records');
  return { ...common, records: int('records', o.records, 1, DEFAULT_RECORDS), consumers, group, prepare };
}

export function parseE2eOptions(o: E2eBenchOptions = {}): ParsedE2eOptions {
  const common = parseCommon('e2e', o);
  const rate = positive('rate', o.rate) ?? DEFAULT_E2E_RATE;
  const duration = positive('duration', o.duration);
  if (o.records !== undefined && duration !== null) invalid('give either --records or --duration, not both');
  const records = o.records !== undefined ? int('records', o.records, 1, 1) : Math.max(1, Math.round(rate * (duration ?? DEFAULT_E2E_SECONDS)));
  if (common.size < 8) invalid('--size must be at least 8 for e2e: each value carries its send time');
  const consumers = int('consumers', o.consumers, 1, DEFAULT_CONSUMERS);
  const group = parseGroup('e2e', o.group);
  if (consumers > 1 && group === null) invalid(`--consumers ${consumers} needs --group`);
  return {
    ...common,
    rate,
    records,
    acks: parseAcks(o.acks),
    batchBytes: optionalInt('batch-bytes', o.batchBytes, 1, DEFAULT_BATCH_BYTES),
    lingerMs: optionalInt('linger-ms', o.lingerMs, 0, DEFAULT_LINGER_MS),
    compression: parseCompression(o.compression),
    consumers,
    group,
    window: int('window', o.window, 1, DEFAULT_E2E_WINDOW),
  };
}

/** The exact parameters of a run, as printed with its result. */
export function describeParameters(o: ParsedCommon & Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) out[k] = k === 'keys' ? formatKeySpec(v as KeySpec) : v;
  return out;
}
