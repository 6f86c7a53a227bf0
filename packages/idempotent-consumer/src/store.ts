/**
 * The one contract every idempotency store implements. A store answers one
 * question per record: has the effect for this key already happened? It runs
 * the effect only when it has not, and records the key so that a redelivered
 * record (or a duplicate produced upstream with the same key) is skipped.
 *
 * What "recorded with the effect" means depends on the store, and is the
 * whole point (see the README):
 * - PostgreSQL: the key is inserted in the same database transaction as the
 *   effect's own writes, so both commit or neither does: exactly once, for
 *   effects inside that database.
 * - Redis: the key is claimed before the effect and marked done after it;
 *   an effect outside Redis cannot be atomic with the key, so a crash between
 *   the effect and the mark lets the effect run again (never zero times).
 * - Memory: for tests and single-process pipelines; lost on restart.
 */

/** What `runOnce` did. */
export type Outcome = 'processed' | 'duplicate';

export interface IdempotencyStore<Tx = void> {
  /** A short name for logs and metrics (`postgres`, `redis`, `memory`). */
  readonly kind: string;
  /**
   * Runs `effect` unless `key` was already processed, and records the key.
   * If the effect throws, the key is not recorded (the record can be retried)
   * and the error is rethrown.
   */
  runOnce(key: string, effect: (tx: Tx) => Promise<void>): Promise<Outcome>;
}
