/**
 * Leader epoch → first offset written in that epoch, persisted in the
 * `leader-epoch-checkpoint` file and truncated together with the log. It
 * answers OffsetForLeaderEpoch (`endOffsetFor`), which followers use to find
 * where their log diverges from the leader's.
 */
import { CheckpointFile } from './checkpoint.js';
import type { LogFileSystem } from './file-system.js';

export const LEADER_EPOCH_CHECKPOINT = 'leader-epoch-checkpoint';
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_OFFSET = -1;

export interface EpochEntry {
  readonly epoch: number;
  readonly startOffset: number;
}

export interface LeaderEpochCache {
  /** Entries, oldest first. */
  readonly entries: readonly EpochEntry[];
  /** The latest epoch, or -1 when there is none. */
  readonly latestEpoch: number;
  /**
   * Kafka's OffsetForLeaderEpoch: the largest epoch <= `epoch` that the log
   * knows, and the offset where it ended (the start offset of the next
   * epoch, or the log end offset for the latest). `{-1, -1}` when `epoch` is
   * older than every entry or the cache is empty.
   */
  endOffsetFor(epoch: number): { epoch: number; endOffset: number };
  /** Start offset of `epoch`, or -1 when unknown. */
  startOffsetFor(epoch: number): number;
}

export class PersistentLeaderEpochCache implements LeaderEpochCache {
  private list: EpochEntry[] = [];
  private readonly checkpoint: CheckpointFile;

  constructor(
    dir: string,
    fs: LogFileSystem,
    private readonly logEndOffset: () => number,
  ) {
    this.checkpoint = new CheckpointFile(dir, LEADER_EPOCH_CHECKPOINT, fs);
  }

  /** Loads the checkpoint; returns a problem description when it was unreadable (the cache is then empty). */
  async load(): Promise<string | null> {
    try {
      const lines = await this.checkpoint.read();
      if (lines === null) return null;
      const [countLine, ...rest] = lines;
      if (!countLine || countLine.length !== 1 || countLine[0] !== rest.length) throw new Error('entry count does not match');
      const list: EpochEntry[] = [];
      for (const l of rest) {
        if (l.length !== 2) throw new Error('entry is not "epoch startOffset"');
        const [epoch, startOffset] = l as [number, number];
        const prev = list[list.length - 1];
        if (epoch < 0 || startOffset < 0 || (prev && (epoch <= prev.epoch || startOffset < prev.startOffset))) {
          throw new Error(`entry ${epoch} ${startOffset} is out of order`);
        }
        list.push({ epoch, startOffset });
      }
      this.list = list;
      return null;
    } catch (err) {
      this.list = [];
      return (err as Error).message;
    }
  }

  get entries(): readonly EpochEntry[] {
    return this.list;
  }

  get latestEpoch(): number {
    return this.list.length === 0 ? UNDEFINED_EPOCH : this.list[this.list.length - 1]!.epoch;
  }

  startOffsetFor(epoch: number): number {
    return this.list.find((e) => e.epoch === epoch)?.startOffset ?? UNDEFINED_OFFSET;
  }

  endOffsetFor(epoch: number): { epoch: number; endOffset: number } {
    if (this.list.length === 0 || epoch < this.list[0]!.epoch) return { epoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_OFFSET };
    let i = this.list.length - 1;
    while (this.list[i]!.epoch > epoch) i--;
    const found = this.list[i]!;
    const next = this.list[i + 1];
    return { epoch: found.epoch, endOffset: next ? next.startOffset : this.logEndOffset() };
  }

  /**
   * Records that `epoch` starts at `startOffset` when it is newer than the
   * latest; returns whether the cache changed (the caller then persists it).
   */
  assign(epoch: number, startOffset: number): boolean {
    if (!this.wouldAssign(epoch)) return false;
    // A newer epoch starting below an older one's start replaces those entries.
    while (this.list.length > 0 && this.list[this.list.length - 1]!.startOffset >= startOffset) this.list.pop();
    this.list.push({ epoch, startOffset });
    return true;
  }

  /** Whether assign(epoch, …) would change the cache (the epoch is newer than the latest). */
  wouldAssign(epoch: number): boolean {
    if (epoch < 0) return false;
    const last = this.list[this.list.length - 1];
    return !last || epoch > last.epoch;
  }

  /** Drops epochs that start at or after `offset` (the log was truncated to it). */
  truncateFromEnd(offset: number): boolean {
    const before = this.list.length;
    while (this.list.length > 0 && this.list[this.list.length - 1]!.startOffset >= offset) this.list.pop();
    return this.list.length !== before;
  }

  /** The log now starts at `offset`: epochs ending before it go, the one covering it starts there. */
  truncateFromStart(offset: number): boolean {
    let changed = false;
    while (this.list.length > 1 && this.list[1]!.startOffset <= offset) {
      this.list.shift();
      changed = true;
    }
    const first = this.list[0];
    if (first && first.startOffset < offset) {
      this.list[0] = { epoch: first.epoch, startOffset: offset };
      changed = true;
    }
    return changed;
  }

  clear(): void {
    this.list = [];
  }

  async persist(): Promise<void> {
    await this.checkpoint.write([[this.list.length], ...this.list.map((e) => [e.epoch, e.startOffset])]);
  }
}
