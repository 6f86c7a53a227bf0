/**
 * The Redis store: `SET key processing:<token> NX PX lease` claims a key
 * before the effect, `SET key done PX ttl` marks it after. An effect outside
 * Redis cannot be atomic with the mark, so there is a window: a consumer
 * killed after the effect and before the mark leaves the claim to expire, and
 * the record, delivered again, runs its effect again. The effect then happens
 * at least once and usually once; never zero times (a claim that is never
 * marked expires and is taken again). Use it for effects that are themselves
 * idempotent or tolerate that window; for exactly once, keep the effect and
 * the key in one PostgreSQL transaction (PostgresStore).
 *
 * A delivery that finds a live claim (another consumer, or one that crashed
 * until its lease expires) waits for it to be marked done (a duplicate) or
 * released.
 *
 * The store does not import a Redis client: it takes `sendCommand(args)` as
 * node-redis has it (for ioredis: `{ sendCommand: (a) => redis.call(a[0], ...a.slice(1)) }`).
 */
import { randomUUID } from 'node:crypto';
import { MqError } from '@mq/protocol/errors';
import { sleep, systemTimers, type Timers } from '@mq/protocol/components';
import type { IdempotencyStore, Outcome } from '../store.js';

export interface RedisLike {
  sendCommand(args: string[]): Promise<unknown>;
}

/** How long a processed key is remembered: 7 days (Kafka's default retention). */
export const DEFAULT_REDIS_TTL_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a claim holds before another delivery may take it: 30 s (must exceed the effect's duration). */
export const DEFAULT_REDIS_LEASE_MS = 30_000;
const DEFAULT_PREFIX = 'mq:idem:';
const POLL_MS = 50;

/** Deletes the key only if it still holds this delivery's claim. */
const RELEASE_SCRIPT = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

export interface RedisStoreOptions {
  redis: RedisLike;
  /** Whose effects these keys are (usually the consumer group id). */
  scope: string;
  /** Key prefix; default `mq:idem:` (keys are `<prefix><scope>:<key>`). */
  prefix?: string;
  /** How long a processed key is remembered (ms); default 7 days. */
  ttlMs?: number;
  /** How long a claim lasts (ms) before another delivery may take it; default 30 s. */
  leaseMs?: number;
  timers?: Timers;
}

function positive(name: string, v: number | undefined, dflt: number): number {
  const n = v ?? dflt;
  if (!Number.isSafeInteger(n) || n < 1) throw new MqError('INVALID_ARGUMENT', `${name} must be an integer >= 1 (ms), got ${String(v)}`);
  return n;
}

export class RedisStore implements IdempotencyStore<void> {
  readonly kind = 'redis';
  private readonly redis: RedisLike;
  private readonly prefix: string;
  private readonly ttlMs: number;
  private readonly leaseMs: number;
  private readonly timers: Timers;

  constructor(options: RedisStoreOptions) {
    if (typeof options.scope !== 'string' || options.scope === '') throw new MqError('INVALID_ARGUMENT', 'scope must be a non-empty string (usually the consumer group id)');
    this.redis = options.redis;
    this.prefix = `${options.prefix ?? DEFAULT_PREFIX}${options.scope}:`;
    this.ttlMs = positive('ttlMs', options.ttlMs, DEFAULT_REDIS_TTL_MS);
    this.leaseMs = positive('leaseMs', options.leaseMs, DEFAULT_REDIS_LEASE_MS);
    this.timers = options.timers ?? systemTimers;
  }

  async runOnce(key: string, effect: (tx: void) => Promise<void>): Promise<Outcome> {
    const k = this.prefix + key;
    const claim = `processing:${randomUUID()}`;
    for (;;) {
      if ((await this.redis.sendCommand(['SET', k, claim, 'NX', 'PX', String(this.leaseMs)])) === 'OK') break;
      const held = await this.redis.sendCommand(['GET', k]);
      if (held === 'done') return 'duplicate';
      if (held !== null) await sleep(this.timers, POLL_MS); // claimed elsewhere: wait for done, release or expiry
    }
    try {
      await effect(undefined);
    } catch (err) {
      await this.redis.sendCommand(['EVAL', RELEASE_SCRIPT, '1', k, claim]).catch(() => undefined); // else it expires
      throw err;
    }
    await this.redis.sendCommand(['SET', k, 'done', 'PX', String(this.ttlMs)]);
    return 'processed';
  }
}
