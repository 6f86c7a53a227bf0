/**
 * A manual clock and timers: time moves only when a test calls advance(),
 * and timers fire in deadline order, each followed by a settle of pending
 * promise work. Deterministic for code that only waits on promises and these
 * timers (in-memory logs and networks).
 */
import type { TimerHandle, Timers } from '@mq/protocol/components';

interface Pending {
  handle: TimerHandle;
  id: number;
  at: number;
  fn: () => void;
}

/** Lets queued promise callbacks and immediates run (several event-loop turns). */
export async function settle(turns = 5): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualTimers implements Timers {
  #now: number;
  #nextId = 1;
  #pending: Pending[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  /** The clock to inject beside these timers. */
  readonly clock = (): number => this.#now;

  get now(): number {
    return this.#now;
  }

  get pendingCount(): number {
    return this.#pending.length;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const handle = {};
    this.#pending.push({ handle, id: this.#nextId++, at: this.#now + Math.max(0, ms), fn });
    return handle;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#pending = this.#pending.filter((p) => p.handle !== handle);
  }

  /** Moves time forward by `ms`, firing due timers in order and settling after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      let next: Pending | undefined;
      for (const p of this.#pending) if (p.at <= target && (!next || p.at < next.at || (p.at === next.at && p.id < next.id))) next = p;
      if (!next) break;
      this.#pending = this.#pending.filter((p) => p !== next);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}
