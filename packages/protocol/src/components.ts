/**
 * The components every long-lived part of mq takes (STYLE.md: "dependencies
 * come in, not out"), declared once for every package: the clock, the timers
 * and the logger. Time comes into distributed logic (Raft, replication, the
 * group coordinator and member, the controller) only through these, so a
 * test or a simulator can drive it deterministically: nothing there reaches
 * for Date.now() or setTimeout directly (a lint rule enforces it).
 */

/** Milliseconds since the epoch. */
export type Clock = () => number;

export type TimerHandle = { readonly __timer: unique symbol } | object;

export interface Timers {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The subset of pino's logger mq uses; a pino.Logger fits. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The wall clock, for production. */
export const systemClock: Clock = () => Date.now();

/**
 * Lets a Node timer not keep the process alive; returns it. Browsers' timers
 * are numbers with nothing to unref, so there it does nothing.
 */
export function unrefTimer<T>(timer: T): T {
  (timer as { unref?: () => void }).unref?.();
  return timer;
}

/** Real timers, for production; unref'd so that a pending timer never keeps a process alive. */
export const systemTimers: Timers = {
  setTimeout(fn, ms) {
    return unrefTimer(setTimeout(fn, ms));
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** Resolves after `ms` on the given timers, or rejects with the signal's reason when aborted. */
export function sleep(timers: Timers, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timers.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * A manual clock with timers for tests and simulation: time moves only when
 * `advance()` is called, and due timers fire in deadline order.
 */
export class ManualTime implements Timers {
  private nowMs: number;
  private seq = 0;
  private readonly pending = new Map<object, { at: number; seq: number; fn: () => void }>();

  constructor(start = 1_000_000) {
    this.nowMs = start;
  }

  readonly clock: Clock = () => this.nowMs;

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.pending.set(handle, { at: this.nowMs + Math.max(0, ms), seq: this.seq++, fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.pending.delete(handle);
  }

  /** Number of armed timers (for leak checks in tests). */
  get armed(): number {
    return this.pending.size;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
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
