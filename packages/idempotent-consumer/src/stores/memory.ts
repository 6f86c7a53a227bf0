/**
 * An in-memory store for tests and single-process pipelines: keys are lost on
 * restart, so it deduplicates only within one process's life. Bounded: past
 * `maxKeys` the oldest keys are forgotten (and their records, delivered
 * again, would run again).
 */
import { MqError } from '@mq/protocol/errors';
import type { IdempotencyStore, Outcome } from '../store.js';

export const DEFAULT_MAX_KEYS = 100_000;

export interface MemoryStoreOptions {
  /** Keys remembered (oldest forgotten first). Default 100,000. */
  maxKeys?: number;
}

export class MemoryStore implements IdempotencyStore<void> {
  readonly kind = 'memory';
  private readonly maxKeys: number;
  /** Processed keys, oldest first (a Map keeps insertion order). */
  private readonly done = new Map<string, true>();
  /** Keys whose effect is running: a second delivery waits for the first. */
  private readonly running = new Map<string, Promise<void>>();

  constructor(options: MemoryStoreOptions = {}) {
    const max = options.maxKeys ?? DEFAULT_MAX_KEYS;
    if (!Number.isSafeInteger(max) || max < 1) throw new MqError('INVALID_ARGUMENT', `maxKeys must be an integer >= 1, got ${String(options.maxKeys)}`);
    this.maxKeys = max;
  }

  /** How many keys are remembered. */
  get size(): number {
    return this.done.size;
  }

  async runOnce(key: string, effect: (tx: void) => Promise<void>): Promise<Outcome> {
    for (let busy = this.running.get(key); busy; busy = this.running.get(key)) await busy;
    if (this.done.has(key)) return 'duplicate';
    let release!: () => void;
    this.running.set(key, new Promise<void>((resolve) => (release = resolve)));
    try {
      await effect(undefined);
      this.done.set(key, true);
      if (this.done.size > this.maxKeys) this.done.delete(this.done.keys().next().value!);
      return 'processed';
    } finally {
      this.running.delete(key);
      release();
    }
  }
}
