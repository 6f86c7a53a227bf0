/**
 * Small helpers for the broker's tests (src/**\/*.test.ts and test/): a free
 * loopback port and a poll-until-true wait. Not part of the published package.
 */
/** A TCP port on 127.0.0.1, below the ephemeral range, that was free a moment ago (see tools/free-port.mjs). */
export { freePort } from '../../../../tools/free-port.mjs';

/** Resolves with fn's first truthy result (so a `T | null` condition yields a `T`). */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
