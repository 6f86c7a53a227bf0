/** Per-follower replication state on the leader (etcd raft's tracker.Progress). */

export const ProgressState = { Probe: 'probe', Replicate: 'replicate', Snapshot: 'snapshot' } as const;
export type ProgressState = (typeof ProgressState)[keyof typeof ProgressState];

/** Bounded window of in-flight append messages: by count and by bytes. */
export class Inflights {
  private readonly idx: number[] = [];
  private readonly sizes: number[] = [];
  bytes = 0;

  constructor(
    readonly maxCount: number,
    readonly maxBytes: number,
  ) {}

  get count(): number {
    return this.idx.length;
  }

  add(index: number, bytes: number): void {
    this.idx.push(index);
    this.sizes.push(bytes);
    this.bytes += bytes;
  }

  full(): boolean {
    return this.idx.length >= this.maxCount || this.bytes >= this.maxBytes;
  }

  /** Frees every message whose last index is <= `to`. */
  freeLE(to: number): void {
    let n = 0;
    while (n < this.idx.length && this.idx[n]! <= to) {
      this.bytes -= this.sizes[n]!;
      n++;
    }
    this.idx.splice(0, n);
    this.sizes.splice(0, n);
  }

  freeFirst(): void {
    if (this.idx.length > 0) this.freeLE(this.idx[0]!);
  }

  reset(): void {
    this.idx.length = 0;
    this.sizes.length = 0;
    this.bytes = 0;
  }
}

export class Progress {
  match = 0;
  next: number;
  state: ProgressState = ProgressState.Probe;
  /** Probe: a message is out and we wait for its answer (or a heartbeat reply). */
  probeSent = false;
  /** Snapshot: index/term of the snapshot being sent and the next chunk offset. */
  pendingSnapshot = 0;
  snapTerm = 0;
  snapOffset = 0;
  /** Set on any reply; check-quorum clears it every election timeout. */
  recentActive = false;
  readonly inflights: Inflights;

  constructor(
    next: number,
    public isLearner: boolean,
    maxInflightMsgs: number,
    maxInflightBytes: number,
  ) {
    this.next = next;
    this.inflights = new Inflights(maxInflightMsgs, maxInflightBytes);
  }

  private resetState(state: ProgressState): void {
    this.probeSent = false;
    this.pendingSnapshot = 0;
    this.snapOffset = 0;
    this.snapTerm = 0;
    this.state = state;
    this.inflights.reset();
  }

  becomeProbe(): void {
    if (this.state === ProgressState.Snapshot) {
      const pending = this.pendingSnapshot;
      this.resetState(ProgressState.Probe);
      this.next = Math.max(this.match + 1, pending + 1);
    } else {
      this.resetState(ProgressState.Probe);
      this.next = this.match + 1;
    }
  }

  becomeReplicate(): void {
    this.resetState(ProgressState.Replicate);
    this.next = this.match + 1;
  }

  becomeSnapshot(index: number, term: number): void {
    this.resetState(ProgressState.Snapshot);
    this.pendingSnapshot = index;
    this.snapTerm = term;
  }

  /** An ack for `n`: returns false when it is stale. */
  maybeUpdate(n: number): boolean {
    let updated = false;
    if (this.match < n) {
      this.match = n;
      updated = true;
      this.probeSent = false;
    }
    this.next = Math.max(this.next, n + 1);
    return updated;
  }

  optimisticUpdate(n: number): void {
    this.next = n + 1;
  }

  /**
   * A rejection of an append at `rejected`; `matchHint` is the follower's
   * hint (with the term-based search already applied by the leader).
   * Returns false when the rejection is stale.
   */
  maybeDecrTo(rejected: number, matchHint: number): boolean {
    if (this.state === ProgressState.Replicate) {
      if (rejected <= this.match) return false;
      this.next = this.match + 1;
      return true;
    }
    if (this.next - 1 !== rejected) return false;
    this.next = Math.max(Math.min(rejected, matchHint + 1), this.match + 1, 1);
    this.probeSent = false;
    return true;
  }

  isPaused(): boolean {
    switch (this.state) {
      case ProgressState.Probe:
        return this.probeSent;
      case ProgressState.Replicate:
        return this.inflights.full();
      default:
        return true;
    }
  }
}
