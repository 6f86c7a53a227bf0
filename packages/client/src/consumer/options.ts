/** Consumer options, their defaults and the one parser that checks them. */
import { invalidArgument, positiveInt } from '../options.js';

/** What to do when a partition has no position, or its position is out of range. */
export type AutoOffsetReset = 'earliest' | 'latest' | 'none';

export interface ConsumerOptions {
  /** Reserved for consumer groups (next issue); manual assignment ignores it. */
  groupId?: string;
  /** Default 'latest', as in Kafka. 'none' makes poll() throw OFFSET_OUT_OF_RANGE instead. */
  autoOffsetReset?: AutoOffsetReset;
  /** How long the broker may hold a fetch open waiting for data (default 500 ms). */
  maxWaitMs?: number;
  /** The broker answers as soon as this many bytes are there (default 1). */
  minBytes?: number;
  /** Largest fetch response (default 16 MiB). */
  fetchMaxBytes?: number;
  /** Most bytes per partition in one fetch (default 1 MiB); at least one whole batch is always returned. */
  partitionMaxBytes?: number;
  /** Bound on fetched bytes buffered but not yet polled (default 64 MiB): fetching pauses above it. */
  maxBufferedBytes?: number;
  /** Most records one poll() returns (default 500). */
  maxPollRecords?: number;
  /** Verify each batch's CRC-32C before decoding (default true). */
  checkCrcs?: boolean;
  /**
   * 'read_uncommitted' (default, as Kafka): every record up to the high
   * watermark, aborted transactions' too. 'read_committed': only up to the
   * last stable offset (nothing of a transaction still open), and the
   * records of aborted transactions are dropped. Transaction markers are
   * never returned.
   */
  isolationLevel?: IsolationLevel;
}

export type IsolationLevel = 'read_uncommitted' | 'read_committed';
export const DEFAULT_ISOLATION_LEVEL: IsolationLevel = 'read_uncommitted';

export function parseIsolationLevel(v: unknown): IsolationLevel {
  if (v === 'read_uncommitted' || v === 'read_committed') return v;
  throw invalidArgument(`isolationLevel must be read_uncommitted or read_committed, got ${String(v)}`);
}

export const DEFAULT_AUTO_OFFSET_RESET: AutoOffsetReset = 'latest';
export const DEFAULT_MAX_WAIT_MS = 500;
export const DEFAULT_MIN_BYTES = 1;
export const DEFAULT_FETCH_MAX_BYTES = 16 * 1024 * 1024;
export const DEFAULT_PARTITION_MAX_BYTES = 1024 * 1024;
export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_POLL_RECORDS = 500;

export interface ParsedConsumerOptions {
  groupId: string | undefined;
  autoOffsetReset: AutoOffsetReset;
  maxWaitMs: number;
  minBytes: number;
  fetchMaxBytes: number;
  partitionMaxBytes: number;
  maxBufferedBytes: number;
  maxPollRecords: number;
  checkCrcs: boolean;
  isolationLevel: IsolationLevel;
}

export function parseAutoOffsetReset(v: unknown): AutoOffsetReset {
  if (v === 'earliest' || v === 'latest' || v === 'none') return v;
  throw invalidArgument(`autoOffsetReset must be earliest, latest or none, got ${String(v)}`);
}

export function parseConsumerOptions(options: ConsumerOptions = {}): ParsedConsumerOptions {
  const o: ParsedConsumerOptions = {
    groupId: options.groupId,
    autoOffsetReset: parseAutoOffsetReset(options.autoOffsetReset ?? DEFAULT_AUTO_OFFSET_RESET),
    maxWaitMs: positiveInt('maxWaitMs', options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS, 0),
    minBytes: positiveInt('minBytes', options.minBytes ?? DEFAULT_MIN_BYTES, 0),
    fetchMaxBytes: positiveInt('fetchMaxBytes', options.fetchMaxBytes ?? DEFAULT_FETCH_MAX_BYTES, 1024),
    partitionMaxBytes: positiveInt('partitionMaxBytes', options.partitionMaxBytes ?? DEFAULT_PARTITION_MAX_BYTES, 1024),
    maxBufferedBytes: positiveInt('maxBufferedBytes', options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES, 1024),
    maxPollRecords: positiveInt('maxPollRecords', options.maxPollRecords ?? DEFAULT_MAX_POLL_RECORDS, 1),
    checkCrcs: options.checkCrcs ?? true,
    isolationLevel: parseIsolationLevel(options.isolationLevel ?? DEFAULT_ISOLATION_LEVEL),
  };
  if (o.partitionMaxBytes > o.fetchMaxBytes) {
    throw invalidArgument(`partitionMaxBytes (${o.partitionMaxBytes}) must not exceed fetchMaxBytes (${o.fetchMaxBytes})`);
  }
  return o;
}
