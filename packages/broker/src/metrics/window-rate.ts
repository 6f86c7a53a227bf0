/**
 * A counter and a rate per key over fixed windows: `total(k)` is everything
 * added (a Prometheus counter), `rate(k)` the amount added during the last
 * complete window, per second (what `mq topic describe` shows as a
 * partition's produce rate). One map lookup per add, no timer: a key's
 * windows roll when it is next touched.
 */
export const DEFAULT_RATE_WINDOW_MS = 10_000;

interface Windows {
  total: number;
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
    w.total += amount;
  }

  /** Every key with its total. */
  *totals(): IterableIterator<[string, number]> {
    for (const [k, w] of this.#windows) yield [k, w.total];
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
    if (!w) this.#windows.set(key, (w = { total: 0, start, current: 0, previous: 0 }));
    else if (start !== w.start) {
      // The window just ended becomes the previous one; after a whole idle window, nothing was added.
      w.previous = start - w.start === this.windowMs ? w.current : 0;
      w.current = 0;
      w.start = start;
    }
    return w;
  }
}
