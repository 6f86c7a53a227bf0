import { MqError } from '@mq/protocol/errors';

/**
 * An open-loop schedule: record i is due at `startMs + i * 1000 / rate`,
 * whatever happened to record i-1. Latency is measured from that intended
 * time, so a stall in the system under test shows up in the figures
 * (no coordinated omission) instead of silently slowing the sender.
 */
export class OpenLoopSchedule {
  private readonly intervalMs: number;

  constructor(
    readonly rate: number,
    readonly startMs: number,
  ) {
    if (!(rate > 0) || !Number.isFinite(rate)) throw new MqError('INVALID_ARGUMENT', `rate must be a positive number of records per second, got ${rate}`);
    this.intervalMs = 1000 / rate;
  }

  /** Intended send time of record `i` (same clock as startMs). */
  dueAt(i: number): number {
    return this.startMs + i * this.intervalMs;
  }

  /** How many records (counting from 0) are due by `nowMs`, capped at `limit`. */
  dueCount(nowMs: number, limit: number): number {
    if (nowMs < this.startMs) return 0;
    return Math.min(limit, Math.floor((nowMs - this.startMs) / this.intervalMs) + 1);
  }
}
