import { MqError } from '@mq/protocol/errors';
import { collectEnvironment, type BenchEnvironment } from '../env.js';

/** What every workload is given besides its options. */
export interface WorkloadContext {
  /** Progress lines (default stderr); null for none. */
  progress?: NodeJS.WritableStream | null;
  progressIntervalMs?: number;
  /** Environment to report; collected when absent. */
  environment?: BenchEnvironment;
  /** Stops a duration run early, or aborts any run. */
  signal?: AbortSignal;
}

export function environmentOf(ctx: WorkloadContext): BenchEnvironment {
  return ctx.environment ?? collectEnvironment();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves with `work`, or rejects with REQUEST_TIMED_OUT after `ms` (the timer is cleared either way). */
export async function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new MqError('REQUEST_TIMED_OUT', `${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
