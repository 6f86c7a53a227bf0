/**
 * The rate a quota is measured on: a token bucket (Kafka's KIP-599
 * `TokenBucket`, which it chose over its sampled rate for the controller
 * mutation quota because a sampled rate lets a burst through and then
 * starves the client until the burst's samples expire). Credit grows at the
 * quota per second up to a burst of the quota times the quota window
 * (quota.window.num x quota.window.size.seconds, Kafka's burst); every
 * request takes its amount, and a client in debt waits debt / quota. A client
 * that honours the wait gets exactly its quota once its burst is spent,
 * without oscillating. O(1), no allocation.
 */
export class QuotaBucket {
  private credit: number | undefined;
  private last: number;
  /** When a value was last recorded (for forgetting idle buckets). */
  lastRecordMs: number;

  constructor(now: number) {
    this.last = now;
    this.lastRecordMs = now;
  }

  /**
   * Takes `amount` at `now` under `quota` (per second) with `windowMs` of
   * burst; returns how long the client must wait (0: within its quota),
   * at most `windowMs` per answer (a larger debt is paid over several).
   */
  record(amount: number, quota: number, windowMs: number, now: number): number {
    const burst = (quota * windowMs) / 1000;
    const elapsed = Math.max(0, now - this.last);
    this.credit = Math.min(burst, this.credit === undefined ? burst : this.credit + (elapsed / 1000) * quota);
    this.last = now;
    this.lastRecordMs = now;
    this.credit -= amount;
    if (this.credit >= 0) return 0;
    return Math.min(Math.ceil((-this.credit / quota) * 1000), windowMs);
  }

  /** The credit left after the last record (negative: debt). */
  get balance(): number {
    return this.credit ?? 0;
  }
}
