/**
 * The active controller's clock for unclean recovery: when each leaderless
 * partition started waiting for its candidates' log ends, and which have
 * waited `unclean.recovery.wait.ms` and may be elected from what has been
 * reported (when electable). A new leader epoch of the partition starts a
 * new wait; partitions no longer waiting are forgotten. No I/O, no clock of
 * its own: the caller passes `now`.
 */
import type { PendingRecovery } from './metadata-state.js';

export interface RecoveryRound {
  /** Partitions that started waiting in this round (to log). */
  started: PendingRecovery[];
  /** Partitions whose wait is over and that can be elected now (send electRecovered). */
  due: PendingRecovery[];
}

export class RecoveryWaits {
  private readonly since = new Map<string, { at: number; leaderEpoch: number }>();

  constructor(private readonly waitMs: number) {}

  round(pending: readonly PendingRecovery[], now: number): RecoveryRound {
    const out: RecoveryRound = { started: [], due: [] };
    const seen = new Set<string>();
    for (const r of pending) {
      // Per incarnation: a topic deleted and created again under the name waits afresh.
      const k = `${r.topicId}\u0000${r.partition}`;
      seen.add(k);
      let w = this.since.get(k);
      if (!w || w.leaderEpoch !== r.leaderEpoch) {
        w = { at: now, leaderEpoch: r.leaderEpoch };
        this.since.set(k, w);
        out.started.push(r);
      }
      if (r.electable && now - w.at >= this.waitMs) {
        this.since.delete(k);
        out.due.push(r);
      }
    }
    for (const k of [...this.since.keys()]) if (!seen.has(k)) this.since.delete(k);
    return out;
  }

  /** A new active controller term: every wait starts again. */
  clear(): void {
    this.since.clear();
  }
}
