/**
 * A rate per key over fixed windows: `rate(k)` is the amount added during the
 * last complete window, per second (what `mq topic describe` shows as a
 * partition's produce rate). O(1) per add, no timer: a key's windows roll
 * when it is next touched.
 */
export const DEFAULT_RATE_WINDOW_MS = 10_000;

interface Windows {
  start: number;
  current: number;
  previous: number;
}

export class WindowRate {
  readonly #windows = new Map<string, Windows>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly windowMs = DEFAULT_RATE_WINDOW_MS,
  ) {}

  add(key: string, amount: number): void {
    const w = this.#roll(key, this.now());
    w.current += amount;
  }

  /** Per second, over the last complete window (0 for a key never added to, or idle for a whole window). */
  rate(key: string): number {
    const w = this.#windows.get(key);
    if (!w) return 0;
    return this.#roll(key, this.now()).previous / (this.windowMs / 1000);
  }

  delete(predicate: (key: string) => boolean): void {
    for (const k of [...this.#windows.keys()]) if (predicate(k)) this.#windows.delete(k);
  }

  #roll(key: string, now: number): Windows {
    const start = now - (now % this.windowMs);
    let w = this.#windows.get(key);
    if (!w) this.#windows.set(key, (w = { start, current: 0, previous: 0 }));
    else if (start !== w.start) {
      // The window just ended becomes the previous one; after a whole idle window, nothing was added.
      w.previous = start - w.start === this.windowMs ? w.current : 0;
      w.current = 0;
      w.start = start;
    }
    return w;
  }
}
