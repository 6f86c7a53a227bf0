/**
 * The one retry policy of the client: exponential backoff with jitter and a
 * cap, a bail-out, and never a retry of a programmer error. Requests retry
 * through `retry()`; the producer's batch retries and the consumer's fetch
 * backoff use the same `shouldRetry()` / `delayMs()` so every path backs off
 * the same way.
 */
import { MqError, isMqError } from '@mq/protocol/errors';

export interface RetryOptions {
  /** Retries after the first attempt (default 5). */
  retries?: number;
  /** First backoff in ms (default 100). */
  initialDelayMs?: number;
  /** Cap on one backoff in ms (default 10000). */
  maxDelayMs?: number;
  /** Growth per attempt (default 2). */
  multiplier?: number;
  /** Random spread around the delay, 0..1 (default 0.2: ±20 %). */
  jitter?: number;
}

export const DEFAULT_RETRIES = 5;
export const DEFAULT_INITIAL_DELAY_MS = 100;
export const DEFAULT_MAX_DELAY_MS = 10_000;
export const DEFAULT_MULTIPLIER = 2;
export const DEFAULT_JITTER = 0.2;

export type ParsedRetryOptions = Required<RetryOptions>;

export function parseRetryOptions(options: RetryOptions = {}): ParsedRetryOptions {
  const o: ParsedRetryOptions = {
    retries: options.retries ?? DEFAULT_RETRIES,
    initialDelayMs: options.initialDelayMs ?? DEFAULT_INITIAL_DELAY_MS,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
    multiplier: options.multiplier ?? DEFAULT_MULTIPLIER,
    jitter: options.jitter ?? DEFAULT_JITTER,
  };
  if (!Number.isInteger(o.retries) || o.retries < 0) throw invalid(`retries must be an integer >= 0, got ${o.retries}`);
  if (!(o.initialDelayMs >= 0)) throw invalid(`initialDelayMs must be >= 0, got ${o.initialDelayMs}`);
  if (!(o.maxDelayMs >= o.initialDelayMs)) {
    throw invalid(`maxDelayMs (${o.maxDelayMs}) must be >= initialDelayMs (${o.initialDelayMs})`);
  }
  if (!(o.multiplier >= 1)) throw invalid(`multiplier must be >= 1, got ${o.multiplier}`);
  if (!(o.jitter >= 0 && o.jitter <= 1)) throw invalid(`jitter must be within 0..1, got ${o.jitter}`);
  return o;
}

function invalid(message: string): MqError {
  return new MqError('INVALID_ARGUMENT', message);
}

export interface RetrierComponents {
  /** Sleep that honours an AbortSignal (default: timers). */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  random?: () => number;
}

export interface RetryContext {
  /** 0 for the first attempt. */
  attempt: number;
  /** Stops retrying: the error is thrown as is. */
  bail(err: unknown): never;
}

export interface RunOptions {
  signal?: AbortSignal;
  /** Called before each backoff, e.g. to refresh metadata after NOT_LEADER. */
  onRetry?: (err: MqError, attempt: number, delayMs: number) => void | Promise<void>;
}

class Bail {
  constructor(readonly err: unknown) {}
}

/** True for errors that reflect a bug in the caller: never retried. */
export function isProgrammerError(err: unknown): boolean {
  return err instanceof TypeError || err instanceof RangeError || err instanceof ReferenceError || err instanceof SyntaxError;
}

export class Retrier {
  readonly options: ParsedRetryOptions;
  private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  private readonly random: () => number;

  constructor(options: RetryOptions = {}, components: RetrierComponents = {}) {
    this.options = parseRetryOptions(options);
    this.sleep = components.sleep ?? abortableSleep;
    this.random = components.random ?? Math.random;
  }

  /** Whether `err` after `attempt` failed attempts (0-based) deserves another try. */
  shouldRetry(err: unknown, attempt: number): err is MqError {
    if (attempt >= this.options.retries) return false;
    if (isProgrammerError(err)) return false;
    return isMqError(err) && err.retriable;
  }

  /** Backoff before retry number `attempt + 1`: exponential, capped, with jitter. */
  delayMs(attempt: number): number {
    const { initialDelayMs, multiplier, maxDelayMs, jitter } = this.options;
    const base = Math.min(maxDelayMs, initialDelayMs * multiplier ** attempt);
    const spread = base * jitter * (this.random() * 2 - 1);
    return Math.max(0, Math.min(maxDelayMs, Math.round(base + spread)));
  }

  /** Runs `fn` until it succeeds, bails, fails with a non-retriable error or runs out of retries. */
  async run<T>(fn: (ctx: RetryContext) => Promise<T>, options: RunOptions = {}): Promise<T> {
    const bail = (err: unknown): never => {
      throw new Bail(err);
    };
    for (let attempt = 0; ; attempt++) {
      options.signal?.throwIfAborted();
      try {
        return await fn({ attempt, bail });
      } catch (err) {
        if (err instanceof Bail) throw err.err;
        if (options.signal?.aborted || !this.shouldRetry(err, attempt)) throw err;
        const delay = this.delayMs(attempt);
        await options.onRetry?.(err, attempt, delay);
        await this.sleep(delay, options.signal);
      }
    }
  }
}

/** setTimeout as a promise that rejects with ABORTED when the signal fires; cleans its listener up. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** The error an aborted operation rejects with: the signal's reason when it is an MqError, else ABORTED. */
export function abortError(signal: AbortSignal): MqError {
  const reason: unknown = signal.reason;
  if (isMqError(reason)) return reason;
  return new MqError('ABORTED', 'the operation was aborted', { cause: reason });
}
