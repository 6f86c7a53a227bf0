/**
 * The metadata log as broker-only processes (observers) read it. On every
 * voter it sits between Raft and the MetadataState: each committed command
 * is applied to the state and kept in a bounded window of recent entries, so
 * the active controller can answer "what came after index i" with those
 * entries, or with a snapshot of the whole state when i is older than the
 * window (a new or long-gone observer). Only applied (so committed) entries
 * are ever served. `waitBeyond` is the long poll of an observer's fetch.
 */
import { ConfChangeOp, type ConfChange, type ConfState, type Entry, type StateMachine } from '@mq/consensus';
import type { MetadataState } from './metadata-state.js';
import { decodeVoterContext } from './quorum.js';

export const DEFAULT_FEED_ENTRIES = 5000;

export interface FeedEntry {
  readonly index: number;
  readonly data: Uint8Array;
}

export type FeedRead =
  | { readonly kind: 'entries'; readonly entries: readonly FeedEntry[]; readonly applied: number }
  | { readonly kind: 'snapshot'; readonly data: Uint8Array; readonly index: number; readonly applied: number };

export interface MetadataFeedOptions {
  /** How many recent entries are kept for observers (older ones are served as a snapshot). */
  maxEntries?: number;
}

export class MetadataFeed implements StateMachine {
  private entries: FeedEntry[] = [];
  /** Entries after this index are in the window; an observer at or past it gets entries, one before it a snapshot. */
  private base = 0;
  private readonly maxEntries: number;
  private readonly waiters = new Set<() => void>();
  private readonly membershipWatchers = new Set<(cs: ConfState | undefined) => void>();

  constructor(
    readonly state: MetadataState,
    options: MetadataFeedOptions = {},
  ) {
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_FEED_ENTRIES);
  }

  /** The index of the last applied command. */
  get applied(): number {
    return this.state.lastApplied;
  }

  apply(entry: Entry): unknown {
    const result = this.state.apply(entry);
    this.entries.push({ index: entry.index, data: entry.data });
    if (this.entries.length > this.maxEntries) {
      const dropped = this.entries.splice(0, this.entries.length - this.maxEntries);
      this.base = dropped[dropped.length - 1]!.index;
    }
    this.wake();
    return result;
  }

  /** A committed membership change of the quorum: the address it carries goes into the state (quorum.ts). */
  applyConfChange(cc: ConfChange, cs: ConfState): void {
    this.state.applyQuorumChange(cc.nodeId, cc.op === ConfChangeOp.RemoveNode, decodeVoterContext(cc.nodeId, cc.context));
    for (const w of [...this.membershipWatchers]) w(cs);
  }

  /**
   * Calls `fn` after each committed membership change (with the membership
   * after it) and after a snapshot was restored (undefined: ask Raft).
   */
  onMembershipChange(fn: (cs: ConfState | undefined) => void): () => void {
    this.membershipWatchers.add(fn);
    return () => this.membershipWatchers.delete(fn);
  }

  snapshot(): Uint8Array {
    return this.state.snapshot();
  }

  restore(data: Uint8Array, index: number): void {
    this.state.restore(data, index);
    this.entries = [];
    this.base = index;
    this.wake();
    for (const w of [...this.membershipWatchers]) w(undefined);
  }

  /** What an observer that has applied up to `after` needs next (at most `maxEntries` entries). */
  read(after: number, maxEntries: number): FeedRead {
    const applied = this.applied;
    if (after < this.base) return { kind: 'snapshot', data: this.state.snapshot(), index: applied, applied };
    let from = this.entries.findIndex((e) => e.index > after);
    if (from < 0) from = this.entries.length;
    return { kind: 'entries', entries: this.entries.slice(from, from + Math.max(1, maxEntries)), applied };
  }

  /** Resolves once a command after `after` is applied, or after `timeoutMs`, or on abort. */
  waitBeyond(after: number, timeoutMs: number, setTimer: (fn: () => void, ms: number) => () => void, signal?: AbortSignal): Promise<void> {
    if (this.applied > after || after < this.base || timeoutMs <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        cancel();
        this.waiters.delete(check);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const check = () => {
        if (this.applied > after || after < this.base) done();
      };
      const cancel = setTimer(done, timeoutMs);
      this.waiters.add(check);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    for (const w of [...this.waiters]) w();
  }
}
