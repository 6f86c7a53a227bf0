import { monoMs } from './clock.js';

export interface ProgressSnapshot {
  records: number;
  bytes: number;
  /** Outstanding (sent, not acknowledged) records, where it applies. */
  inFlight?: number;
  /** Latest latency p99 in ms, where it applies. */
  p99Ms?: number;
}

export interface ProgressOptions {
  intervalMs?: number;
  /** Where lines go; default process.stderr. Null turns progress off. */
  stream?: NodeJS.WritableStream | null;
  label?: string;
}

export const DEFAULT_PROGRESS_INTERVAL_MS = 1000;

/** Prints one line per interval on stderr: counts, interval rate and MB/s. */
export class ProgressReporter {
  private timer: NodeJS.Timeout | null = null;
  private lastRecords = 0;
  private lastBytes = 0;
  private lastAt = 0;
  private readonly startAt = monoMs();

  constructor(
    private readonly sample: () => ProgressSnapshot,
    private readonly options: ProgressOptions = {},
  ) {}

  start(): this {
    const stream = this.options.stream === undefined ? process.stderr : this.options.stream;
    if (!stream) return this;
    this.lastAt = monoMs();
    this.timer = setInterval(() => {
      const now = monoMs();
      const s = this.sample();
      const dt = (now - this.lastAt) / 1000;
      const rate = Math.round((s.records - this.lastRecords) / dt);
      const mb = (s.bytes - this.lastBytes) / 1e6 / dt;
      this.lastRecords = s.records;
      this.lastBytes = s.bytes;
      this.lastAt = now;
      const parts = [
        `${this.options.label ?? 'bench'} ${((now - this.startAt) / 1000).toFixed(1)}s`,
        `${s.records.toLocaleString('en-US')} records`,
        `${rate.toLocaleString('en-US')} rec/s`,
        `${mb.toFixed(1)} MB/s`,
      ];
      if (s.inFlight !== undefined) parts.push(`in-flight ${s.inFlight}`);
      if (s.p99Ms !== undefined) parts.push(`p99 ${s.p99Ms.toFixed(2)} ms`);
      stream.write(parts.join('  ') + '\n');
    }, this.options.intervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS);
    this.timer.unref();
    return this;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
