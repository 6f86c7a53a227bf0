/** Producer options, their defaults and the one parser that checks them. */
import { COMPRESSION_CODECS, type CompressionCodec } from '@mq/protocol/batch';
import { parseAcks, type Acks, type AcksInput } from '@mq/protocol/acks';
import { MqError } from '@mq/protocol/errors';
import { checkCodecAvailable } from '@mq/protocol/platform';
import { invalidArgument, positiveInt } from '../options.js';
import { defaultPartitioner, type Partitioner } from '../partitioner.js';

export interface ProducerOptions {
  /** 0: do not wait; 1: the leader wrote it; 'all' (or -1): every in-sync replica has it (default 'all'). */
  acks?: AcksInput;
  /**
   * How long a batch may wait for more records before it is sent (default 0:
   * at once). Batching does not depend on it: while a partition's request is
   * in flight its next batch keeps filling, so under load requests carry many
   * records anyway; a linger only adds latency to a partition that is idle.
   */
  lingerMs?: number;
  /** Size of one batch buffer in bytes (default 64 KiB); bigger records get a batch of their own. */
  batchBytes?: number;
  /** Total memory for records not yet acknowledged (default 32 MiB). */
  bufferMemory?: number;
  /** How long `send` may wait for buffer memory or metadata before BUFFER_FULL (default 60 s). */
  maxBlockMs?: number;
  /** How many sends may wait for memory at once before `send` fails at once with BUFFER_FULL (default 100 000). */
  maxBlockedSends?: number;
  /** Largest produce request in bytes (default 1 MiB, lowered to the broker's frame limit). */
  maxRequestBytes?: number;
  /** Produce requests in flight per broker (default 5). */
  maxInFlight?: number;
  /** How long the broker may take to gather acks (default 30 s). */
  ackTimeoutMs?: number;
  /**
   * A produce request unanswered for this long makes the producer ask
   * another broker who leads its partitions, every this many ms while it
   * waits; when leadership has moved (its broker is paused or cut off and was
   * fenced), the request is abandoned and its batches go to the new leader
   * at once instead of after ackTimeoutMs (default 100; 0 turns it off).
   */
  leaderCheckMs?: number;
  /** Give up on a record this long after `send` (default 120 s). */
  deliveryTimeoutMs?: number;
  /** Retries of a failed batch (default: unlimited within deliveryTimeoutMs), with the client's backoff. */
  retries?: number;
  compression?: CompressionCodec;
  partitioner?: Partitioner;
  /**
   * Idempotent producer (Kafka's enable.idempotence; default false): retries
   * never write a batch twice, within this producer's life. Needs acks 'all'.
   */
  idempotent?: boolean;
  /** Called for each record of `write()` that fails (they also make the next flush() reject). */
  onWriteError?: (err: unknown) => void;
  /**
   * Transactional producer (Kafka's transactional.id): records are sent in
   * transactions (beginTransaction / commitTransaction / abortTransaction, or
   * the `transaction()` helper) that commit or abort atomically across
   * partitions, with consumer offsets too. Implies idempotent and acks 'all'.
   * A new instance with the same id fences the previous one.
   */
  transactionalId?: string;
  /** How long a transaction may stay open before the coordinator aborts it (default 60 s; at most the broker's transaction.max.timeout.ms). */
  transactionTimeoutMs?: number;
}

export const DEFAULT_ACKS = -1;
export const DEFAULT_LINGER_MS = 0;
export const DEFAULT_BATCH_BYTES = 64 * 1024;
export const DEFAULT_BUFFER_MEMORY = 32 * 1024 * 1024;
export const DEFAULT_MAX_BLOCK_MS = 60_000;
export const DEFAULT_MAX_BLOCKED_SENDS = 100_000;
export const DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;
export const DEFAULT_MAX_IN_FLIGHT = 5;
export const DEFAULT_ACK_TIMEOUT_MS = 30_000;
export const DEFAULT_LEADER_CHECK_MS = 100;
export const DEFAULT_DELIVERY_TIMEOUT_MS = 120_000;
export const DEFAULT_IDEMPOTENT = false;
export const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;

export interface ParsedProducerOptions {
  acks: Acks;
  lingerMs: number;
  batchBytes: number;
  bufferMemory: number;
  maxBlockMs: number;
  maxBlockedSends: number;
  maxRequestBytes: number;
  maxInFlight: number;
  ackTimeoutMs: number;
  leaderCheckMs: number;
  deliveryTimeoutMs: number;
  retries: number;
  compression: CompressionCodec;
  partitioner: Partitioner;
  idempotent: boolean;
  transactionalId: string | undefined;
  transactionTimeoutMs: number;
}

export function parseCompression(c: unknown): CompressionCodec {
  if (typeof c === 'string' && (COMPRESSION_CODECS as readonly string[]).includes(c)) return c as CompressionCodec;
  throw invalidArgument(`compression must be one of ${COMPRESSION_CODECS.join(', ')}, got ${String(c)}`);
}

export function parseProducerOptions(options: ProducerOptions = {}): ParsedProducerOptions {
  const o: ParsedProducerOptions = {
    acks: parseAcks(options.acks ?? DEFAULT_ACKS, 'INVALID_ARGUMENT'),
    lingerMs: positiveInt('lingerMs', options.lingerMs ?? DEFAULT_LINGER_MS, 0),
    batchBytes: positiveInt('batchBytes', options.batchBytes ?? DEFAULT_BATCH_BYTES, 128),
    bufferMemory: positiveInt('bufferMemory', options.bufferMemory ?? DEFAULT_BUFFER_MEMORY, 128),
    maxBlockMs: positiveInt('maxBlockMs', options.maxBlockMs ?? DEFAULT_MAX_BLOCK_MS, 0),
    maxBlockedSends: positiveInt('maxBlockedSends', options.maxBlockedSends ?? DEFAULT_MAX_BLOCKED_SENDS, 1),
    maxRequestBytes: positiveInt('maxRequestBytes', options.maxRequestBytes ?? DEFAULT_MAX_REQUEST_BYTES, 128),
    maxInFlight: positiveInt('maxInFlight', options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, 1),
    ackTimeoutMs: positiveInt('ackTimeoutMs', options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS, 1),
    leaderCheckMs: positiveInt('leaderCheckMs', options.leaderCheckMs ?? DEFAULT_LEADER_CHECK_MS, 0),
    deliveryTimeoutMs: positiveInt('deliveryTimeoutMs', options.deliveryTimeoutMs ?? DEFAULT_DELIVERY_TIMEOUT_MS, 1),
    retries: positiveInt('retries', options.retries ?? Number.MAX_SAFE_INTEGER, 0),
    compression: parseCompression(options.compression ?? 'none'),
    partitioner: options.partitioner ?? defaultPartitioner,
    idempotent: options.idempotent ?? (options.transactionalId !== undefined ? true : DEFAULT_IDEMPOTENT),
    transactionalId: options.transactionalId,
    transactionTimeoutMs: positiveInt('transactionTimeoutMs', options.transactionTimeoutMs ?? DEFAULT_TRANSACTION_TIMEOUT_MS, 1),
  };
  if (o.transactionalId !== undefined) {
    if (typeof o.transactionalId !== 'string' || o.transactionalId === '') throw invalidArgument(`transactionalId must be a non-empty string, got ${String(o.transactionalId)}`);
    if (!o.idempotent) throw new MqError('INVALID_CONFIG', 'a transactional producer is idempotent: do not set idempotent: false with a transactionalId');
  }
  // A codec this platform lacks (any codec in a browser) fails here, not at the first send.
  checkCodecAvailable(o.compression);
  if (typeof o.idempotent !== 'boolean') throw invalidArgument(`idempotent must be true or false, got ${String(o.idempotent)}`);
  if (o.idempotent && o.acks !== -1) {
    // As Kafka: with acks 0 or 1 an acknowledged batch can be lost in a failover and the sequences would go on past the gap.
    throw new MqError('INVALID_CONFIG', `an idempotent producer needs acks 'all', got acks ${o.acks} (use acks: 'all', or idempotent: false)`);
  }
  if (typeof o.partitioner !== 'function') throw invalidArgument('partitioner must be a function');
  if (o.bufferMemory < o.batchBytes) {
    throw invalidArgument(`bufferMemory (${o.bufferMemory}) must be at least batchBytes (${o.batchBytes})`);
  }
  if (o.batchBytes > o.maxRequestBytes) {
    throw invalidArgument(`batchBytes (${o.batchBytes}) must not exceed maxRequestBytes (${o.maxRequestBytes})`);
  }
  return o;
}
