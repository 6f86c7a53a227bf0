import { MqError } from '@mq/protocol/errors';
import type { RaftStorage } from '../storage/types.js';
import { entrySize, type Entry, type Snapshot } from './types.js';

/**
 * The log as the core sees it: what storage holds durably plus the
 * `unstable` tail (entries and possibly a snapshot) not yet handed to
 * storage. Mirrors etcd raft's raftLog/unstable.
 */
export class RaftLog {
  /** Entries not yet persisted; unstable[0].index === offset. */
  unstable: Entry[] = [];
  offset: number;
  unstableSnapshot: Snapshot | undefined;
  committed: number;
  applied: number;
  /** Highest index handed out for applying (>= applied). */
  applying: number;

  constructor(readonly storage: RaftStorage) {
    const first = storage.firstIndex();
    this.offset = storage.lastIndex() + 1;
    this.committed = first - 1;
    this.applied = first - 1;
    this.applying = first - 1;
  }

  firstIndex(): number {
    if (this.unstableSnapshot) return this.unstableSnapshot.meta.index + 1;
    return this.storage.firstIndex();
  }

  lastIndex(): number {
    if (this.unstable.length > 0) return this.offset + this.unstable.length - 1;
    if (this.unstableSnapshot) return this.unstableSnapshot.meta.index;
    return this.storage.lastIndex();
  }

  lastTerm(): number {
    return this.term(this.lastIndex());
  }

  /** Term at `i`, or -1 when `i` is outside [firstIndex-1, lastIndex] (compacted or beyond). */
  termOr(i: number): number {
    if (i > this.lastIndex()) return -1;
    if (this.unstable.length > 0 && i >= this.offset) return this.unstable[i - this.offset]!.term;
    if (this.unstableSnapshot) {
      if (i === this.unstableSnapshot.meta.index) return this.unstableSnapshot.meta.term;
      if (i < this.unstableSnapshot.meta.index) return -1;
    }
    if (i < this.storage.firstIndex() - 1) return -1;
    return this.storage.term(i);
  }

  term(i: number): number {
    const t = this.termOr(i);
    if (t < 0) {
      throw new MqError('LOG_COMPACTED', `entry ${i} is not in the log [${this.firstIndex()}, ${this.lastIndex()}]`, { index: i });
    }
    return t;
  }

  matchTerm(i: number, term: number): boolean {
    return this.termOr(i) === term;
  }

  isUpToDate(lastIndex: number, term: number): boolean {
    const lt = this.lastTerm();
    return term > lt || (term === lt && lastIndex >= this.lastIndex());
  }

  /** Appends entries after truncating any conflicting suffix; returns the new last index. */
  append(ents: Entry[]): number {
    if (ents.length === 0) return this.lastIndex();
    const after = ents[0]!.index - 1;
    if (after < this.committed) {
      throw new MqError('INVALID_ARGUMENT', `refusing to overwrite committed entry ${after + 1} (committed ${this.committed})`);
    }
    const first = ents[0]!.index;
    if (this.unstable.length === 0 && !this.unstableSnapshot) {
      this.offset = first;
      this.unstable = [...ents];
    } else if (first === this.offset + this.unstable.length) {
      this.unstable.push(...ents);
    } else if (first <= this.offset) {
      // Replaces all unstable entries (and, through storage.save, the durable suffix).
      this.offset = first;
      this.unstable = [...ents];
    } else {
      this.unstable = this.unstable.slice(0, first - this.offset).concat(ents);
    }
    return this.lastIndex();
  }

  /**
   * Follower append: when (index, logTerm) matches, appends what is new and
   * moves commit forward; returns the last new index, or null on mismatch.
   */
  maybeAppend(index: number, logTerm: number, commit: number, ents: Entry[]): number | null {
    if (!this.matchTerm(index, logTerm)) return null;
    const lastNew = index + ents.length;
    const ci = this.findConflict(ents);
    if (ci !== 0) {
      if (ci <= this.committed) {
        throw new MqError('INVALID_REQUEST', `entry ${ci} conflicts with committed entry (committed ${this.committed})`);
      }
      this.append(ents.slice(ci - (index + 1)));
    }
    this.commitTo(Math.min(commit, lastNew));
    return lastNew;
  }

  /** First index whose term differs from ours or that we lack; 0 if all match. */
  findConflict(ents: Entry[]): number {
    for (const e of ents) if (!this.matchTerm(e.index, e.term)) return e.index;
    return 0;
  }

  /** Largest (index, term) with index <= `index` and term <= `term`, for fast back-off. */
  findConflictByTerm(index: number, term: number): [number, number] {
    let i = Math.min(index, this.lastIndex());
    for (;;) {
      const t = this.termOr(i);
      if (t < 0) return [i, 0];
      if (t <= term) return [i, t];
      i--;
    }
  }

  commitTo(c: number): void {
    if (c > this.committed) {
      if (c > this.lastIndex()) {
        throw new MqError('INVALID_REQUEST', `commit ${c} is beyond the last index ${this.lastIndex()}`);
      }
      this.committed = c;
    }
  }

  maybeCommit(maxIndex: number, term: number): boolean {
    if (maxIndex > this.committed && this.termOr(maxIndex) === term) {
      this.commitTo(maxIndex);
      return true;
    }
    return false;
  }

  appliedTo(i: number): void {
    if (i === 0) return;
    if (i > this.committed || i < this.applied) {
      throw new MqError('INVALID_ARGUMENT', `applied ${i} is out of range [${this.applied}, ${this.committed}]`);
    }
    this.applied = i;
    if (this.applying < i) this.applying = i;
  }

  /** Entries [lo, lastIndex] capped at maxBytes (at least one). */
  entriesFrom(lo: number, maxBytes: number): Entry[] {
    const last = this.lastIndex();
    if (lo > last) return [];
    return this.slice(lo, last + 1, maxBytes);
  }

  slice(lo: number, hi: number, maxBytes: number): Entry[] {
    if (lo >= hi) return [];
    const first = this.firstIndex();
    if (lo < first) throw new MqError('LOG_COMPACTED', `entry ${lo} is compacted (first index ${first})`, { index: lo });
    const out: Entry[] = [];
    let bytes = 0;
    if (lo < this.offset) {
      const sHi = Math.min(hi, this.offset, this.storage.lastIndex() + 1);
      if (lo < sHi) {
        for (const e of this.storage.entries(lo, sHi, maxBytes)) {
          bytes += entrySize(e);
          if (out.length > 0 && bytes > maxBytes) return out;
          out.push(e);
        }
        if (out.length < sHi - lo) return out;
      }
    }
    const uLo = Math.max(lo, this.offset);
    for (let i = uLo; i < hi; i++) {
      const e = this.unstable[i - this.offset];
      if (!e) break;
      bytes += entrySize(e);
      if (out.length > 0 && bytes > maxBytes) break;
      out.push(e);
    }
    return out;
  }

  hasNextCommitted(): boolean {
    return this.committed > this.applying && this.committed >= this.firstIndex();
  }

  /** Committed entries not yet handed out for applying. */
  nextCommitted(maxBytes: number): Entry[] {
    const lo = Math.max(this.applying + 1, this.firstIndex());
    if (this.committed < lo) return [];
    return this.slice(lo, this.committed + 1, maxBytes);
  }

  /** After storage persisted entries up to (i, t). */
  stableTo(i: number, t: number): void {
    if (this.unstable.length === 0 || i < this.offset) return;
    const e = this.unstable[i - this.offset];
    if (!e || e.term !== t) return;
    this.unstable = this.unstable.slice(i + 1 - this.offset);
    this.offset = i + 1;
  }

  stableSnapTo(i: number): void {
    if (this.unstableSnapshot && this.unstableSnapshot.meta.index === i) this.unstableSnapshot = undefined;
  }

  restore(s: Snapshot): void {
    this.committed = s.meta.index;
    this.unstable = [];
    this.offset = s.meta.index + 1;
    this.unstableSnapshot = s;
  }
}
