/** Raft data types shared by the core, storage, node driver and transport. */

export const EntryType = { Normal: 0, ConfChange: 1 } as const;
export type EntryType = (typeof EntryType)[keyof typeof EntryType];

export interface Entry {
  term: number;
  index: number;
  type: EntryType;
  data: Uint8Array;
}

export interface HardState {
  term: number;
  vote: number; // 0 = none
  commit: number;
}

export interface ConfState {
  voters: number[];
  learners: number[];
}

export const ConfChangeOp = { AddVoter: 0, AddLearner: 1, RemoveNode: 2 } as const;
export type ConfChangeOp = (typeof ConfChangeOp)[keyof typeof ConfChangeOp];

export interface ConfChange {
  op: ConfChangeOp;
  nodeId: number;
  context?: Uint8Array;
}

export interface SnapshotMeta {
  index: number;
  term: number;
  confState: ConfState;
}

export interface Snapshot {
  meta: SnapshotMeta;
  data: Uint8Array;
}

export const MessageType = {
  Hup: 0, // local: start an election
  Beat: 1, // local: leader sends heartbeats
  Prop: 2, // local proposal
  App: 3,
  AppResp: 4,
  Vote: 5,
  VoteResp: 6,
  PreVote: 7,
  PreVoteResp: 8,
  Snap: 9, // one chunk of a snapshot
  SnapResp: 10, // chunk acknowledgement (or the offset the follower wants)
  Heartbeat: 11,
  HeartbeatResp: 12,
  TransferLeader: 13,
  TimeoutNow: 14,
  ReadIndex: 15,
  ReadIndexResp: 16,
  CheckQuorum: 17, // local
} as const;
export type MessageType = (typeof MessageType)[keyof typeof MessageType];

export const MESSAGE_TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(MessageType).map(([k, v]) => [v, k]),
);

export interface Message {
  type: MessageType;
  to: number;
  from: number;
  term: number;
  logTerm: number;
  index: number;
  entries: Entry[];
  commit: number;
  reject: boolean;
  rejectHint: number;
  context: Uint8Array;
  /** Snap: metadata of the snapshot being sent (size = total data bytes). */
  snapshot?: SnapshotMeta & { size: number };
  snapOffset: number;
  snapData: Uint8Array;
  snapDone: boolean;
}

export const EMPTY = new Uint8Array(0);

export function message(fields: Partial<Message> & Pick<Message, 'type'>): Message {
  return {
    to: 0,
    from: 0,
    term: 0,
    logTerm: 0,
    index: 0,
    entries: [],
    commit: 0,
    reject: false,
    rejectHint: 0,
    context: EMPTY,
    snapOffset: 0,
    snapData: EMPTY,
    snapDone: false,
    ...fields,
  };
}

export const StateRole = { Follower: 'follower', PreCandidate: 'pre-candidate', Candidate: 'candidate', Leader: 'leader' } as const;
export type StateRole = (typeof StateRole)[keyof typeof StateRole];

export interface SoftState {
  leader: number;
  role: StateRole;
}

export interface ReadState {
  index: number;
  context: Uint8Array;
}

/**
 * What the core hands out after a batch of input. The driver persists
 * `snapshot`, `entries` and `hardState` durably, then sends `messages`, then
 * installs `snapshot` into the state machine and applies `committedEntries`,
 * then calls `advance(ready)`.
 */
export interface Ready {
  softState?: SoftState;
  hardState?: HardState;
  entries: Entry[];
  snapshot?: Snapshot;
  committedEntries: Entry[];
  messages: Message[];
  readStates: ReadState[];
  /** Proposals the core had to drop (index 0 ones are rejected before append). */
}

export function entrySize(e: Entry): number {
  return e.data.length + 24;
}

export function isHardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

export function cloneConfState(c: ConfState): ConfState {
  return { voters: [...c.voters], learners: [...c.learners] };
}
