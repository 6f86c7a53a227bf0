/**
 * Client quotas on one broker (Kafka's ClientQuotaManager, KIP-13/KIP-219):
 * each request's bytes (produce: the record bytes it carries; fetch: the
 * record bytes answered) and the request itself are recorded on the rate of
 * the quota that applies to its user and client id (entity.ts), and when that
 * rate is over the quota (token-bucket.ts) the answer carries how long to wait (`throttleMs`),
 * for which the connection reads nothing more. Nothing is refused.
 *
 * O(1) per request: the quotas that apply to a (user, client id) pair are
 * resolved once per change of the quotas in the metadata and cached; a rate is
 * one token bucket per matched entity. With no quota configured nothing is
 * recorded at all.
 */
import type { Logger } from 'pino';
import { Counter, type Registry } from 'prom-client';
import { entityName, resolveQuota, type QuotaKey, type QuotaValues, type ResolvedQuota } from './entity.js';
import type { QuotaOptions } from './options.js';
import { QuotaBucket } from './token-bucket.js';

/** Where the quotas come from (the metadata state): a version that changes with them, and a lookup by entity key. */
export interface QuotaSource {
  readonly quotasVersion: number;
  readonly quotaCount: number;
  quotaValues(entityKey: string): QuotaValues | undefined;
}

/** Cached resolutions and rates beyond which idle ones are forgotten. */
const MAX_CACHED = 10_000;

interface Resolved {
  version: number;
  byKey: Record<QuotaKey, ResolvedQuota | undefined>;
}

export interface QuotaManagerComponents {
  clock: () => number;
  source: QuotaSource;
  logger: Logger;
  /** Where the quota metrics are registered (absent: none). */
  registry?: Registry;
}

export class QuotaManager {
  private readonly resolved = new Map<string, Resolved>();
  private readonly rates = new Map<string, QuotaBucket>();
  /** When idle rates were last looked for (once per quota window at most). */
  private lastForgetMs = -Infinity;
  /** Throttle time given, in ms, and responses throttled, by quota key. */
  readonly throttleMsTotal: Record<QuotaKey, number> = { producer_byte_rate: 0, consumer_byte_rate: 0, request_rate: 0 };
  readonly throttledTotal: Record<QuotaKey, number> = { producer_byte_rate: 0, consumer_byte_rate: 0, request_rate: 0 };
  /** Amounts recorded per quota key and bucket (entities under a quota only). */
  private readonly recorded = new Map<string, { key: QuotaKey; entity: string; amount: number }>();

  constructor(
    private readonly options: QuotaOptions,
    private readonly components: QuotaManagerComponents,
  ) {
    if (components.registry) this.registerMetrics(components.registry);
  }

  /** Registers the quota metrics (mq_quota_*) in `r`. */
  registerMetrics(r: Registry): void {
    const throttleMs = this.throttleMsTotal;
    const throttled = this.throttledTotal;
    const recorded = this.recorded;
    new Counter({
      name: 'mq_quota_throttle_time_seconds_total',
      help: 'Throttle time given to clients over a quota (the answer carried it and the connection read nothing for that long), by quota key.',
      labelNames: ['quota'],
      registers: [r],
      collect() {
        this.reset();
        for (const [k, ms] of Object.entries(throttleMs)) this.inc({ quota: k }, ms / 1000);
      },
    });
    new Counter({
      name: 'mq_quota_throttled_responses_total',
      help: 'Responses that carried a throttle time, by quota key.',
      labelNames: ['quota'],
      registers: [r],
      collect() {
        this.reset();
        for (const [k, n] of Object.entries(throttled)) this.inc({ quota: k }, n);
      },
    });
    new Counter({
      name: 'mq_quota_recorded_total',
      help: 'Bytes (producer_byte_rate, consumer_byte_rate) or requests (request_rate) recorded against a quota, by quota key and matched entity.',
      labelNames: ['quota', 'entity'],
      registers: [r],
      collect() {
        this.reset();
        for (const v of recorded.values()) this.inc({ quota: v.key, entity: v.entity }, v.amount);
      },
    });
  }

  /** Whether any quota exists (with none, doors skip recording entirely). */
  get active(): boolean {
    return this.components.source.quotaCount > 0;
  }

  /**
   * Records `amount` on `key` for a request of `user` (undefined: not
   * authenticated) and `clientId`; returns how long the client must wait
   * (0: within its quota, or no quota applies).
   */
  record(user: string | undefined, clientId: string, key: QuotaKey, amount: number): number {
    const quota = this.quotaFor(user, clientId)[key];
    if (!quota) return 0;
    const now = this.components.clock();
    const id = `${key}\u0000${quota.bucket}`;
    let rate = this.rates.get(id);
    if (!rate) {
      if (this.rates.size >= MAX_CACHED) {
        // At most one scan for idle rates per window (not one per new rate); then, if none was idle, the oldest goes:
        // the rates stay bounded whatever the number of client ids.
        const window = this.options.samples * this.options.sampleMs;
        if (now - this.lastForgetMs >= window) {
          this.lastForgetMs = now;
          this.forgetIdle(now);
        }
        if (this.rates.size >= MAX_CACHED) this.rates.delete(this.rates.keys().next().value!);
      }
      rate = new QuotaBucket(now);
      this.rates.set(id, rate);
    }
    const ms = rate.record(amount, quota.limit, this.options.samples * this.options.sampleMs, now);
    let seen = this.recorded.get(id);
    if (!seen) {
      seen = { key, entity: entityName(quota.entity), amount: 0 };
      if (this.recorded.size < MAX_CACHED) this.recorded.set(id, seen);
    }
    seen.amount += amount;
    if (ms > 0) {
      this.throttleMsTotal[key] += ms;
      this.throttledTotal[key]++;
    }
    return ms;
  }

  /** The quotas that apply to (user, clientId), from the cache while the quotas have not changed. */
  private quotaFor(user: string | undefined, clientId: string): Resolved['byKey'] {
    const source = this.components.source;
    const k = `${user ?? '\u0001'}\u0000${clientId}`;
    const hit = this.resolved.get(k);
    if (hit && hit.version === source.quotasVersion) return hit.byKey;
    if (!hit && this.resolved.size >= MAX_CACHED) this.resolved.clear();
    const lookup = (e: string) => source.quotaValues(e);
    const byKey = {
      producer_byte_rate: resolveQuota(lookup, user, clientId, 'producer_byte_rate'),
      consumer_byte_rate: resolveQuota(lookup, user, clientId, 'consumer_byte_rate'),
      request_rate: resolveQuota(lookup, user, clientId, 'request_rate'),
    };
    this.resolved.set(k, { version: source.quotasVersion, byKey });
    return byKey;
  }

  /** Drops rates with nothing recorded for a whole window. */
  private forgetIdle(now: number): void {
    const window = this.options.samples * this.options.sampleMs;
    for (const [id, r] of this.rates) if (now - r.lastRecordMs > window) this.rates.delete(id);
    this.components.logger.debug({ rates: this.rates.size }, 'quota rates: forgot idle ones');
  }
}
