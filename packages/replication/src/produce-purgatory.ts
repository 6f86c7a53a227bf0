/**
 * acks=all produces waiting for the high watermark to pass their last offset
 * (Kafka's DelayedProduce purgatory). Bounded: a full purgatory refuses new
 * waiters instead of growing. Each waiter has a deadline on the injected
 * timers and an optional AbortSignal; listeners are always removed.
 */
import { MqError } from '@mq/protocol/errors';
import type { TimerHandle, Timers } from '@mq/protocol/components';

interface Waiter {
  lastOffset: number;
  resolve: () => void;
  reject: (err: unknown) => void;
  timer: TimerHandle | undefined;
  cleanup: () => void;
}

export interface ProducePurgatoryOptions {
  maxWaiters: number;
  /** Names the partition in error messages. */
  name: string;
}

export class ProducePurgatory {
  readonly #timers: Timers;
  readonly #options: ProducePurgatoryOptions;
  /** Sorted by lastOffset (appends arrive in offset order; inserts keep the order anyway). */
  readonly #waiters: Waiter[] = [];

  constructor(options: ProducePurgatoryOptions, timers: Timers) {
    this.#options = options;
    this.#timers = timers;
  }

  get size(): number {
    return this.#waiters.length;
  }

  get full(): boolean {
    return this.#waiters.length >= this.#options.maxWaiters;
  }

  /**
   * Waits until {@link complete} is called with a high watermark above
   * `lastOffset`. Rejects with REQUEST_TIMED_OUT after `timeoutMs`, with the
   * signal's reason when aborted.
   */
  wait(lastOffset: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (this.full) {
      return Promise.reject(
        new MqError(
          'REQUEST_TIMED_OUT',
          `${this.#options.name}: ${this.#waiters.length} acks=all produces are already waiting for replication (the limit); retry later`,
          { retriable: true },
        ),
      );
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        lastOffset,
        resolve,
        reject,
        timer: undefined,
        cleanup: () => {
          if (waiter.timer !== undefined) this.#timers.clearTimeout(waiter.timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      const onAbort = (): void => {
        this.#remove(waiter);
        waiter.cleanup();
        reject(signal?.reason);
      };
      waiter.timer = this.#timers.setTimeout(() => {
        this.#remove(waiter);
        waiter.cleanup();
        reject(
          new MqError(
            'REQUEST_TIMED_OUT',
            `${this.#options.name}: offset ${lastOffset} was not replicated to the ISR within ${timeoutMs} ms ` +
              '(the records are in the leader\'s log and may still be committed)',
            { lastOffset, timeoutMs },
          ),
        );
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#insert(waiter);
    });
  }

  /**
   * Settles every waiter whose last offset is below `highWatermark`: resolved
   * when `failure` is undefined, else rejected with `failure()`.
   */
  complete(highWatermark: number, failure?: () => Error): void {
    let n = 0;
    while (n < this.#waiters.length && this.#waiters[n]!.lastOffset < highWatermark) n++;
    if (n === 0) return;
    const done = this.#waiters.splice(0, n);
    for (const w of done) {
      w.cleanup();
      if (failure) w.reject(failure());
      else w.resolve();
    }
  }

  /** Rejects every waiter (leadership lost, partition closed). */
  failAll(error: () => Error): void {
    const all = this.#waiters.splice(0);
    for (const w of all) {
      w.cleanup();
      w.reject(error());
    }
  }

  #insert(waiter: Waiter): void {
    let i = this.#waiters.length;
    while (i > 0 && this.#waiters[i - 1]!.lastOffset > waiter.lastOffset) i--;
    this.#waiters.splice(i, 0, waiter);
  }

  #remove(waiter: Waiter): void {
    const i = this.#waiters.indexOf(waiter);
    if (i >= 0) this.#waiters.splice(i, 1);
  }
}
