import type { ConfState, Entry, HardState, Snapshot } from '../core/types.js';

/**
 * The storage a Raft node stands on. Reads are synchronous (implementations
 * keep the log since the last snapshot in memory, as etcd's MemoryStorage
 * does beside its WAL); writes are asynchronous and resolve only once the
 * data is durable (fsynced for file storage).
 */
export interface RaftStorage {
  /** Hard state and membership at start-up (membership as of the snapshot). */
  initialState(): { hardState: HardState; confState: ConfState };
  /** Index of the first entry still held (snapshot index + 1). */
  firstIndex(): number;
  lastIndex(): number;
  /** Term of entry `index`; firstIndex()-1 answers the snapshot term. Throws LOG_COMPACTED below that. */
  term(index: number): number;
  /** Entries [lo, hi), at least one, at most `maxBytes` beyond the first. */
  entries(lo: number, hi: number, maxBytes?: number): Entry[];
  snapshot(): Snapshot;

  /**
   * Durably writes, in this order: a snapshot (dropping the entries it
   * covers and any that conflict with it), entries (replacing the log from
   * entries[0].index on), then the hard state. Resolves once fsynced.
   */
  save(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): Promise<void>;
  /**
   * Records a snapshot of the state machine at `index` (which must be
   * applied, so in the log) and drops the log up to it, keeping `keep`
   * entries before it for slow followers.
   */
  createSnapshot(index: number, confState: ConfState, data: Uint8Array, keep?: number): Promise<Snapshot>;
  close(): Promise<void>;
}
