/**
 * In-process coordination of a log's operations. `Mutex` serialises appends;
 * `RwLock` lets reads and appends (which only add bytes) run together while
 * truncation, retention and close (which remove bytes) run alone.
 * The RwLock prefers writers so a stream of reads cannot starve a truncation.
 */
export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** Runs started and not yet settled (queued or running). */
  private active = 0;
  private readonly settled = (): void => {
    this.active--;
  };

  /** True when nothing runs or waits: work done synchronously now cannot interleave with a run. */
  get idle(): boolean {
    return this.active === 0;
  }

  run<T>(fn: () => Promise<T>): Promise<T> {
    this.active++;
    const result = this.tail.then(fn);
    // Registered before the caller's own reaction, so `idle` is up to date when the caller resumes.
    this.tail = result.then(this.settled, this.settled);
    return result;
  }
}

export class RwLock {
  private readers = 0;
  /** Readers woken by `wake()` that have not resumed yet (they hold the lock, but their work has not started). */
  private resuming = 0;
  private writer = false;
  private readonly waitingWriters: Array<() => void> = [];
  private waitingReaders: Array<() => void> = [];

  /** True when a read would start at once (no writer running or waiting). */
  get readable(): boolean {
    // A reader woken by a writer's end has not yet queued its own work: work done synchronously now would overtake it.
    return !this.writer && this.waitingWriters.length === 0 && this.resuming === 0;
  }

  async read<T>(fn: () => Promise<T>): Promise<T> {
    if (this.writer || this.waitingWriters.length > 0) {
      await new Promise<void>((resolve) => this.waitingReaders.push(resolve));
      this.resuming--;
    } else {
      this.readers++;
    }
    try {
      return await fn();
    } finally {
      this.readers--;
      this.wake();
    }
  }

  async write<T>(fn: () => Promise<T>): Promise<T> {
    if (this.writer || this.readers > 0 || this.waitingWriters.length > 0) {
      await new Promise<void>((resolve) => this.waitingWriters.push(resolve));
    } else {
      this.writer = true;
    }
    try {
      return await fn();
    } finally {
      this.writer = false;
      this.wake();
    }
  }

  private wake(): void {
    if (this.writer || this.readers > 0) return;
    const w = this.waitingWriters.shift();
    if (w) {
      this.writer = true;
      w();
      return;
    }
    const rs = this.waitingReaders;
    this.waitingReaders = [];
    this.readers += rs.length;
    this.resuming += rs.length;
    for (const r of rs) r();
  }
}
