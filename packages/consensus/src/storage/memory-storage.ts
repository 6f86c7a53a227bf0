import { MqError } from '@mq/protocol/errors';
import { cloneConfState, entrySize, type ConfState, type Entry, type HardState, type Snapshot } from '../core/types.js';
import type { RaftStorage } from './types.js';

/**
 * Raft storage held in memory: nothing survives the process. For tests, and
 * the base that FileStorage keeps beside its files.
 */
export class MemoryStorage implements RaftStorage {
  protected hard: HardState = { term: 0, vote: 0, commit: 0 };
  protected snap: Snapshot = { meta: { index: 0, term: 0, confState: { voters: [], learners: [] } }, data: new Uint8Array(0) };
  /** Index/term of the entry just before ents[0] (compaction point). */
  protected dummyIndex = 0;
  protected dummyTerm = 0;
  protected ents: Entry[] = [];
  protected closed = false;

  initialState(): { hardState: HardState; confState: ConfState } {
    return { hardState: { ...this.hard }, confState: cloneConfState(this.snap.meta.confState) };
  }

  firstIndex(): number {
    return this.dummyIndex + 1;
  }

  lastIndex(): number {
    return this.dummyIndex + this.ents.length;
  }

  term(index: number): number {
    if (index === this.dummyIndex) return this.dummyTerm;
    if (index < this.dummyIndex) throw new MqError('LOG_COMPACTED', `entry ${index} is compacted (first index ${this.firstIndex()})`, { index });
    const e = this.ents[index - this.dummyIndex - 1];
    if (!e) throw new MqError('OFFSET_OUT_OF_RANGE', `entry ${index} is beyond the last index ${this.lastIndex()}`, { index });
    return e.term;
  }

  entries(lo: number, hi: number, maxBytes = Number.MAX_SAFE_INTEGER): Entry[] {
    if (lo <= this.dummyIndex) throw new MqError('LOG_COMPACTED', `entry ${lo} is compacted (first index ${this.firstIndex()})`, { index: lo });
    if (hi > this.lastIndex() + 1 || lo > hi) {
      throw new MqError('OFFSET_OUT_OF_RANGE', `entries [${lo}, ${hi}) are outside [${this.firstIndex()}, ${this.lastIndex() + 1})`);
    }
    const out: Entry[] = [];
    let bytes = 0;
    for (let i = lo; i < hi; i++) {
      const e = this.ents[i - this.dummyIndex - 1]!;
      bytes += entrySize(e);
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  snapshot(): Snapshot {
    return this.snap;
  }

  save(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): Promise<void> {
    try {
      this.applyUpdate(update);
      return Promise.resolve();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** Applies an update in memory (no durability); throws on a gap or a stale snapshot. */
  applyUpdate(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): void {
    this.checkOpen();
    if (update.snapshot) this.installSnapshot(update.snapshot);
    if (update.entries && update.entries.length > 0) this.appendEntries(update.entries);
    if (update.hardState) this.hard = { ...update.hardState };
  }

  protected installSnapshot(s: Snapshot): void {
    if (s.meta.index <= this.snap.meta.index && this.snap.meta.index > 0) {
      throw new MqError('SNAPSHOT_OUT_OF_DATE', `snapshot at ${s.meta.index} is older than the one held at ${this.snap.meta.index}`);
    }
    this.snap = { meta: { index: s.meta.index, term: s.meta.term, confState: cloneConfState(s.meta.confState) }, data: s.data };
    this.dummyIndex = s.meta.index;
    this.dummyTerm = s.meta.term;
    this.ents = [];
  }

  protected appendEntries(entries: Entry[]): void {
    let ents = entries;
    for (let i = 1; i < ents.length; i++) {
      if (ents[i]!.index !== ents[i - 1]!.index + 1) throw new MqError('INVALID_ARGUMENT', `entries are not contiguous at ${ents[i]!.index}`);
    }
    const first = ents[0]!.index;
    if (first > this.lastIndex() + 1) {
      throw new MqError('INVALID_ARGUMENT', `entry ${first} would leave a gap after the last index ${this.lastIndex()}`);
    }
    if (first <= this.dummyIndex) ents = ents.slice(this.dummyIndex + 1 - first);
    if (ents.length === 0) return;
    const keep = ents[0]!.index - this.dummyIndex - 1;
    this.ents.length = keep;
    for (const e of ents) this.ents.push(e);
  }

  createSnapshot(index: number, confState: ConfState, data: Uint8Array, keep = 0): Promise<Snapshot> {
    try {
      return Promise.resolve(this.makeSnapshot(index, confState, data, keep));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  protected makeSnapshot(index: number, confState: ConfState, data: Uint8Array, keep: number): Snapshot {
    this.checkOpen();
    if (index <= this.snap.meta.index) {
      throw new MqError('SNAPSHOT_OUT_OF_DATE', `snapshot at ${index} is not newer than the one held at ${this.snap.meta.index}`);
    }
    if (index > this.lastIndex()) throw new MqError('OFFSET_OUT_OF_RANGE', `snapshot index ${index} is beyond the last index ${this.lastIndex()}`);
    if (index > this.hard.commit) throw new MqError('INVALID_ARGUMENT', `snapshot index ${index} is not committed (commit ${this.hard.commit})`);
    const term = this.term(index);
    this.snap = { meta: { index, term, confState: cloneConfState(confState) }, data };
    this.compact(Math.max(this.dummyIndex, index - Math.max(0, keep)));
    return this.snap;
  }

  /** Drops entries up to and including `upTo`. */
  protected compact(upTo: number): void {
    if (upTo <= this.dummyIndex) return;
    const t = this.term(upTo);
    this.ents = this.ents.slice(upTo - this.dummyIndex);
    this.dummyIndex = upTo;
    this.dummyTerm = t;
  }

  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }

  protected checkOpen(): void {
    if (this.closed) throw new MqError('CLOSED', 'raft storage is closed');
  }
}
