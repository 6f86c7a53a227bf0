/**
 * Producer-state snapshot files of a log directory: `<offset>.snapshot`
 * (20-digit offset, like segment names) holds the producer state after every
 * batch below that offset. Written at segment roll and clean close, read
 * at open and after a truncation; the latest one at or below the log end
 * is where rebuilding the state from batch headers starts.
 */
import * as path from 'node:path';
import type { LogFileSystem } from './file-system.js';
import { ProducerState } from './producer-state.js';
import { parseSegmentName, segmentName } from './segment.js';

export const SNAPSHOT_SUFFIX = '.snapshot';

export class ProducerSnapshots {
  /** Makes temp file names unique: a roll and a periodic snapshot may write the same offset at once. */
  private writes = 0;

  constructor(
    private readonly dir: string,
    private readonly fs: LogFileSystem,
  ) {}

  fileOf(offset: number): string {
    return path.join(this.dir, segmentName(offset) + SNAPSHOT_SUFFIX);
  }

  /** Offsets of the snapshot files present, ascending. */
  async list(): Promise<number[]> {
    const out: number[] = [];
    for (const f of await this.fs.readdir(this.dir)) {
      const o = parseSegmentName(f, SNAPSHOT_SUFFIX);
      if (o !== null) out.push(o);
    }
    return out.sort((a, b) => a - b);
  }

  /**
   * Writes a snapshot by temp file and rename, without fsync: a snapshot
   * only saves replay work. One lost or torn by a power failure is unreadable
   * (not JSON, or the wrong offset), deleted at open, and an earlier one (or
   * the headers) is used instead; so no fsync is paid at every roll and
   * close of every partition.
   */
  async write(offset: number, state: ProducerState): Promise<void> {
    await this.writeData(offset, state.toSnapshot(offset));
  }

  /** Writes the bytes of `state.toSnapshot(offset)`, taken by the caller when the state was at `offset`. */
  async writeData(offset: number, data: Buffer): Promise<void> {
    const file = this.fileOf(offset);
    const tmp = `${file}.${++this.writes}.tmp`;
    const f = await this.fs.open(tmp, true);
    try {
      let done = 0;
      while (done < data.length) done += await f.write(data, done, data.length - done, done);
    } finally {
      await f.close();
    }
    await this.fs.rename(tmp, file);
  }

  /**
   * Deletes the snapshots above `logEnd` (they describe records that are
   * gone) and returns the latest readable one at or below it, deleting
   * unreadable ones on the way; null when there is none.
   */
  async loadLatest(logEnd: number, onBad: (file: string, err: Error) => void): Promise<{ offset: number; state: ProducerState } | null> {
    const offsets = await this.list();
    for (const o of offsets) if (o > logEnd) await this.fs.unlink(this.fileOf(o));
    const usable = offsets.filter((o) => o <= logEnd).reverse();
    for (const o of usable) {
      const file = this.fileOf(o);
      try {
        const data = await this.fs.readFile(file);
        if (data === null) continue;
        const snap = ProducerState.fromSnapshot(data);
        if (snap.offset !== o) throw new Error(`snapshot file ${file} says offset ${snap.offset}`);
        return snap;
      } catch (err) {
        onBad(file, err as Error);
        await this.fs.unlink(file);
      }
    }
    return null;
  }

  /**
   * Deletes the snapshots below `offset` (the log start), keeping the latest
   * of them when none is at or above it: the state of producers whose
   * batches were deleted still counts.
   */
  async deleteBelow(offset: number): Promise<void> {
    const all = await this.list();
    const below = all.filter((o) => o < offset);
    if (below.length === all.length) below.pop();
    for (const o of below) await this.fs.unlink(this.fileOf(o));
  }

  async delete(offset: number): Promise<void> {
    await this.fs.unlink(this.fileOf(offset));
  }

  async deleteAll(): Promise<void> {
    for (const o of await this.list()) await this.fs.unlink(this.fileOf(o));
  }
}
