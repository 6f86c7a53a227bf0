import type { BenchEnvironment } from './env.js';
import type { LatencySummary } from './histogram.js';

export type WorkloadKind = 'produce' | 'consume' | 'e2e';

/** One run's figures: the shape `--json` prints. */
export interface BenchResult {
  workload: WorkloadKind;
  target: string;
  records: number;
  bytes: number;
  seconds: number;
  recordsPerSec: number;
  mbPerSec: number;
  /** Send-to-ack (produce) or intended-send-to-delivery (e2e) latency, in ms. Null for consume. */
  latencyMs: Omit<LatencySummary, 'count'> | null;
  /** Records that failed (produce errors); a run with errors says so. */
  errors: number;
  /** The first error seen, when errors > 0. */
  firstError?: string;
  /** e2e and rate-limited produce: the rate asked for and the rate achieved. */
  targetRate?: number;
  /** Latency curve for plots: [percentile, ms] pairs. */
  latencyCurve?: Array<[number, number]>;
  parameters: Record<string, unknown>;
  durability: string;
  environment: BenchEnvironment;
}

export const MB = 1_000_000;

export function throughput(records: number, bytes: number, seconds: number): { recordsPerSec: number; mbPerSec: number } {
  const s = seconds > 0 ? seconds : Number.EPSILON;
  return { recordsPerSec: Math.round(records / s), mbPerSec: Math.round((bytes / MB / s) * 100) / 100 };
}

/** Percentiles sampled for the latency plot. */
export const CURVE_PERCENTILES = [0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 100];

export function stripCount(s: LatencySummary): Omit<LatencySummary, 'count'> {
  const { count: _count, ...rest } = s;
  void _count;
  return rest;
}

/** A human-readable table of one result (stdout when not --json). */
export function formatResultTable(r: BenchResult): string {
  const rows: Array<[string, string]> = [
    ['workload', `${r.workload} (${r.target})`],
    ['records', r.records.toLocaleString('en-US')],
    ['bytes', `${r.bytes.toLocaleString('en-US')} (${(r.bytes / MB).toFixed(1)} MB)`],
    ['seconds', r.seconds.toFixed(3)],
    ['records/s', r.recordsPerSec.toLocaleString('en-US')],
    ['MB/s', r.mbPerSec.toFixed(2)],
  ];
  if (r.targetRate !== undefined) rows.push(['target rate', `${r.targetRate.toLocaleString('en-US')} records/s`]);
  if (r.errors > 0) rows.push(['errors', String(r.errors)]);
  if (r.latencyMs) {
    const l = r.latencyMs;
    rows.push(['latency ms', `p50 ${fmt(l.p50)}  p90 ${fmt(l.p90)}  p99 ${fmt(l.p99)}  p99.9 ${fmt(l.p999)}  max ${fmt(l.max)}`]);
  }
  rows.push(['parameters', Object.entries(r.parameters).map(([k, v]) => `${k}=${String(v)}`).join(' ')]);
  rows.push(['durability', r.durability]);
  const e = r.environment;
  rows.push(['environment', `${e.cpuModel} x${e.cores}, node ${e.node}, commit ${e.commit?.slice(0, 12) ?? 'n/a'}${e.dirty ? ' (dirty)' : ''}`]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

function fmt(ms: number): string {
  return ms < 1 ? ms.toFixed(3) : ms < 100 ? ms.toFixed(2) : ms.toFixed(0);
}
