import { MqError } from '@mq/protocol/errors';
import { Retrier, abortableSleep, parseRetryOptions } from './retrier.js';

const noSleep = { sleep: async () => {}, random: () => 0.5 };

describe('Retrier', () => {
  it('retries retriable MqErrors until success', async () => {
    const r = new Retrier({ retries: 5 }, noSleep);
    let calls = 0;
    const v = await r.run(async () => {
      calls++;
      if (calls < 3) throw new MqError('NOT_LEADER', 'moved');
      return 'ok';
    });
    expect(v).toBe('ok');
    expect(calls).toBe(3);
  });

  it('gives up after `retries` retries with the last error', async () => {
    const r = new Retrier({ retries: 2 }, noSleep);
    let calls = 0;
    await expect(
      r.run(async () => {
        calls++;
        throw new MqError('REQUEST_TIMED_OUT', `try ${calls}`);
      }),
    ).rejects.toThrow('try 3');
    expect(calls).toBe(3);
  });

  it.each([
    ['TypeError', new TypeError('x is not a function')],
    ['RangeError', new RangeError('bad')],
    ['a non-retriable MqError', new MqError('INVALID_TOPIC', 'bad name')],
    ['a plain Error', new Error('unknown')],
  ])('never retries %s', async (_name, err) => {
    const r = new Retrier({ retries: 5 }, noSleep);
    let calls = 0;
    await expect(
      r.run(async () => {
        calls++;
        throw err;
      }),
    ).rejects.toBe(err);
    expect(calls).toBe(1);
  });

  it('stops at bail()', async () => {
    const r = new Retrier({ retries: 5 }, noSleep);
    let calls = 0;
    const err = new MqError('NOT_LEADER', 'x');
    await expect(
      r.run(async ({ bail }) => {
        calls++;
        bail(err);
      }),
    ).rejects.toBe(err);
    expect(calls).toBe(1);
  });

  it('backs off exponentially, with jitter, under a cap', () => {
    const mid = new Retrier({ initialDelayMs: 100, multiplier: 2, maxDelayMs: 1000, jitter: 0.2 }, { random: () => 0.5 });
    expect([0, 1, 2, 3, 4, 5].map((a) => mid.delayMs(a))).toEqual([100, 200, 400, 800, 1000, 1000]);
    const low = new Retrier({ initialDelayMs: 100, jitter: 0.2 }, { random: () => 0 });
    const high = new Retrier({ initialDelayMs: 100, jitter: 0.2, maxDelayMs: 10_000 }, { random: () => 0.999999 });
    expect(low.delayMs(1)).toBe(160);
    expect(high.delayMs(1)).toBe(240);
    expect(high.delayMs(20)).toBeLessThanOrEqual(10_000);
  });

  it('calls onRetry (e.g. to refresh metadata) before each backoff, with the delay', async () => {
    const seen: Array<[string, number, number]> = [];
    const r = new Retrier({ retries: 3, initialDelayMs: 10, jitter: 0 }, noSleep);
    let calls = 0;
    await r.run(
      async () => {
        if (++calls < 3) throw new MqError('NOT_LEADER', 'x');
      },
      { onRetry: (err, attempt, delay) => void seen.push([err.code, attempt, delay]) },
    );
    expect(seen).toEqual([
      ['NOT_LEADER', 0, 10],
      ['NOT_LEADER', 1, 20],
    ]);
  });

  it('stops waiting when the signal aborts, and removes its listener', async () => {
    const ac = new AbortController();
    const r = new Retrier({ retries: 5, initialDelayMs: 10_000, maxDelayMs: 10_000 });
    const p = r.run(
      async () => {
        throw new MqError('NOT_LEADER', 'x');
      },
      { signal: ac.signal },
    );
    setTimeout(() => ac.abort(), 10);
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' });
  });

  it('abortableSleep resolves after the delay', async () => {
    const ac = new AbortController();
    const t0 = Date.now();
    await abortableSleep(20, ac.signal);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(15);
  });

  it('rejects contradictory options', () => {
    expect(() => parseRetryOptions({ initialDelayMs: 500, maxDelayMs: 100 })).toThrow(/maxDelayMs/);
    expect(() => parseRetryOptions({ retries: -1 })).toThrow(MqError);
    expect(() => parseRetryOptions({ jitter: 2 })).toThrow(/jitter/);
  });
});
