/**
 * The time for hot paths (record create timestamps, metadata freshness)
 * without reading the system clock on every record: the time is read once per synchronous run of sends (invalidated by a
 * microtask) and again every 128 records within a long run, so a timestamp
 * is never more than a fraction of a millisecond old — but a loop of sends
 * does not pay for Date.now() on every record.
 */
const REFRESH_EVERY = 128;

let cached = 0;
let uses = REFRESH_EVERY;
let invalidationQueued = false;

function invalidate(): void {
  uses = REFRESH_EVERY;
  invalidationQueued = false;
}

export function coarseNow(): number {
  if (uses >= REFRESH_EVERY) {
    cached = Date.now();
    uses = 0;
    if (!invalidationQueued) {
      invalidationQueued = true;
      queueMicrotask(invalidate);
    }
  }
  uses++;
  return cached;
}
