import { ManualTime } from '@mq/protocol/components';
import { metadataChange } from './metadata-wait.js';

/** The onChange side of MetadataState, with its listener count. */
function metadata() {
  const listeners = new Set<() => void>();
  return {
    listeners,
    onChange(fn: () => void) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    change() {
      for (const fn of [...listeners]) fn();
    },
  };
}

const flush = () => new Promise<void>((r) => setImmediate(r));

function watch(p: Promise<void>) {
  const s = { done: false };
  void p.then(() => (s.done = true));
  return s;
}

describe('metadataChange', () => {
  it('resolves at the first change after which `until` holds, and removes its listener', async () => {
    const md = metadata();
    let ready = false;
    const w = watch(metadataChange(md, { until: () => ready }));
    md.change();
    await flush();
    expect(w.done).toBe(false);
    ready = true;
    md.change();
    await flush();
    expect(w.done).toBe(true);
    expect(md.listeners.size).toBe(0);
  });

  it('without `until`, resolves at any change', async () => {
    const md = metadata();
    const w = watch(metadataChange(md));
    await flush();
    expect(w.done).toBe(false);
    md.change();
    await flush();
    expect(w.done).toBe(true);
  });

  it('resolves after the timeout on the injected timers, leaving no timer armed', async () => {
    const md = metadata();
    const time = new ManualTime();
    const w = watch(metadataChange(md, { until: () => false, timeoutMs: 100, timers: time }));
    time.advance(99);
    await flush();
    expect(w.done).toBe(false);
    time.advance(1);
    await flush();
    expect(w.done).toBe(true);
    expect(md.listeners.size).toBe(0);
    // Resolved by a change: the timer goes too.
    const w2 = watch(metadataChange(md, { timeoutMs: 100, timers: time }));
    md.change();
    await flush();
    expect(w2.done).toBe(true);
    expect(time.armed).toBe(0);
  });

  it('resolves when the signal aborts, or at once when it already has', async () => {
    const md = metadata();
    const ac = new AbortController();
    const w = watch(metadataChange(md, { signal: ac.signal }));
    ac.abort();
    await flush();
    expect(w.done).toBe(true);
    expect(md.listeners.size).toBe(0);
    const w2 = watch(metadataChange(md, { signal: ac.signal }));
    await flush();
    expect(w2.done).toBe(true);
    expect(md.listeners.size).toBe(0);
  });
});
