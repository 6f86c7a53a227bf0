/**
 * Group commit: callers ask for durability up to an offset; one fdatasync
 * covers every write that completed before it started, so concurrent
 * appenders share a sync instead of queueing one each.
 */
import type { LogFile } from './file-system.js';

/** A batch boundary in the log: the offset there, and where it is on disk. */
export interface LogPosition {
  readonly offset: number;
  readonly segmentBase: number;
  readonly position: number;
}

export class GroupCommit {
  private inflight: Promise<void> | null = null;
  private readonly dirty = new Set<LogFile>();
  /** Everything before this point has been fdatasync'ed. */
  durable: LogPosition;
  /** Number of sync rounds run (each syncs every dirty file once). */
  rounds = 0;

  constructor(
    initial: LogPosition,
    private readonly current: () => LogPosition,
  ) {
    this.durable = initial;
  }

  /** A file now holds bytes written but not yet synced. */
  markDirty(file: LogFile): void {
    this.dirty.add(file);
  }

  /** The file is about to be closed (deleted segment). */
  forget(file: LogFile): void {
    this.dirty.delete(file);
  }

  get hasDirty(): boolean {
    return this.dirty.size > 0;
  }

  /** Resolves once everything up to `offset` (exclusive) is synced. */
  async syncTo(offset: number): Promise<void> {
    while (this.durable.offset < offset) {
      this.inflight ??= this.round();
      await this.inflight;
      if (this.durable.offset < offset && this.current().offset < offset) return; // truncated meanwhile
    }
  }

  /** Runs (or joins) a round that syncs every dirty file. */
  async syncAll(): Promise<void> {
    if (this.inflight) await this.inflight.catch(() => undefined);
    if (!this.hasDirty && this.durable.offset >= this.current().offset) return;
    this.inflight ??= this.round();
    await this.inflight;
  }

  /** Lowers the durable point after a truncation. */
  lowerTo(point: LogPosition): void {
    if (point.offset < this.durable.offset) this.durable = point;
  }

  private async round(): Promise<void> {
    const target = this.current();
    const files = [...this.dirty];
    this.dirty.clear();
    try {
      await Promise.all(files.map((f) => f.datasync()));
      this.rounds++;
      if (target.offset >= this.durable.offset) this.durable = target;
    } catch (err) {
      for (const f of files) this.dirty.add(f);
      throw err;
    } finally {
      this.inflight = null;
    }
  }
}
