/**
 * Timer and event callbacks run outside any request, so an exception thrown
 * in one reaches no handler that could answer it, and Node ends the process.
 * Every such callback in the broker runs through `guard`: a failure is one
 * error line naming what failed (a group, a partition, a sweep), and the
 * broker keeps serving everyone else.
 */
import type { TimerHandle, Timers } from '@mq/protocol/components';

/** The logger method a guard needs (pino's and the coordinator's loggers have it). */
export interface ErrorSink {
  error(obj: object, msg?: string): void;
}

/**
 * Wraps a callback: a synchronous throw or a rejected promise it returns is
 * logged at error level with `what` (and the fields of `where`), never rethrown.
 */
export function guard<A extends unknown[]>(
  logger: ErrorSink,
  what: string,
  fn: (...args: A) => unknown,
  where: Record<string, unknown> = {},
): (...args: A) => void {
  const fail = (err: unknown) => {
    try {
      logger.error({ ...where, err }, `${what} failed; the broker keeps serving`);
    } catch {
      // A logger that throws must not end the process either.
    }
  };
  return (...args: A) => {
    try {
      const r = fn(...args);
      if (r !== null && typeof r === 'object' && typeof (r as PromiseLike<unknown>).then === 'function') {
        (r as PromiseLike<unknown>).then(undefined, fail);
      }
    } catch (err) {
      fail(err);
    }
  };
}

/** Timers whose callbacks run guarded (see {@link guard}). */
export function guardTimers(timers: Timers, logger: ErrorSink, what: string): Timers {
  return {
    setTimeout: (fn: () => void, ms: number): TimerHandle => timers.setTimeout(guard(logger, what, fn), ms),
    clearTimeout: (handle: TimerHandle) => timers.clearTimeout(handle),
  };
}

/** A guarded, unref'd interval (retention, cleaner and sweep loops). */
export function guardedInterval(logger: ErrorSink, what: string, fn: () => unknown, ms: number): NodeJS.Timeout {
  const timer = setInterval(guard(logger, what, fn), ms);
  timer.unref();
  return timer;
}
