/**
 * The metadata quorum's membership (KIP-853 on mq's Raft): which controllers
 * vote, which are learners catching up, and where each one's Raft listener
 * is. The founding voters come from `controller.quorum.voters` (the first
 * entries of every voter's log, written identically by each); every later
 * change is a Raft ConfChange entry whose context carries the added
 * controller's address, so every voter and learner learns it from the log,
 * and the MetadataState keeps it in its snapshot. After the first change
 * the log, not the static list, is the membership.
 */
import type { ConfState, ProgressStatus, RaftStatus } from '@mq/consensus';
import { MqError } from '@mq/protocol/errors';
import type { Voter } from './options.js';
import type { QuorumAddress } from './types.js';

/** The context of a ConfChange entry that adds controller `id`: its Raft listener. */
export function encodeVoterContext(a: { host: string; port: number }): Uint8Array {
  return Buffer.from(JSON.stringify({ host: a.host, port: a.port }), 'utf8');
}

/** The address in a ConfChange context; undefined for none (the founding entries) or one that is not an address. */
export function decodeVoterContext(id: number, context: Uint8Array | undefined): QuorumAddress | undefined {
  if (!context || context.length === 0) return undefined;
  try {
    const o = JSON.parse(Buffer.from(context.buffer, context.byteOffset, context.byteLength).toString('utf8')) as { host?: unknown; port?: unknown };
    if (typeof o.host !== 'string' || o.host === '' || typeof o.port !== 'number' || !Number.isSafeInteger(o.port) || o.port < 1 || o.port > 65535) return undefined;
    return { id, host: o.host, port: o.port };
  } catch {
    return undefined;
  }
}

/** `host:port` of a Raft listener, as the CLI and the AlterRaftVoters request give it. */
export function parseVoterAddress(text: string): { host: string; port: number } {
  const m = /^(.+):(\d+)$/.exec(text.trim());
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) throw new MqError('INVALID_REQUEST', `"${text}" is not host:port of the controller's Raft listener (e.g. 127.0.0.1:19094)`);
  return { host: m[1]!, port };
}

export interface QuorumMemberView {
  id: number;
  /** host:port of its Raft listener, '' when unknown. */
  address: string;
  voter: boolean;
  /** The last log index the active controller knows it holds. */
  logEnd: number;
  /** Entries behind the active controller's last index. */
  lag: number;
  recentlyActive: boolean;
}

export interface QuorumView {
  leaderId: number;
  term: number;
  highWatermark: number;
  members: QuorumMemberView[];
}

/** The quorum as the active controller's Raft status shows it. */
export function quorumView(st: RaftStatus, addressOf: (id: number) => string): QuorumView {
  const member = (id: number, voter: boolean): QuorumMemberView => {
    const p: ProgressStatus | undefined = st.progress[id];
    const logEnd = id === st.id ? st.lastIndex : (p?.match ?? 0);
    return { id, address: addressOf(id), voter, logEnd, lag: Math.max(0, st.lastIndex - logEnd), recentlyActive: id === st.id || (p?.recentActive ?? false) };
  };
  return {
    leaderId: st.leader,
    term: st.term,
    highWatermark: st.commit,
    members: [...st.confState.voters.map((id) => member(id, true)), ...st.confState.learners.map((id) => member(id, false))],
  };
}

/** Every member of `cs` (voters and learners). */
export function membersOf(cs: ConfState): number[] {
  return [...cs.voters, ...cs.learners];
}

/** A member's Raft listener: recorded by a membership change, else its place in the static voters. */
export function memberAddress(id: number, recorded: QuorumAddress | undefined, staticVoters: readonly Voter[]): { host: string; port: number } | undefined {
  if (recorded) return recorded;
  const v = staticVoters.find((x) => x.id === id);
  return v ? { host: v.host, port: v.port } : undefined;
}
