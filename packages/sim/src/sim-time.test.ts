import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from '@jest/globals';
import { Rng } from '@mq/consensus/sim';
import { SimTime } from './sim-time.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Collects garbage, letting finalizers run in between. */
async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await new Promise<void>((resolve) => setImmediate(resolve));
    gc();
  }
}

describe('SimTime.install', () => {
  it("AbortSignal.any aborts with its source, with the same reason, after the source's own listeners", () => {
    const time = new SimTime(new Rng(1));
    const uninstall = time.install();
    try {
      const a = new AbortController();
      const b = new AbortController();
      const seen: string[] = [];
      const combined = AbortSignal.any([a.signal, b.signal]);
      combined.addEventListener('abort', () => seen.push(`combined ${String(combined.reason)}`));
      a.signal.addEventListener('abort', () => seen.push('source'));
      a.abort('gone');
      expect(combined.aborted).toBe(true);
      expect(combined.reason).toBe('gone');
      expect(seen).toEqual(['source', 'combined gone']);
      expect(AbortSignal.any([a.signal]).aborted).toBe(true);
    } finally {
      uninstall();
    }
  });

  it('regression: a combined signal with a listener and sources that never abort does not outlive the run (it kept a whole seed alive)', async () => {
    const time = new SimTime(new Rng(1));
    const uninstall = time.install();
    let held: WeakRef<object>;
    try {
      // As a crashed broker's per-connection fetch signal: its connection never closes, a long poll still listens.
      (() => {
        const world = { heap: new Array(1000).fill(0) };
        held = new WeakRef(world);
        const combined = AbortSignal.any([new AbortController().signal, new AbortController().signal]);
        combined.addEventListener('abort', () => world.heap.push(1));
      })();
    } finally {
      uninstall();
    }
    await collect();
    expect(held!.deref()).toBeUndefined();
  });

  it('regression (sim seed 128 at 60 s): Date.now() and the injected clock stay whole milliseconds when a timer delay is fractional; performance.now() keeps the fraction', async () => {
    const time = new SimTime(new Rng(1));
    const uninstall = time.install();
    const seen: { date: number; clock: number; perf: number }[] = [];
    try {
      // A fractional delay (a jittered backoff): the simulated time goes to .5 of a millisecond.
      setTimeout(() => seen.push({ date: Date.now(), clock: time.clock(), perf: performance.now() }), 2.5);
      await time.run(10);
    } finally {
      uninstall();
    }
    expect(seen).toHaveLength(1);
    const [{ date, clock, perf }] = seen as [{ date: number; clock: number; perf: number }];
    // A transaction marker stamped with a fractional Date.now() was refused INVALID_TIMESTAMP on every retry.
    expect(Number.isSafeInteger(date)).toBe(true);
    expect(Number.isSafeInteger(clock)).toBe(true);
    expect(date).toBe(clock);
    expect(perf).toBe(2.5);
  });
});
