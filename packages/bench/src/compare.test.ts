import { compareResults, formatCompareReport, median, parseMaxDrop, parseResults, spread } from './compare.js';
import type { BenchResult } from './result.js';

function run(recordsPerSec: number, p99 = 10, workload: BenchResult['workload'] = 'produce'): BenchResult {
  return {
    workload,
    target: 'mq',
    records: 1000,
    bytes: 100_000,
    seconds: 1,
    recordsPerSec,
    mbPerSec: 1,
    latencyMs: { mean: p99 / 2, p50: p99 / 2, p90: p99, p99, p999: p99, max: p99 },
    errors: 0,
    parameters: {},
    durability: '',
    environment: {} as BenchResult['environment'],
  };
}

describe('bench compare', () => {
  it('medians and spread', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(spread([90, 100, 110])).toBeCloseTo(0.1);
    // One cold run does not make the noise: the median deviation is the others'.
    expect(spread([30, 100, 102, 98, 101])).toBeCloseTo(0.02);
    expect(spread([100])).toBeNull();
  });

  it('--max-drop takes 15%, 15 or 0.15; anything else is INVALID_ARGUMENT', () => {
    expect(parseMaxDrop('15%')).toBeCloseTo(0.15);
    expect(parseMaxDrop('15')).toBeCloseTo(0.15);
    expect(parseMaxDrop('0.15')).toBeCloseTo(0.15);
    expect(() => parseMaxDrop('lots')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => parseMaxDrop('150%')).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
  });

  it('a drop beyond both the allowed drop and the noise is a regression', () => {
    const base = [run(100_000), run(98_000), run(102_000)]; // noise 2%
    const r = compareResults(base, [run(70_000), run(71_000), run(69_000)], { maxDrop: 0.1 });
    const tput = r.scenarios[0]!.metrics.find((m) => m.metric === 'recordsPerSec')!;
    expect(tput).toMatchObject({ regressed: true, threshold: 0.1 });
    expect(tput.change).toBeCloseTo(0.3);
    expect(r.regressed).toBe(true);
    expect(formatCompareReport(r)).toMatch(/REGRESSED/);
  });

  it('a drop within the noise measured between runs is not a regression, and the noise is stated', () => {
    // Baseline runs deviate 30% from their median: a 25% lower median is inside the noise, although over --max-drop 10%.
    const base = [run(70_000), run(100_000), run(130_000)];
    const r = compareResults(base, [run(75_000), run(76_000), run(74_000)], { maxDrop: 0.1 });
    const tput = r.scenarios[0]!.metrics.find((m) => m.metric === 'recordsPerSec')!;
    expect(tput.noise).toBeCloseTo(0.3);
    expect(tput.regressed).toBe(false);
    expect(formatCompareReport(r)).toMatch(/30\.0%/);
  });

  it('latency is worse when higher; one run per side leaves the noise unknown and only --max-drop applies', () => {
    const r = compareResults([run(100_000, 10)], [run(100_000, 13)], { maxDrop: 0.2 });
    const p99 = r.scenarios[0]!.metrics.find((m) => m.metric === 'latencyMs.p99')!;
    expect(p99).toMatchObject({ noise: null, threshold: 0.2, regressed: true });
    expect(formatCompareReport(r)).toMatch(/noise unknown/);
  });

  it('scenarios are matched by workload and target; one in a single file is listed, not compared', () => {
    const r = compareResults([run(100), run(100, 10, 'consume')], [run(100)]);
    expect(r.scenarios.map((s) => s.scenario)).toEqual(['produce/mq']);
    expect(r.unmatched).toEqual(['consume/mq']);
    expect(() => compareResults([run(1, 1, 'consume')], [run(1)])).toThrow(/no scenario in common/);
  });

  it('reads JSON Lines, an array or one object, and names the bad line', () => {
    const line = JSON.stringify(run(5));
    expect(parseResults(`${line}\n${line}\n`, 'a.json')).toHaveLength(2);
    expect(parseResults(`[${line},${line}]`, 'a.json')).toHaveLength(2);
    expect(parseResults(line, 'a.json')).toHaveLength(1);
    expect(() => parseResults(`${line}\n{oops\n`, 'a.json')).toThrow(/a\.json line 2 is not JSON/);
    expect(() => parseResults('{"x":1}', 'a.json')).toThrow(/not a result of mq bench --json/);
    expect(() => parseResults('', 'a.json')).toThrow(/holds no results/);
  });
});
