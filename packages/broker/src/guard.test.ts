import { ManualTime } from '@mq/protocol/components';
import { guard, guardTimers } from './guard.js';

function sink() {
  const lines: Array<{ obj: Record<string, unknown>; msg?: string }> = [];
  return { lines, error: (obj: object, msg?: string) => void lines.push({ obj: obj as Record<string, unknown>, msg }) };
}

describe('guard: no exception in a timer or event callback ends the process', () => {
  it('logs a synchronous throw with what failed and where, and returns normally', () => {
    const log = sink();
    const fn = guard(log, 'completing a rebalance', () => {
      throw new Error('boom');
    }, { group: 'g1' });
    expect(() => fn()).not.toThrow();
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]!.msg).toBe('completing a rebalance failed; the broker keeps serving');
    expect(log.lines[0]!.obj.group).toBe('g1');
    expect((log.lines[0]!.obj.err as Error).message).toBe('boom');
  });

  it('logs a rejected promise the callback returns (no unhandled rejection)', async () => {
    const log = sink();
    guard(log, 'compaction', async () => {
      throw new Error('disk gone');
    })();
    await new Promise((resolve) => setImmediate(resolve));
    expect((log.lines[0]!.obj.err as Error).message).toBe('disk gone');
  });

  it('passes arguments through and survives a logger that throws', () => {
    const seen: number[] = [];
    const fn = guard({ error: () => { throw new Error('logger down'); } }, 'x', (a: number) => {
      seen.push(a);
      throw new Error('boom');
    });
    expect(() => fn(7)).not.toThrow();
    expect(seen).toEqual([7]);
  });

  it('guarded timers: a throwing timer is logged and later timers still fire', () => {
    const time = new ManualTime();
    const log = sink();
    const timers = guardTimers(time, log, 'group coordinator timer');
    const fired: string[] = [];
    timers.setTimeout(() => {
      throw new Error('bad group');
    }, 10);
    timers.setTimeout(() => fired.push('good group'), 20);
    const cancelled = timers.setTimeout(() => fired.push('cancelled'), 30);
    timers.clearTimeout(cancelled);
    expect(() => time.advance(100)).not.toThrow();
    expect(fired).toEqual(['good group']);
    expect(log.lines).toHaveLength(1);
  });
});
