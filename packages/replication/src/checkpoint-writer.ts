/**
 * Writes a partition's high watermark through a HighWatermarkCheckpoint at
 * most once per interval (Kafka's replica.high.watermark.checkpoint.interval.ms):
 * a checkpoint that lags is safe (a restarted replica relearns the HW from the
 * leader), and one fsync per HW move per partition would not scale. Saves
 * never overlap; the latest value wins; flush() writes now.
 */
import type { Logger, TimerHandle, Timers } from '@mq/protocol/components';
import type { HighWatermarkCheckpoint } from './types.js';

/**
 * Where a replica's role (leader or follower) starts its high watermark: the larger of the checkpoint and the HW the
 * broker already knows in this run (its last role's), within the log.
 */
export function startingHighWatermark(stored: number | undefined, known: number, log: { logStartOffset: number; logEndOffset: number }): number {
  return Math.min(Math.max(stored ?? 0, known, log.logStartOffset), log.logEndOffset);
}

export class CheckpointWriter {
  readonly #checkpoint: HighWatermarkCheckpoint;
  readonly #timers: Timers;
  readonly #intervalMs: number;
  readonly #logger: Logger;
  readonly #fields: object;
  #value: number;
  #saved: number | undefined;
  #saving: Promise<void> | null = null;
  #timer: TimerHandle | undefined = undefined;

  constructor(
    checkpoint: HighWatermarkCheckpoint,
    components: { timers: Timers; logger: Logger; fields: object },
    intervalMs: number,
    value: number,
    saved: number | undefined,
  ) {
    this.#checkpoint = checkpoint;
    this.#timers = components.timers;
    this.#logger = components.logger;
    this.#fields = components.fields;
    this.#intervalMs = intervalMs;
    this.#value = value;
    this.#saved = saved;
    // A start above the checkpoint (a HW the broker learned earlier in its run) is saved like any HW move, so that
    // a role stopping, or a crash after the interval, leaves it on disk.
    if (value > (saved ?? 0)) this.set(value);
  }

  /** Records a new value; it is written within the interval. */
  set(value: number): void {
    this.#value = value;
    if (value === this.#saved) return;
    if (this.#intervalMs === 0) {
      void this.flush();
      return;
    }
    if (this.#timer === undefined) {
      this.#timer = this.#timers.setTimeout(() => {
        this.#timer = undefined;
        void this.flush();
      }, this.#intervalMs);
    }
  }

  /** Writes the latest value now (after any save in progress). Failures are logged, not thrown. */
  async flush(): Promise<void> {
    if (this.#timer !== undefined) {
      this.#timers.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    while (this.#saving) await this.#saving;
    if (this.#saved === this.#value) return;
    const value = this.#value;
    this.#saving = (async () => {
      try {
        await this.#checkpoint.save(value);
        this.#saved = value;
      } catch (err) {
        this.#logger.warn({ ...this.#fields, err }, 'high watermark checkpoint failed');
      } finally {
        this.#saving = null;
      }
    })();
    await this.#saving;
  }
}
