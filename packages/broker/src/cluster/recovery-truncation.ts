/**
 * What a replica will truncate to follow a leader elected by unclean
 * recovery: of the records it holds from before the recovery epoch (what it
 * has fetched since from the new leader is the leader's own), those the
 * leader did not have when it was elected. Truncation by leader epoch cuts
 * from the leader's reported end offset or from this replica's first epoch
 * the leader never had, whichever is lower. Pure: the replica manager logs
 * the answer.
 */

export interface RecoveredLeader {
  /** The leader epoch the recovery election started. */
  readonly leaderEpoch: number;
  /** The elected replica's last epoch and log end when it was elected. */
  readonly lastEpoch: number;
  readonly endOffset: number;
}

export interface RecoveryTruncation {
  from: number;
  to: number;
  /** This replica's last leader epoch before the recovery epoch. */
  lastEpoch: number;
}

/** The offsets [from, to) this replica must give up to follow `leader`, or undefined when it holds nothing the leader lacks. */
export function recoveryTruncation(
  epochs: ReadonlyArray<{ readonly epoch: number; readonly startOffset: number }>,
  logEndOffset: number,
  leader: RecoveredLeader,
): RecoveryTruncation | undefined {
  if (leader.endOffset < 0) return undefined;
  const firstFromLeader = epochs.find((e) => e.epoch >= leader.leaderEpoch);
  const end = Math.min(logEndOffset, firstFromLeader?.startOffset ?? logEndOffset);
  // Epochs that hold records here (an epoch a replica led without appending starts at its end).
  const held = epochs.filter((e) => e.epoch < leader.leaderEpoch && e.startOffset < end);
  const newer = held.find((e) => e.epoch > leader.lastEpoch)?.startOffset ?? end;
  const from = Math.min(leader.endOffset, newer);
  return end > from ? { from, to: end, lastEpoch: held.at(-1)?.epoch ?? -1 } : undefined;
}
