/**
 * `idempotent(options, handler)` wraps an `eachMessage` handler so that its
 * side effect happens at most once per idempotency key, on top of mq's
 * at-least-once delivery: effectively once. The consumer still commits
 * offsets as usual; a record delivered again after a crash (processed, not
 * yet committed) finds its key recorded and is skipped.
 */
import type { EachMessagePayload } from '@mq/client';
import { checkKey, offsetKey, type KeyOf } from './keys.js';
import type { IdempotencyStore, Outcome } from './store.js';

export interface IdempotentPayload<Tx> extends EachMessagePayload {
  /** The idempotency key of this record. */
  key: string;
  /** The store's transaction handle (PostgreSQL: the client inside the transaction that records the key). */
  tx: Tx;
}

export interface IdempotentOptions<Tx> {
  store: IdempotencyStore<Tx>;
  /** How a record's key is derived (default `offsetKey`: topic/partition/offset). */
  key?: KeyOf;
  /** Called for each record (tests and metrics: how many were duplicates). */
  onOutcome?: (outcome: Outcome, key: string, payload: EachMessagePayload) => void;
}

export function idempotent<Tx>(
  options: IdempotentOptions<Tx>,
  handler: (payload: IdempotentPayload<Tx>) => Promise<void> | void,
): (payload: EachMessagePayload) => Promise<void> {
  const keyOf = options.key ?? offsetKey;
  const { store, onOutcome } = options;
  return async (payload) => {
    const key = checkKey(keyOf(payload.message), payload.message);
    const outcome = await store.runOnce(key, async (tx) => {
      await handler({ ...payload, key, tx });
    });
    onOutcome?.(outcome, key, payload);
  };
}
