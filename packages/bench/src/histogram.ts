import * as hdr from 'hdr-histogram-js';

export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

/** Highest latency recorded without saturating: one hour, in microseconds. */
export const MAX_TRACKABLE_US = 3_600_000_000;

/**
 * Latencies in an HDR histogram (microsecond resolution, 3 significant
 * digits), reported in milliseconds. Memory is fixed whatever the count.
 */
export class LatencyRecorder {
  private readonly histogram: hdr.Histogram;

  constructor() {
    this.histogram = hdr.build({
      bitBucketSize: 64,
      autoResize: false,
      lowestDiscernibleValue: 1,
      highestTrackableValue: MAX_TRACKABLE_US,
      numberOfSignificantValueDigits: 3,
      useWebAssembly: false,
    });
  }

  /** Record one latency given in milliseconds. */
  recordMs(ms: number): void {
    let us = Math.round(ms * 1000);
    if (!(us >= 1)) us = 1;
    if (us > MAX_TRACKABLE_US) us = MAX_TRACKABLE_US;
    this.histogram.recordValue(us);
  }

  /** Record `count` records that share one latency (a batch acknowledged together). */
  recordManyMs(ms: number, count: number): void {
    let us = Math.round(ms * 1000);
    if (!(us >= 1)) us = 1;
    if (us > MAX_TRACKABLE_US) us = MAX_TRACKABLE_US;
    this.histogram.recordValueWithCount(us, count);
  }

  add(other: LatencyRecorder): void {
    this.histogram.add(other.histogram);
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  summary(): LatencySummary {
    const h = this.histogram;
    const max = h.totalCount === 0 ? 0 : h.maxValue / 1000;
    // HDR reports the top of a value's bucket; never above the true max.
    const at = (p: number): number => (h.totalCount === 0 ? 0 : Math.min(h.getValueAtPercentile(p) / 1000, max));
    return {
      count: h.totalCount,
      mean: h.totalCount === 0 ? 0 : round3(h.mean / 1000),
      p50: at(50),
      p90: at(90),
      p99: at(99),
      p999: at(99.9),
      max,
    };
  }

  /** Latency (ms) at each percentile in `percentiles`, for plots. */
  curve(percentiles: readonly number[]): Array<[number, number]> {
    const h = this.histogram;
    const max = h.maxValue / 1000;
    return percentiles.map((p) => [p, h.totalCount === 0 ? 0 : Math.min(h.getValueAtPercentile(p) / 1000, max)]);
  }

  reset(): void {
    this.histogram.reset();
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
