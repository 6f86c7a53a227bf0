import { LatencyRecorder } from './histogram.js';
import { OpenLoopSchedule } from './rate.js';
import { readStamp, stampValue, createPayloads } from './payload.js';

describe('LatencyRecorder', () => {
  it('reports percentiles in ms at microsecond resolution', () => {
    const r = new LatencyRecorder();
    for (let i = 1; i <= 1000; i++) r.recordMs(i / 100); // 0.01 .. 10 ms
    const s = r.summary();
    expect(s.count).toBe(1000);
    expect(s.p50).toBeCloseTo(5, 1);
    expect(s.p99).toBeCloseTo(9.9, 1);
    expect(s.max).toBeCloseTo(10, 1);
    expect(s.p999).toBeLessThanOrEqual(s.max);
  });

  it('clamps nonsense instead of throwing', () => {
    const r = new LatencyRecorder();
    r.recordMs(-5);
    r.recordMs(Number.NaN);
    r.recordMs(1e12);
    expect(r.count).toBe(3);
  });

  it('reports zeros when empty', () => {
    expect(new LatencyRecorder().summary()).toMatchObject({ count: 0, p50: 0, max: 0 });
  });
});

describe('OpenLoopSchedule', () => {
  it('spaces records by 1/rate from the start', () => {
    const s = new OpenLoopSchedule(1000, 100);
    expect(s.dueAt(0)).toBe(100);
    expect(s.dueAt(10)).toBe(110);
    expect(s.dueCount(99, 1e9)).toBe(0);
    expect(s.dueCount(100, 1e9)).toBe(1);
    expect(s.dueCount(109.5, 1e9)).toBe(10);
    expect(s.dueCount(1e9, 5)).toBe(5);
  });

  it('rejects a rate that is not positive', () => {
    expect(() => new OpenLoopSchedule(0, 0)).toThrow(/rate/);
  });
});

describe('payloads', () => {
  it('makes values of the asked size and carries a stamp', () => {
    const [p] = createPayloads(100, 1);
    expect(p.length).toBe(100);
    const v = stampValue(p, 1234.5);
    expect(v.length).toBe(100);
    expect(readStamp(v)).toBe(1234.5);
    expect(readStamp(p.subarray(0, 4))).toBeNaN();
  });
});
