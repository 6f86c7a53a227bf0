/**
 * Time for the group member comes in through these components, so tests and
 * simulations drive it deterministically (the same shape as the broker's).
 */
export type Clock = () => number;

export type TimerHandle = object;

export interface Timers {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemTimers: Timers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Manual time for tests: timers fire, in deadline order, only inside `advance()`. */
export class ManualTime implements Timers {
  private nowMs: number;
  private seq = 0;
  private readonly pending = new Map<object, { at: number; seq: number; fn: () => void }>();

  constructor(start = 1_000_000) {
    this.nowMs = start;
  }

  readonly clock: Clock = () => this.nowMs;

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.pending.set(handle, { at: this.nowMs + Math.max(0, ms), seq: this.seq++, fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle);
  }

  get armed(): number {
    return this.pending.size;
  }

  advance(ms: number): void {
    const target = this.nowMs + ms;
    for (;;) {
      let next: [object, { at: number; seq: number; fn: () => void }] | undefined;
      for (const entry of this.pending) {
        if (entry[1].at > target) continue;
        if (!next || entry[1].at < next[1].at || (entry[1].at === next[1].at && entry[1].seq < next[1].seq)) next = entry;
      }
      if (!next) break;
      this.pending.delete(next[0]);
      this.nowMs = Math.max(this.nowMs, next[1].at);
      next[1].fn();
    }
    this.nowMs = target;
  }
}
