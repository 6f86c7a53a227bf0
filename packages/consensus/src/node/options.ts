import { MqError } from '@mq/protocol/errors';
import type { RaftOptions } from '../core/options.js';

export interface RaftNodeOptions extends RaftOptions {
  /** Initial voters of a new cluster (same list on every founding node). Empty to join an existing cluster. */
  peers?: number[];
  /** Milliseconds per Raft tick (election timeout = electionTick * tickMs, randomized up to 2x). */
  tickMs?: number;
  /** Default timeout of propose/readIndex/membership calls. */
  requestTimeoutMs?: number;
  /** Proposals (and, separately, reads) waiting on this node before propose()/readIndex() refuse with BUFFER_FULL. */
  maxPendingProposals?: number;
  /** Take a snapshot and compact the log every this many applied entries (0 = never automatically). */
  snapshotEntries?: number;
  /** Entries kept before a snapshot so that slightly slow followers need no snapshot. */
  compactionKeepEntries?: number;
}

export const DEFAULT_TICK_MS = 100;
export const DEFAULT_REQUEST_TIMEOUT_MS = 5000;
export const DEFAULT_MAX_PENDING_PROPOSALS = 10_000;
export const DEFAULT_SNAPSHOT_ENTRIES = 10_000;
export const DEFAULT_COMPACTION_KEEP_ENTRIES = 1_000;

export type ParsedRaftNodeOptions = RaftOptions &
  Required<Pick<RaftNodeOptions, 'peers' | 'tickMs' | 'requestTimeoutMs' | 'maxPendingProposals' | 'snapshotEntries' | 'compactionKeepEntries'>>;

export function parseRaftNodeOptions(o: RaftNodeOptions): ParsedRaftNodeOptions {
  const nonNeg = (name: string, v: number) => {
    if (!Number.isSafeInteger(v) || v < 0) throw new MqError('INVALID_ARGUMENT', `${name} must be a non-negative integer, got ${v}`);
    return v;
  };
  const peers = [...new Set(o.peers ?? [])].sort((a, b) => a - b);
  for (const p of peers) if (!Number.isSafeInteger(p) || p <= 0) throw new MqError('INVALID_ARGUMENT', `peer id ${p} must be a positive integer`);
  if (peers.length > 0 && !peers.includes(o.id)) {
    throw new MqError('INVALID_ARGUMENT', `peers [${peers.join(', ')}] must include this node's id ${o.id} (leave peers empty to join an existing cluster)`);
  }
  const p: ParsedRaftNodeOptions = {
    ...o,
    peers,
    tickMs: nonNeg('tickMs', o.tickMs ?? DEFAULT_TICK_MS) || DEFAULT_TICK_MS,
    requestTimeoutMs: nonNeg('requestTimeoutMs', o.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    maxPendingProposals: nonNeg('maxPendingProposals', o.maxPendingProposals ?? DEFAULT_MAX_PENDING_PROPOSALS),
    snapshotEntries: nonNeg('snapshotEntries', o.snapshotEntries ?? DEFAULT_SNAPSHOT_ENTRIES),
    compactionKeepEntries: nonNeg('compactionKeepEntries', o.compactionKeepEntries ?? DEFAULT_COMPACTION_KEEP_ENTRIES),
  };
  return p;
}
