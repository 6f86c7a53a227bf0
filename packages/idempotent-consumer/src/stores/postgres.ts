/**
 * The PostgreSQL store: the key is inserted in the same database transaction
 * as the effect's own writes (`INSERT ... ON CONFLICT DO NOTHING`), so the
 * effect and the key commit together or not at all. For an effect that is a
 * write into the same database this is exactly once, whatever crashes when:
 * a consumer killed after the commit finds the key on redelivery; one killed
 * before it left neither the key nor the effect. Concurrent deliveries of one
 * key serialise on the key's row: the second waits for the first to commit
 * (then it is a duplicate) or roll back (then it runs).
 *
 * The store does not import `pg`: it takes anything shaped like pg's Pool.
 */
import { MqError } from '@mq/protocol/errors';
import type { IdempotencyStore, Outcome } from '../store.js';

/** What the store needs of a pooled client (pg's PoolClient has it). */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rowCount: number | null }>;
  release(err?: Error | boolean): void;
  /** pg's clients are EventEmitters: a connection lost while checked out emits `error`, which the store catches. */
  on?(event: 'error', listener: (err: Error) => void): unknown;
  off?(event: 'error', listener: (err: Error) => void): unknown;
}

/** What the store needs of a pool (pg's Pool has it). */
export interface PgPoolLike<C extends PgClientLike> {
  connect(): Promise<C>;
}

export const DEFAULT_POSTGRES_TABLE = 'mq_processed_keys';

export interface PostgresStoreOptions<C extends PgClientLike> {
  pool: PgPoolLike<C>;
  /**
   * Whose effects these keys are (usually the consumer group id): two
   * applications that consume the same records keep separate keys.
   */
  scope: string;
  /** Table of processed keys (optionally schema-qualified); default `mq_processed_keys`. Created by `init()`. */
  table?: string;
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}(\.[A-Za-z_][A-Za-z0-9_]{0,62})?$/;

export class PostgresStore<C extends PgClientLike = PgClientLike> implements IdempotencyStore<C> {
  readonly kind = 'postgres';
  readonly table: string;
  readonly scope: string;
  private readonly pool: PgPoolLike<C>;
  private readonly insertSql: string;

  constructor(options: PostgresStoreOptions<C>) {
    const table = options.table ?? DEFAULT_POSTGRES_TABLE;
    if (!IDENTIFIER.test(table)) throw new MqError('INVALID_ARGUMENT', `table must be a plain SQL identifier (schema.table allowed), got "${table}"`);
    if (typeof options.scope !== 'string' || options.scope === '') throw new MqError('INVALID_ARGUMENT', 'scope must be a non-empty string (usually the consumer group id)');
    this.pool = options.pool;
    this.table = table;
    this.scope = options.scope;
    this.insertSql = `INSERT INTO ${table} (scope, key) VALUES ($1, $2) ON CONFLICT DO NOTHING`;
  }

  /** Creates the keys table if it does not exist. */
  async init(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query(
        `CREATE TABLE IF NOT EXISTS ${this.table} (scope text NOT NULL, key text NOT NULL, processed_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (scope, key))`,
      );
    } finally {
      client.release();
    }
  }

  /**
   * Runs `effect(client)` inside a transaction that also records the key; the
   * effect's writes must use that client to commit with the key.
   */
  async runOnce(key: string, effect: (client: C) => Promise<void>): Promise<Outcome> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A connection that dies while checked out emits `error` on the client (pg's pool listens only to idle
    // ones): unheard, that would end the process; the failing query rejects anyway, and the pool drops the client.
    const onError = (err: Error) => (broken = err);
    client.on?.('error', onError);
    try {
      await client.query('BEGIN');
      try {
        const inserted = await client.query(this.insertSql, [this.scope, key]);
        if (inserted.rowCount === 0) {
          await client.query('ROLLBACK');
          return 'duplicate';
        }
        await effect(client);
        await client.query('COMMIT');
        return 'processed';
      } catch (err) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackErr) {
          broken = rollbackErr as Error; // the connection is unusable: the pool drops it
        }
        throw err;
      }
    } finally {
      client.off?.('error', onError);
      client.release(broken);
    }
  }

  /**
   * Forgets keys processed more than `olderThanMs` ago; returns how many.
   * Keep keys longer than any redelivery can come (the topic's retention, or
   * how long an upstream producer may retry).
   */
  async prune(olderThanMs: number): Promise<number> {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) throw new MqError('INVALID_ARGUMENT', `olderThanMs must be >= 0, got ${olderThanMs}`);
    const client = await this.pool.connect();
    try {
      const r = await client.query(`DELETE FROM ${this.table} WHERE scope = $1 AND processed_at < now() - ($2::double precision * interval '1 millisecond')`, [this.scope, olderThanMs]);
      return r.rowCount ?? 0;
    } finally {
      client.release();
    }
  }
}
