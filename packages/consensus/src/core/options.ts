import { MqError } from '@mq/protocol/errors';

export interface RaftOptions {
  /** This node's id (a positive integer, unique in the cluster). */
  id: number;
  /** Ticks without hearing from a leader before campaigning (randomized in [electionTick, 2*electionTick)). */
  electionTick?: number;
  /** Ticks between leader heartbeats. */
  heartbeatTick?: number;
  /** Run a pre-vote round before bumping the term (avoids disruption by a rejoining node). */
  preVote?: boolean;
  /** A leader steps down when it has not heard from a quorum within an election timeout; followers then honour a leader lease. */
  checkQuorum?: boolean;
  /** Byte cap of the entries in one append message (at least one entry is always sent). */
  maxSizePerMsg?: number;
  /** Largest entry a proposal may carry (MESSAGE_TOO_LARGE beyond). Keep it below the transport's frame limit. */
  maxEntryBytes?: number;
  /** Pipelining window per follower: messages and bytes in flight. */
  maxInflightMsgs?: number;
  maxInflightBytes?: number;
  /** Proposals are dropped (PROPOSAL_DROPPED, retriable) when the leader's uncommitted tail exceeds this. */
  maxUncommittedBytes?: number;
  /** Byte cap of the committed entries handed out in one Ready. */
  maxApplyBytes?: number;
  /** Snapshot chunk size for InstallSnapshot. */
  snapshotChunkBytes?: number;
  /** Largest snapshot a follower accepts. */
  maxSnapshotBytes?: number;
  /** Index the state machine has already applied (restart with a durable state machine). */
  applied?: number;
}

export const DEFAULT_ELECTION_TICK = 10;
export const DEFAULT_HEARTBEAT_TICK = 1;
export const DEFAULT_MAX_SIZE_PER_MSG = 1024 * 1024;
export const DEFAULT_MAX_ENTRY_BYTES = 1024 * 1024;
export const DEFAULT_MAX_INFLIGHT_MSGS = 256;
export const DEFAULT_MAX_INFLIGHT_BYTES = 32 * 1024 * 1024;
export const DEFAULT_MAX_UNCOMMITTED_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_APPLY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_SNAPSHOT_CHUNK_BYTES = 1024 * 1024;
export const DEFAULT_MAX_SNAPSHOT_BYTES = 1024 * 1024 * 1024;

export type ParsedRaftOptions = Required<RaftOptions>;

function positiveInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v <= 0) throw new MqError('INVALID_ARGUMENT', `${name} must be a positive integer, got ${v}`);
  return v;
}

export function parseRaftOptions(o: RaftOptions): ParsedRaftOptions {
  const p: ParsedRaftOptions = {
    id: positiveInt('id', o.id),
    electionTick: positiveInt('electionTick', o.electionTick ?? DEFAULT_ELECTION_TICK),
    heartbeatTick: positiveInt('heartbeatTick', o.heartbeatTick ?? DEFAULT_HEARTBEAT_TICK),
    preVote: o.preVote ?? true,
    checkQuorum: o.checkQuorum ?? true,
    maxSizePerMsg: positiveInt('maxSizePerMsg', o.maxSizePerMsg ?? DEFAULT_MAX_SIZE_PER_MSG),
    maxEntryBytes: positiveInt('maxEntryBytes', o.maxEntryBytes ?? DEFAULT_MAX_ENTRY_BYTES),
    maxInflightMsgs: positiveInt('maxInflightMsgs', o.maxInflightMsgs ?? DEFAULT_MAX_INFLIGHT_MSGS),
    maxInflightBytes: positiveInt('maxInflightBytes', o.maxInflightBytes ?? DEFAULT_MAX_INFLIGHT_BYTES),
    maxUncommittedBytes: positiveInt('maxUncommittedBytes', o.maxUncommittedBytes ?? DEFAULT_MAX_UNCOMMITTED_BYTES),
    maxApplyBytes: positiveInt('maxApplyBytes', o.maxApplyBytes ?? DEFAULT_MAX_APPLY_BYTES),
    snapshotChunkBytes: positiveInt('snapshotChunkBytes', o.snapshotChunkBytes ?? DEFAULT_SNAPSHOT_CHUNK_BYTES),
    maxSnapshotBytes: positiveInt('maxSnapshotBytes', o.maxSnapshotBytes ?? DEFAULT_MAX_SNAPSHOT_BYTES),
    applied: o.applied ?? 0,
  };
  if (p.heartbeatTick >= p.electionTick) {
    throw new MqError('INVALID_ARGUMENT', `heartbeatTick (${p.heartbeatTick}) must be smaller than electionTick (${p.electionTick})`);
  }
  if (!Number.isSafeInteger(p.applied) || p.applied < 0) throw new MqError('INVALID_ARGUMENT', `applied must be >= 0, got ${p.applied}`);
  return p;
}
