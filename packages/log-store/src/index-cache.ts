/**
 * A byte budget for the offset and time indexes of closed segments, least
 * recently used first out. One cache can be shared by every log of a broker
 * (pass it as the `indexCache` component), so index memory stays bounded by
 * the budget whatever the number of partitions and their sizes. Evicted
 * indexes are re-read from their files when next needed; active segments'
 * indexes are never in here.
 */
export interface CachedIndexes {
  /** Bytes the in-memory indexes take (0 when not loaded). */
  readonly indexBytes: number;
  evictIndexes(): void;
}

export class IndexCache {
  /** Insertion order is recency order: the first entry is the least recently used. */
  private readonly entries = new Map<CachedIndexes, number>();
  private total = 0;

  constructor(readonly maxBytes: number) {}

  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** `owner`'s indexes were just used (or loaded): mark them most recent, then evict over the budget. */
  touch(owner: CachedIndexes): void {
    this.forget(owner);
    const bytes = owner.indexBytes;
    this.entries.set(owner, bytes);
    this.total += bytes;
    this.evict(owner);
  }

  /** `owner` leaves the cache (it became active, was deleted, or its log closed). */
  forget(owner: CachedIndexes): void {
    const bytes = this.entries.get(owner);
    if (bytes === undefined) return;
    this.entries.delete(owner);
    this.total -= bytes;
  }

  private evict(keep: CachedIndexes): void {
    for (const [owner, bytes] of this.entries) {
      if (this.total <= this.maxBytes) return;
      if (owner === keep) continue;
      this.entries.delete(owner);
      this.total -= bytes;
      owner.evictIndexes();
    }
  }
}
