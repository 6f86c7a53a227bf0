/**
 * The replication throttle's token bucket (Kafka's
 * leader/follower.replication.throttled.rate): throttled traffic together
 * moves at most `rate` bytes per second on average, with one second of
 * burst. What is sent is taken after the fact, so the bucket may go into
 * debt; throttled traffic waits until the debt is paid. 0: no limit. One
 * bucket serves a follower's fetcher (what its adding replicas copy) and a
 * leader (what it sends to replicas being added).
 */
export class ThrottleBucket {
  #rate = 0;
  #tokens = 0;
  #at = 0;

  constructor(private readonly clock: () => number) {}

  /** Bytes per second (0: no limit). */
  get rate(): number {
    return this.#rate;
  }

  /** Changes the rate (a non-positive or non-finite one is no limit); true when it changed. */
  setRate(bytesPerSec: number): boolean {
    const rate = Number.isFinite(bytesPerSec) && bytesPerSec > 0 ? Math.floor(bytesPerSec) : 0;
    if (rate === this.#rate) return false;
    this.#refill();
    this.#rate = rate;
    this.#tokens = Math.min(this.#tokens, rate);
    return true;
  }

  /** Milliseconds until throttled traffic may flow again (0: now, or no limit). */
  waitMs(): number {
    if (this.#rate <= 0) return 0;
    this.#refill();
    return this.#tokens > 0 ? 0 : Math.ceil((-this.#tokens * 1000) / this.#rate) + 1;
  }

  /** Counts `bytes` of throttled traffic (no-op without a limit). */
  take(bytes: number): void {
    if (this.#rate <= 0) return;
    this.#refill();
    this.#tokens -= bytes;
  }

  #refill(): void {
    const now = this.clock();
    if (this.#rate > 0) this.#tokens = Math.min(this.#rate, this.#tokens + (this.#rate * Math.max(0, now - this.#at)) / 1000);
    this.#at = now;
  }
}
