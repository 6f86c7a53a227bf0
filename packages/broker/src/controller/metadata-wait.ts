/**
 * Waiting for this process's metadata to move: the one wait behind "a
 * change committed elsewhere has been applied here" (the admin handlers),
 * "this broker is unfenced" (a sole voter's start) and "the partition may
 * have a new leader" (the HTTP backend's retries).
 */
import type { Timers } from '@mq/protocol/components';

export type MetadataWait = {
  /** Resolve at the first change after which this holds (default: at the first change). */
  until?: () => boolean;
  /** Resolve when this aborts. */
  signal?: AbortSignal;
} & (
  | { timeoutMs?: undefined; timers?: undefined }
  /** Resolve after `timeoutMs` on `timers` even without such a change (default: no limit). */
  | { timeoutMs: number; timers: Timers }
);

/** Resolves (never rejects) at the next metadata change that satisfies `until`, after `timeoutMs`, or when `signal` aborts, and leaves no listener or timer behind. */
export function metadataChange(md: { onChange(fn: () => void): () => void }, o: MetadataWait = {}): Promise<void> {
  return new Promise((resolve) => {
    if (o.signal?.aborted) return resolve();
    const timers = o.timers;
    const timer = timers ? timers.setTimeout(done, o.timeoutMs) : undefined;
    const off = md.onChange(() => {
      if (!o.until || o.until()) done();
    });
    o.signal?.addEventListener('abort', done, { once: true });
    function done() {
      if (timer !== undefined) timers!.clearTimeout(timer);
      off();
      o.signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}
