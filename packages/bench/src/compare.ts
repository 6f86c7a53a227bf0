/**
 * `mq bench compare BASELINE CURRENT`: compares the medians of several runs
 * (the `--json` lines of `mq bench`, appended to one file per side) and says
 * whether the current runs are slower than the baseline by more than both the
 * allowed drop and the noise measured between runs of the same side.
 *
 * Noise of a metric on one side is the median absolute deviation of its runs
 * from their median, relative to that median (robust to one cold or
 * disturbed run, where the range is not: short runs on a shared machine vary
 * by 2-3x); the comparison's noise is the larger of the two sides'. A metric
 * regresses when it is worse than the baseline's median by more than
 * max(--max-drop, noise): throughput (records/s) lower, latency (p50, p99)
 * higher. With one run on a side its noise cannot be measured and is stated
 * as unknown; then only --max-drop applies.
 */
import type { Argv } from 'yargs';
import { MqError } from '@mq/protocol/errors';
import type { BenchResult } from './result.js';

/** --max-drop when none is given: 15%. */
export const DEFAULT_MAX_DROP = 0.15;

export interface CompareOptions {
  /** The regression allowed beyond the noise, as a fraction (0.15 = 15%). */
  maxDrop?: number;
}

export interface MetricComparison {
  /** `recordsPerSec`, `latencyMs.p50` or `latencyMs.p99`. */
  metric: string;
  /** `higher` when larger is better (throughput), `lower` for latency. */
  better: 'higher' | 'lower';
  baseline: { median: number; runs: number; noise: number | null };
  current: { median: number; runs: number; noise: number | null };
  /** How much worse the current median is, as a fraction of the baseline's (negative: better). */
  change: number;
  /** The larger noise of the two sides (null when neither side has two runs). */
  noise: number | null;
  /** max(maxDrop, noise): a change beyond it is a regression. */
  threshold: number;
  regressed: boolean;
}

export interface ScenarioComparison {
  /** `workload/target` (e.g. `produce/mq`). */
  scenario: string;
  metrics: MetricComparison[];
}

export interface CompareReport {
  maxDrop: number;
  scenarios: ScenarioComparison[];
  /** Scenarios in only one of the two files (not compared). */
  unmatched: string[];
  regressed: boolean;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The median absolute deviation of the runs over their median; null for fewer than two runs. */
export function spread(values: readonly number[]): number | null {
  if (values.length < 2) return null;
  const m = median(values);
  if (m === 0) return 0;
  return median(values.map((v) => Math.abs(v - m))) / Math.abs(m);
}

/** Parses `15%`, `15` (percent) or `0.15`; INVALID_ARGUMENT otherwise. */
export function parseMaxDrop(raw: string | number): number {
  const s = String(raw).trim();
  const m = /^(\d+(?:\.\d+)?)(%?)$/.exec(s);
  if (!m) throw new MqError('INVALID_ARGUMENT', `--max-drop must be a percentage such as 15% (or a fraction such as 0.15), got "${s}"`);
  const n = Number(m[1]);
  const fraction = m[2] === '%' || n >= 1 ? n / 100 : n;
  if (!(fraction >= 0 && fraction < 1)) throw new MqError('INVALID_ARGUMENT', `--max-drop must be from 0% to below 100%, got "${s}"`);
  return fraction;
}

/**
 * The runs in a results file: JSON Lines (what `mq bench ... --json >> FILE` appends), a JSON array, or one
 * object. `name` is for messages.
 */
export function parseResults(text: string, name: string): BenchResult[] {
  const trimmed = text.trim();
  if (trimmed === '') throw new MqError('INVALID_ARGUMENT', `${name} holds no results (save runs with: mq bench produce ... --json >> ${name})`);
  let runs: unknown[];
  if (trimmed.startsWith('[')) {
    try {
      runs = JSON.parse(trimmed) as unknown[];
    } catch (err) {
      throw new MqError('INVALID_ARGUMENT', `${name} is not JSON: ${(err as Error).message}`);
    }
  } else {
    runs = trimmed.split('\n').filter((l) => l.trim() !== '').map((line, i) => {
      try {
        return JSON.parse(line) as unknown;
      } catch (err) {
        throw new MqError('INVALID_ARGUMENT', `${name} line ${i + 1} is not JSON: ${(err as Error).message}`);
      }
    });
  }
  return runs.map((r, i) => {
    const o = r as Partial<BenchResult>;
    if (typeof o !== 'object' || o === null || typeof o.workload !== 'string' || typeof o.recordsPerSec !== 'number') {
      throw new MqError('INVALID_ARGUMENT', `${name} run ${i + 1} is not a result of mq bench --json (no workload and recordsPerSec)`);
    }
    return o as BenchResult;
  });
}

function scenarioOf(r: BenchResult): string {
  return `${r.workload}/${r.target ?? 'mq'}`;
}

function groupBy(results: readonly BenchResult[]): Map<string, BenchResult[]> {
  const out = new Map<string, BenchResult[]>();
  for (const r of results) {
    const k = scenarioOf(r);
    let l = out.get(k);
    if (!l) out.set(k, (l = []));
    l.push(r);
  }
  return out;
}

const METRICS: ReadonlyArray<{ metric: string; better: 'higher' | 'lower'; read: (r: BenchResult) => number | undefined }> = [
  { metric: 'recordsPerSec', better: 'higher', read: (r) => r.recordsPerSec },
  { metric: 'latencyMs.p50', better: 'lower', read: (r) => r.latencyMs?.p50 },
  { metric: 'latencyMs.p99', better: 'lower', read: (r) => r.latencyMs?.p99 },
];

function compareMetric(metric: string, better: 'higher' | 'lower', base: number[], cur: number[], maxDrop: number): MetricComparison {
  const b = { median: median(base), runs: base.length, noise: spread(base) };
  const c = { median: median(cur), runs: cur.length, noise: spread(cur) };
  const noises = [b.noise, c.noise].filter((n): n is number => n !== null);
  const noise = noises.length > 0 ? Math.max(...noises) : null;
  const change = b.median === 0 ? 0 : better === 'higher' ? (b.median - c.median) / b.median : (c.median - b.median) / b.median;
  const threshold = Math.max(maxDrop, noise ?? 0);
  return { metric, better, baseline: b, current: c, change, noise, threshold, regressed: change > threshold };
}

/** Compares every scenario (workload/target) present in both sets of runs. */
export function compareResults(baseline: readonly BenchResult[], current: readonly BenchResult[], options: CompareOptions = {}): CompareReport {
  const maxDrop = options.maxDrop ?? DEFAULT_MAX_DROP;
  const b = groupBy(baseline);
  const c = groupBy(current);
  const scenarios: ScenarioComparison[] = [];
  const unmatched = [...new Set([...b.keys(), ...c.keys()])].filter((k) => !b.has(k) || !c.has(k)).sort();
  for (const [scenario, baseRuns] of [...b].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const curRuns = c.get(scenario);
    if (!curRuns) continue;
    const metrics: MetricComparison[] = [];
    for (const m of METRICS) {
      const base = baseRuns.map(m.read).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
      const cur = curRuns.map(m.read).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
      if (base.length === 0 || cur.length === 0) continue;
      metrics.push(compareMetric(m.metric, m.better, base, cur, maxDrop));
    }
    scenarios.push({ scenario, metrics });
  }
  if (scenarios.length === 0) {
    throw new MqError('INVALID_ARGUMENT', `the two files have no scenario in common (baseline: ${[...b.keys()].join(', ') || 'none'}; current: ${[...c.keys()].join(', ') || 'none'})`);
  }
  return { maxDrop, scenarios, unmatched, regressed: scenarios.some((s) => s.metrics.some((m) => m.regressed)) };
}

function pct(x: number | null): string {
  return x === null ? 'unknown' : `${(x * 100).toFixed(1)}%`;
}

function num(x: number): string {
  return x >= 100 ? Math.round(x).toLocaleString('en-US') : x.toFixed(3);
}

/** The report for people: one row per metric, the noise stated, a verdict line. */
export function formatCompareReport(r: CompareReport): string {
  const rows: string[][] = [['SCENARIO', 'METRIC', 'BASELINE', 'CURRENT', 'CHANGE', 'NOISE', 'LIMIT', 'VERDICT']];
  for (const s of r.scenarios) {
    for (const m of s.metrics) {
      const worse = m.change > 0;
      const change = `${worse ? 'worse' : 'better'} ${pct(Math.abs(m.change))}`;
      rows.push([
        s.scenario,
        m.metric,
        `${num(m.baseline.median)} (${m.baseline.runs} run${m.baseline.runs === 1 ? '' : 's'})`,
        `${num(m.current.median)} (${m.current.runs} run${m.current.runs === 1 ? '' : 's'})`,
        change,
        pct(m.noise),
        pct(m.threshold),
        m.regressed ? 'REGRESSED' : worse ? 'within limit' : 'ok',
      ]);
    }
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  const lines = rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd());
  const single = r.scenarios.some((s) => s.metrics.some((m) => m.noise === null));
  if (single) lines.push('noise unknown where a side has one run: run each side 3 or more times (append --json lines to one file)');
  if (r.unmatched.length > 0) lines.push(`not compared (in one file only): ${r.unmatched.join(', ')}`);
  const regressed = r.scenarios.flatMap((s) => s.metrics.filter((m) => m.regressed).map((m) => `${s.scenario} ${m.metric}`));
  lines.push(
    regressed.length > 0
      ? `regression: ${regressed.join(', ')} worse than the baseline by more than max(--max-drop ${pct(r.maxDrop)}, the noise measured)`
      : `no regression beyond max(--max-drop ${pct(r.maxDrop)}, the noise measured)`,
  );
  return lines.join('\n');
}

export interface CompareArgs {
  baseline: string;
  current: string;
  'max-drop': string;
  json?: boolean;
}

/** Reads both files, compares, prints the report (text, or one JSON object with --json); returns it. */
export async function runCompareFromArgs(args: CompareArgs, out: NodeJS.WritableStream = process.stdout): Promise<CompareReport> {
  const { readFile } = await import('node:fs/promises');
  const read = async (file: string): Promise<BenchResult[]> => {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new MqError('INVALID_ARGUMENT', `cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return parseResults(text, file);
  };
  const report = compareResults(await read(args.baseline), await read(args.current), { maxDrop: parseMaxDrop(args['max-drop']) });
  out.write(args.json ? `${JSON.stringify(report)}\n` : `${formatCompareReport(report)}\n`);
  return report;
}

/** The yargs options of `bench compare <baseline> <current>`. */
export function compareBuilder(y: Argv): Argv<CompareArgs> {
  return y
    .positional('baseline', { type: 'string', demandOption: true, describe: 'results of the baseline runs (mq bench ... --json lines)' })
    .positional('current', { type: 'string', demandOption: true, describe: 'results of the current runs, same scenario' })
    .option('max-drop', { type: 'string', default: '15%', describe: 'regression allowed beyond the noise measured between runs (e.g. 10%)' })
    .option('json', { type: 'boolean', default: false, describe: 'print the comparison as one JSON object' }) as unknown as Argv<CompareArgs>;
}
