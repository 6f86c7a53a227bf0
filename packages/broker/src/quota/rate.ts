/**
 * A windowed rate as Kafka's quota sensors keep it (its `Rate` over
 * `SampledStat`): `samples` samples of `sampleMs` each; a sample starts when
 * the first value after the previous one's end is recorded, and samples older
 * than the whole window are forgotten. The rate is the sum of the live samples
 * over the time since the oldest began, but never over less than
 * `samples - 1` sample lengths (so one early burst does not read as a huge
 * rate). O(samples) per call, no allocation: a constant per request.
 */
export class WindowedRate {
  private readonly starts: Float64Array;
  private readonly values: Float64Array;
  private current = 0;
  /** When a value was last recorded (for forgetting idle rates). */
  lastRecordMs: number;

  constructor(
    readonly samples: number,
    readonly sampleMs: number,
    now: number,
  ) {
    this.starts = new Float64Array(samples).fill(now);
    this.values = new Float64Array(samples);
    this.lastRecordMs = now;
  }

  /** Adds `amount` at `now`. */
  record(amount: number, now: number): void {
    this.purge(now);
    if (now >= this.starts[this.current]! + this.sampleMs) {
      this.current = (this.current + 1) % this.samples;
      this.starts[this.current] = now;
      this.values[this.current] = 0;
    }
    this.values[this.current]! += amount;
    this.lastRecordMs = now;
  }

  /** Per second, at `now`. */
  rate(now: number): number {
    this.purge(now);
    let total = 0;
    let oldest = now;
    for (let i = 0; i < this.samples; i++) {
      total += this.values[i]!;
      if (this.starts[i]! < oldest) oldest = this.starts[i]!;
    }
    return total / (this.windowMs(oldest, now) / 1000);
  }

  /**
   * How long a client over `quota` (per second) must wait so that its rate
   * falls back to the quota (Kafka's `(O - T) / T * W`), capped at the whole
   * window; 0 within the quota.
   */
  throttleMs(quota: number, now: number): number {
    this.purge(now);
    let total = 0;
    let oldest = now;
    for (let i = 0; i < this.samples; i++) {
      total += this.values[i]!;
      if (this.starts[i]! < oldest) oldest = this.starts[i]!;
    }
    const windowMs = this.windowMs(oldest, now);
    const observed = total / (windowMs / 1000);
    if (observed <= quota) return 0;
    return Math.min(Math.round(((observed - quota) / quota) * windowMs), this.samples * this.sampleMs);
  }

  /** The time the rate is measured over: since the oldest live sample began, at least `samples - 1` sample lengths. */
  private windowMs(oldest: number, now: number): number {
    return Math.max(now - oldest, (this.samples - 1) * this.sampleMs, 1);
  }

  /** Forgets samples that began before the whole window (they hold nothing the rate should count). */
  private purge(now: number): void {
    const expired = now - this.samples * this.sampleMs;
    for (let i = 0; i < this.samples; i++) {
      if (this.starts[i]! <= expired) {
        this.values[i] = 0;
        this.starts[i] = now;
      }
    }
  }
}
