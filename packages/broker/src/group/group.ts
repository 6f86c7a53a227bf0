/**
 * One consumer group's state as the coordinator holds it. Plain data plus
 * small queries; every transition lives in group-coordinator.ts.
 */
import type { TimerHandle } from '@mq/protocol/components';
import type { CommittedOffset, GroupState, JoinGroupResponse, SyncGroupResponse } from './types.js';

export interface Protocol {
  name: string;
  metadata: Buffer;
}

export interface Member {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: Protocol[];
  assignment: Buffer;
  /** Set while a JoinGroup of this member waits for the rebalance to complete. */
  awaitingJoin?: (response: JoinGroupResponse) => void;
  /** Set while a SyncGroup of this member waits for the leader's assignment. */
  awaitingSync?: (response: SyncGroupResponse) => void;
  sessionTimer?: TimerHandle;
}

export function offsetKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function splitOffsetKey(key: string): { topic: string; partition: number } {
  const i = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
}

export class Group {
  state: GroupState = 'Empty';
  stateTimestamp: number;
  generationId = 0;
  protocolType: string | null = null;
  protocolName: string | null = null;
  leaderId: string | null = null;
  readonly members = new Map<string, Member>();
  /** Member ids handed out with MEMBER_ID_REQUIRED that have not joined yet, with their expiry timers. */
  readonly pendingMembers = new Map<string, TimerHandle>();
  /** groupInstanceId → current member id. */
  readonly staticMembers = new Map<string, string>();
  readonly offsets = new Map<string, CommittedOffset>();
  /** Whether the group's metadata was ever written to the offsets log (removing it then needs a tombstone). */
  stored = false;
  /** Offsets being written, so a fetch can tell (and deletes can wait). */
  pendingWrites = 0;
  joinTimer?: TimerHandle;
  /** Initial delayed join of an empty group: time left of the rebalance timeout, and whether members arrived. */
  initialDelay?: { remainingMs: number; newMemberAdded: boolean };

  constructor(
    readonly groupId: string,
    readonly partition: number,
    now: number,
  ) {
    this.stateTimestamp = now;
  }

  transition(state: GroupState, now: number): void {
    this.state = state;
    this.stateTimestamp = now;
  }

  /** Protocol names every member supports (in the order of the first member's preference). */
  candidateProtocols(): string[] {
    let candidates: string[] | undefined;
    for (const m of this.members.values()) {
      const names = m.protocols.map((p) => p.name);
      candidates = candidates === undefined ? names : candidates.filter((n) => names.includes(n));
    }
    return candidates ?? [];
  }

  /** Whether a member with these protocols may join. */
  supportsProtocols(protocolType: string, names: readonly string[]): boolean {
    if (this.members.size === 0) return protocolType !== '' && names.length > 0;
    if (protocolType !== this.protocolType) return false;
    const candidates = this.candidateProtocols();
    return names.some((n) => candidates.includes(n));
  }

  /** Each member votes for its most preferred candidate; most votes wins, ties to the earlier candidate. */
  selectProtocol(): string {
    const candidates = this.candidateProtocols();
    const votes = new Map<string, number>();
    for (const m of this.members.values()) {
      const vote = m.protocols.find((p) => candidates.includes(p.name))!.name;
      votes.set(vote, (votes.get(vote) ?? 0) + 1);
    }
    let best = candidates[0]!;
    for (const c of candidates) if ((votes.get(c) ?? 0) > (votes.get(best) ?? 0)) best = c;
    return best;
  }

  metadataOf(member: Member, protocol = this.protocolName): Buffer {
    return member.protocols.find((p) => p.name === protocol)?.metadata ?? Buffer.alloc(0);
  }

  allMembersJoined(): boolean {
    if (this.pendingMembers.size > 0) return false;
    for (const m of this.members.values()) if (!m.awaitingJoin) return false;
    return true;
  }

  rebalanceTimeoutMs(): number {
    let max = 0;
    for (const m of this.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  hasActiveMembers(): boolean {
    return this.members.size > 0 || this.pendingMembers.size > 0;
  }
}
