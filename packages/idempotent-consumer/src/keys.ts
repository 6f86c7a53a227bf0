/**
 * Idempotency keys: what makes two deliveries "the same". The default, the
 * record's topic/partition/offset, catches redeliveries by mq (a consumer
 * that restarts before committing); a key from the record itself, such as a
 * payment id set by the producer, also catches duplicates produced upstream
 * (a producer that retried a send it could not confirm), which sit at other
 * offsets.
 */
import { MqError } from '@mq/protocol/errors';
import type { ConsumerRecord } from '@mq/client';

/** Keys longer than this are refused (they are stored and indexed per record). */
export const MAX_KEY_LENGTH = 512;

export type KeyOf = (record: ConsumerRecord) => string;

/** `topic/partition/offset`: catches redeliveries, not upstream duplicates. */
export const offsetKey: KeyOf = (r) => `${r.topic}/${r.partition}/${r.offset}`;

function where(r: ConsumerRecord): string {
  return `${r.topic}/${r.partition}@${r.offset}`;
}

/**
 * The value of header `name` (UTF-8), e.g. a payment id set by the producer.
 * A record without it is an error (INVALID_RECORD): falling back to the
 * offset would silently stop catching that record's upstream duplicates.
 */
export function keyFromHeader(name: string): KeyOf {
  if (name === '') throw new MqError('INVALID_ARGUMENT', 'keyFromHeader needs a header name');
  return (r) => {
    const h = r.headers.find((x) => x.key === name);
    if (!h || h.value === null || h.value.length === 0) {
      throw new MqError('INVALID_RECORD', `record ${where(r)} has no "${name}" header to take its idempotency key from`);
    }
    return h.value.toString('utf8');
  };
}

/** The record's key (UTF-8); a record without one is INVALID_RECORD. */
export const recordKey: KeyOf = (r) => {
  if (r.key === null || r.key.length === 0) throw new MqError('INVALID_RECORD', `record ${where(r)} has no key to take its idempotency key from`);
  return r.key.toString('utf8');
};

/** Checks a derived key: a non-empty string of at most MAX_KEY_LENGTH characters. */
export function checkKey(key: unknown, r: ConsumerRecord): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new MqError('INVALID_RECORD', `the idempotency key of record ${where(r)} is empty or not a string`);
  }
  if (key.length > MAX_KEY_LENGTH) {
    throw new MqError('INVALID_RECORD', `the idempotency key of record ${where(r)} is ${key.length} characters (at most ${MAX_KEY_LENGTH})`);
  }
  return key;
}
