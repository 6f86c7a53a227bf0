import type { HighWatermarkCheckpoint } from '../types.js';

/** A high-watermark checkpoint held in memory; `value` is what a restart would load. */
export class MemoryCheckpoint implements HighWatermarkCheckpoint {
  value: number | undefined;
  saves = 0;

  constructor(initial?: number) {
    this.value = initial;
  }

  async load(): Promise<number | undefined> {
    return this.value;
  }

  async save(highWatermark: number): Promise<void> {
    this.saves++;
    this.value = highWatermark;
  }
}
