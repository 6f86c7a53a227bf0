import { performance } from 'node:perf_hooks';

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes on one host. */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

export function monoMs(): number {
  return performance.now();
}
