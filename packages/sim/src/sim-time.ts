/**
 * One simulated clock for the whole cluster. Time moves only when the
 * driver runs the next event; every event runs to completion with all the
 * promise continuations it starts before the next one (the driver waits one
 * real macrotask between events, and nothing else is in the real event loop:
 * no socket, no file, no native thread-pool work).
 *
 * Each simulated process (a broker, a client) runs in its own context
 * (AsyncLocalStorage): a timer, a disk write completing or a message arriving
 * belongs to the process that started it, and when the process crashes, none
 * of its pending events runs again.
 *
 * The injected Clock and Timers components point here. Code on the request
 * path that still reads the wall clock or the global timers (the client, the
 * broker's connection and WebSocket layers) runs on this clock too, because
 * `install()` virtualizes Date.now, performance.now, setTimeout, setInterval,
 * setImmediate, AbortSignal.timeout and Math.random for the run (and makes
 * AbortSignal.any's signals collectable with the run: see detachedAny), and
 * restores them after.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { EventQueue, type Rng, type SimEvent } from '@mq/consensus/sim';
import type { Clock, TimerHandle, Timers } from '@mq/protocol/components';

/** A simulated process: its events run only while it is alive. */
export interface SimProcess {
  readonly name: string;
  alive: boolean;
}

interface Ev extends SimEvent {
  owner: SimProcess | undefined;
  cancelled: boolean;
  /** setInterval's period. */
  every?: number;
}

const realSetImmediate = globalThis.setImmediate;

/** Start of simulated time: 2026-01-01T00:00:00Z. */
export const SIM_EPOCH_MS = Date.UTC(2026, 0, 1);

class SimTimer {
  constructor(readonly ev: Ev) {}
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return false;
  }
  [Symbol.toPrimitive](): number {
    return this.ev.seq;
  }
}

export class SimTime implements Timers {
  private nowMs = SIM_EPOCH_MS;
  private seq = 0;
  private readonly queue = new EventQueue<Ev>();
  private readonly als = new AsyncLocalStorage<SimProcess>();
  events = 0;

  constructor(private readonly rng: Rng) {}

  /**
   * The wall clock the brokers are given, and `Date.now()` once installed: whole milliseconds, as a real
   * `Date.now()` (the simulated time itself goes fractional, since timer delays keep their fractions; a record
   * stamped with 1767225692400.5 is refused INVALID_TIMESTAMP). `performance.now()` keeps the fraction, as Node's.
   */
  readonly clock: Clock = () => Math.floor(this.nowMs);

  /** The simulated time itself, fractional (what the simulator schedules on). */
  now(): number {
    return this.nowMs;
  }

  /** Milliseconds since the simulation started. */
  elapsed(): number {
    return this.nowMs - SIM_EPOCH_MS;
  }

  /** The process the calling code runs in (undefined: the harness). */
  current(): SimProcess | undefined {
    return this.als.getStore();
  }

  /** Runs `fn` (and everything it schedules) as `process`. */
  within<T>(process: SimProcess, fn: () => T): T {
    return this.als.run(process, fn);
  }

  /** Schedules `fn` in `ms` simulated ms, owned by `owner` (default: the calling process). */
  schedule(ms: number, fn: () => void, owner: SimProcess | undefined = this.als.getStore()): SimTimer {
    const ev: Ev = { at: this.nowMs + Math.max(0, Number.isFinite(ms) ? ms : 0), seq: this.seq++, fn, owner, cancelled: false };
    this.queue.push(ev);
    return new SimTimer(ev);
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.schedule(ms, fn);
  }

  clearTimeout(handle: TimerHandle): void {
    if (handle instanceof SimTimer) handle.ev.cancelled = true;
  }

  /** Resolves after `ms` (never, when the calling process crashes first). */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.schedule(ms, resolve));
  }

  /** Moves the clock by `ms` without running anything (a clock jump); never backwards past an event already due. */
  jump(ms: number): void {
    this.nowMs += ms;
  }

  /**
   * Runs events until simulated time reaches `untilMs` (elapsed) or
   * `stop()` says so. Returns false when no event was left.
   */
  async run(untilMs: number, stop: () => boolean = () => false): Promise<boolean> {
    for (;;) {
      await new Promise<void>((r) => realSetImmediate(r));
      if (stop()) return true;
      const ev = this.queue.peek();
      if (!ev) return false;
      if (ev.at - SIM_EPOCH_MS > untilMs) {
        this.nowMs = Math.max(this.nowMs, SIM_EPOCH_MS + untilMs);
        return true;
      }
      this.queue.pop();
      if (ev.cancelled || (ev.owner && !ev.owner.alive)) continue;
      this.nowMs = Math.max(this.nowMs, ev.at);
      this.events++;
      if (ev.every !== undefined) {
        ev.at = this.nowMs + ev.every;
        ev.seq = this.seq++;
        this.queue.push(ev);
      }
      if (ev.owner) this.als.run(ev.owner, ev.fn);
      else ev.fn();
    }
  }

  /**
   * Points the process's time and randomness at this simulation: Date.now,
   * performance.now, setTimeout/clearTimeout, setInterval/clearInterval,
   * setImmediate/clearImmediate, AbortSignal.timeout and Math.random (and
   * AbortSignal.any, see detachedAny). Returns the undo.
   */
  install(): () => void {
    const g = globalThis as unknown as Record<string, unknown>;
    const saved = {
      setTimeout: g.setTimeout,
      clearTimeout: g.clearTimeout,
      setInterval: g.setInterval,
      clearInterval: g.clearInterval,
      setImmediate: g.setImmediate,
      clearImmediate: g.clearImmediate,
      dateNow: Date.now,
      perfNow: Object.getOwnPropertyDescriptor(performance, 'now'),
      random: Math.random,
      abortTimeout: AbortSignal.timeout,
      abortAny: AbortSignal.any,
    };
    const clear = (h: unknown): void => {
      if (h instanceof SimTimer) h.ev.cancelled = true;
    };
    g.setTimeout = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => this.schedule(ms ?? 0, () => fn(...args));
    g.clearTimeout = clear;
    g.setInterval = (fn: (...a: unknown[]) => void, ms?: number, ...args: unknown[]) => {
      const t = this.schedule(Math.max(1, ms ?? 1), () => fn(...args));
      t.ev.every = Math.max(1, ms ?? 1);
      return t;
    };
    g.clearInterval = clear;
    g.setImmediate = (fn: (...a: unknown[]) => void, ...args: unknown[]) => this.schedule(0, () => fn(...args));
    g.clearImmediate = clear;
    Date.now = this.clock;
    Object.defineProperty(performance, 'now', { value: () => this.nowMs - SIM_EPOCH_MS, configurable: true, writable: true });
    Math.random = () => this.rng.next();
    // AbortSignal.timeout runs on Node's internal timers, not the global setTimeout: left alone, it fires in real
    // time, so how far the simulated clock got by then depends on the machine's speed (a seed would not replay).
    AbortSignal.timeout = (ms: number): AbortSignal => {
      const ac = new AbortController();
      this.schedule(ms, () => ac.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')));
      return ac.signal;
    };
    AbortSignal.any = detachedAny(saved.abortAny);
    return () => {
      g.setTimeout = saved.setTimeout;
      g.clearTimeout = saved.clearTimeout;
      g.setInterval = saved.setInterval;
      g.clearInterval = saved.clearInterval;
      g.setImmediate = saved.setImmediate;
      g.clearImmediate = saved.clearImmediate;
      Date.now = saved.dateNow;
      if (saved.perfNow) Object.defineProperty(performance, 'now', saved.perfNow);
      else delete (performance as unknown as Record<string, unknown>).now;
      Math.random = saved.random;
      AbortSignal.timeout = saved.abortTimeout;
      AbortSignal.any = saved.abortAny;
    };
  }
}

/** Removes the forwarding listener of a combined signal nobody holds any more (see detachedAny). */
const combinedGone = new FinalizationRegistry<() => void>((detach) => detach());
/** The controller of each signal detachedAny returned (kept as long as its signal is). */
const combinedControllers = new WeakMap<AbortSignal, AbortController>();

/**
 * AbortSignal.any whose signal is not kept alive by Node while it has abort listeners and its sources have not
 * aborted. Node holds such a combined signal in a process-wide set (so that it is not collected while it can still
 * abort); a simulated process never closes its connections when it crashes or when the run ends, so every combined
 * signal with a listener still attached (the broker's per-connection fetch signal with a parked long poll) kept that
 * process's whole heap, clock and disks alive for the rest of the Node process: 8-13 MB per seed, found as heap
 * growth across seeds (a 1,000-seed run would run out of heap). Here Node's combined signal forwards its abort, with
 * the same reason and at the same moment (after its sources' own listeners), to a plain signal that is what the
 * caller gets and listens on; the combined one only holds a WeakRef to it, and its one listener is removed once the
 * plain signal is collected.
 */
function detachedAny(any: typeof AbortSignal.any): typeof AbortSignal.any {
  return (signals: AbortSignal[]): AbortSignal => {
    const combined = any(signals);
    if (combined.aborted) return combined;
    const controller = new AbortController();
    combinedControllers.set(controller.signal, controller);
    const ref = new WeakRef(controller.signal);
    const forward = (): void => {
      const signal = ref.deref();
      if (!signal) return;
      combinedGone.unregister(signal);
      combinedControllers.get(signal)?.abort(combined.reason);
    };
    combined.addEventListener('abort', forward, { once: true });
    combinedGone.register(controller.signal, () => combined.removeEventListener('abort', forward), controller.signal);
    return controller.signal;
  };
}
