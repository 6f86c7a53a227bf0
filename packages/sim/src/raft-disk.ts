/**
 * A controller voter's metadata-log disk: @mq/consensus's MemoryStorage
 * whose writes land only after a simulated disk delay, in order. A crash
 * keeps a random prefix of the writes that had not landed (they may have
 * reached the disk anyway) and loses the rest; what landed survives, as an
 * fsynced write does (controller.fsync=true, the default). The same idea as
 * the Raft simulator's disk (packages/consensus/src/sim/simulator.ts).
 */
import { MemoryStorage, type Entry, type HardState, type Snapshot } from '@mq/consensus';
import type { Rng } from '@mq/consensus/sim';

type Update = { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot };

export class RaftDisk extends MemoryStorage {
  private pending: { update: Update; resolve: () => void }[] = [];

  constructor(
    private readonly delayMs: () => number,
    private readonly sleep: (ms: number) => Promise<void>,
  ) {
    super();
  }

  override save(update: Update): Promise<void> {
    return new Promise((resolve) => {
      const item = { update, resolve };
      this.pending.push(item);
      void this.sleep(this.delayMs()).then(() => {
        const i = this.pending.indexOf(item);
        if (i < 0) return; // landed with a later write, or lost in a crash
        for (const p of this.pending.splice(0, i + 1)) {
          this.applyUpdate(p.update);
          p.resolve();
        }
      });
    });
  }

  /** A crash: a prefix of the writes in flight reaches the disk, the rest is lost. */
  crash(rng: Rng): void {
    const keep = rng.int(0, this.pending.length);
    for (const p of this.pending.slice(0, keep)) this.applyUpdate(p.update);
    this.pending = [];
  }

  /** Opened again by the next run of its voter. */
  reopen(): this {
    this.closed = false;
    return this;
  }

  override close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}
