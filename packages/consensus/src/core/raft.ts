import { MqError } from '@mq/protocol/errors';
import type { RaftStorage } from '../storage/types.js';
import { applyToConfState, decodeConfChange } from './conf-change.js';
import { parseRaftOptions, type ParsedRaftOptions, type RaftOptions } from './options.js';
import { Progress, ProgressState } from './progress.js';
import { RaftLog } from './raft-log.js';
import { ReadOnly } from './read-only.js';
import {
  EMPTY,
  EntryType,
  MessageType,
  StateRole,
  cloneConfState,
  entrySize,
  isHardStateEqual,
  message,
  type ConfState,
  type Entry,
  type HardState,
  type Message,
  type ReadState,
  type Ready,
  type Snapshot,
  type SoftState,
} from './types.js';

const TRANSFER_CONTEXT = new Uint8Array([0x74]); // 't': a vote forced by leadership transfer

interface PartialSnapshot {
  index: number;
  term: number;
  size: number;
  confState: ConfState;
  chunks: Uint8Array[];
  received: number;
}

/**
 * The Raft state machine. Deterministic: it does no I/O and reads no clock.
 * Feed it with `tick()`, `step(message)`, `propose()`, `proposeConfChange()`
 * and `readIndex()`; collect work with `ready()` and confirm it with
 * `advance(ready)` once the entries and hard state are durable, the
 * messages sent and the committed entries applied.
 */
export class RaftCore {
  readonly id: number;
  readonly opts: ParsedRaftOptions;
  readonly log: RaftLog;
  term = 0;
  vote = 0;
  lead = 0;
  role: StateRole = StateRole.Follower;
  /** Elections this node started as a candidate (a pre-vote that does not become one is not counted). */
  electionsStarted = 0;
  /** Replication progress of every member (leader only keeps it meaningful). */
  readonly prs = new Map<number, Progress>();
  voters = new Set<number>();
  learners = new Set<number>();
  private votes = new Map<number, boolean>();
  private msgs: Message[] = [];
  private readStates: ReadState[] = [];
  private electionElapsed = 0;
  private heartbeatElapsed = 0;
  private randomizedElectionTimeout = 0;
  leadTransferee = 0;
  pendingConfIndex = 0;
  private uncommittedBytes = 0;
  private readonly readOnly = new ReadOnly();
  private pendingReadIndex: Message[] = [];
  private partialSnapshot: PartialSnapshot | undefined;
  private prevSoft: SoftState;
  private prevHard: HardState;
  private readyOut = false;
  private readyHasSnapshot = false;
  private readonly random: () => number;

  constructor(options: RaftOptions, storage: RaftStorage, random: () => number) {
    this.opts = parseRaftOptions(options);
    this.id = this.opts.id;
    this.random = random;
    this.log = new RaftLog(storage);
    const { hardState, confState } = storage.initialState();
    if (hardState.commit > this.log.lastIndex()) {
      throw new MqError('CORRUPT_MESSAGE', `stored commit index ${hardState.commit} is outside the log [${this.log.firstIndex()}, ${this.log.lastIndex()}]`);
    }
    this.term = hardState.term;
    this.vote = hardState.vote;
    this.log.commitTo(hardState.commit);
    this.setConf(confState);
    if (this.opts.applied > 0) this.log.appliedTo(Math.min(this.opts.applied, this.log.committed));
    this.becomeFollower(this.term, 0);
    this.prevSoft = this.softState();
    this.prevHard = this.hardState();
  }

  // ---- public input ----------------------------------------------------

  tick(): void {
    if (this.role === StateRole.Leader) this.tickHeartbeat();
    else this.tickElection();
  }

  /** Starts an election now (pre-vote first when enabled). */
  campaign(): void {
    this.step(message({ type: MessageType.Hup, from: this.id }));
  }

  /**
   * A follower told by a failure detector outside Raft that its leader is
   * gone (etcd raft's ForgetLeader): it drops the leader, which ends its
   * lease so that it grants pre-votes at once, and campaigns instead of
   * waiting out an election timeout: at the next tick for the lowest id among
   * the other voters, two ticks later for the next, and so on, so survivors
   * that all heard the news do not split their votes (a simultaneous
   * campaign of two pre-candidates can, and then costs a whole timeout).
   * Liveness only: a wrong report costs an election, never a committed
   * entry. Returns whether anything changed (only a follower of `leader`
   * forgets it).
   */
  forgetLeader(leader: number): boolean {
    if (this.role !== StateRole.Follower || this.lead === 0 || this.lead !== leader) return false;
    this.lead = 0;
    const rank = [...this.voters].filter((v) => v !== leader).sort((x, y) => x - y).indexOf(this.id);
    const soon = 1 + 2 * Math.max(0, rank);
    this.electionElapsed = Math.max(this.electionElapsed, this.randomizedElectionTimeout - soon);
    return true;
  }

  /** Appends a normal entry; returns its index and term. Throws NOT_LEADER or PROPOSAL_DROPPED. */
  propose(data: Uint8Array): { index: number; term: number } {
    return this.proposeEntry(EntryType.Normal, data);
  }

  /** Appends a membership change entry (see conf-change.ts for the encoding). */
  proposeConfChange(data: Uint8Array): { index: number; term: number } {
    const cc = decodeConfChange(data);
    if (this.role === StateRole.Leader) {
      if (this.pendingConfIndex > this.log.applied) {
        throw new MqError('PROPOSAL_DROPPED', `a membership change is still pending (index ${this.pendingConfIndex}, applied ${this.log.applied}); retry once it is applied`);
      }
      const after = applyToConfState(this.confState(), cc);
      if (after.voters.length === 0) throw new MqError('INVALID_ARGUMENT', 'refusing to remove the last voter');
    }
    return this.proposeEntry(EntryType.ConfChange, data);
  }

  private proposeEntry(type: EntryType, data: Uint8Array): { index: number; term: number } {
    if (this.role !== StateRole.Leader) {
      throw new MqError('NOT_LEADER', `node ${this.id} is not the leader${this.lead ? ` (leader is ${this.lead})` : ''}`, { leader: this.lead });
    }
    if (this.leadTransferee !== 0) {
      throw new MqError('PROPOSAL_DROPPED', `leadership is being transferred to ${this.leadTransferee}; retry on the new leader`);
    }
    if (!this.prs.has(this.id)) throw new MqError('NOT_LEADER', `node ${this.id} was removed from the cluster`);
    if (data.length > this.opts.maxEntryBytes) {
      throw new MqError('MESSAGE_TOO_LARGE', `entry of ${data.length} bytes exceeds maxEntryBytes (${this.opts.maxEntryBytes}); split it or raise the limit`);
    }
    const size = data.length + 24;
    if (this.uncommittedBytes > 0 && this.uncommittedBytes + size > this.opts.maxUncommittedBytes) {
      throw new MqError('PROPOSAL_DROPPED', `too many uncommitted bytes (${this.uncommittedBytes}); slow down and retry`);
    }
    const index = this.log.lastIndex() + 1;
    this.appendEntries([{ term: this.term, index, type, data }]);
    if (type === EntryType.ConfChange) this.pendingConfIndex = index;
    this.bcastAppend();
    return { index, term: this.term };
  }

  /**
   * Requests a linearizable read: a ReadState { index, context } comes out in
   * a later Ready once a quorum confirmed this node's leadership; reading the
   * state machine after applying up to `index` is then linearizable.
   */
  readIndex(context: Uint8Array): void {
    this.step(message({ type: MessageType.ReadIndex, from: this.id, context }));
  }

  /** Asks the leader to hand leadership to `transferee`. */
  transferLeadership(transferee: number): void {
    this.step(message({ type: MessageType.TransferLeader, from: transferee, to: this.id }));
  }

  step(m: Message): void {
    this.validate(m);
    if (m.term === 0) {
      // local message
    } else if (m.term > this.term) {
      if (m.type === MessageType.Vote || m.type === MessageType.PreVote) {
        const force = bytesEqual(m.context, TRANSFER_CONTEXT);
        const inLease = this.opts.checkQuorum && this.lead !== 0 && this.electionElapsed < this.opts.electionTick;
        if (!force && inLease) return; // a leader is alive: ignore the disruption
      }
      if (m.type === MessageType.PreVote) {
        // never change our term for a pre-vote
      } else if (m.type === MessageType.PreVoteResp && !m.reject) {
        // a granted pre-vote carries the term we would campaign at
      } else if (m.type === MessageType.App || m.type === MessageType.Heartbeat || m.type === MessageType.Snap) {
        this.becomeFollower(m.term, m.from);
      } else {
        this.becomeFollower(m.term, 0);
      }
    } else if (m.term < this.term) {
      if ((this.opts.checkQuorum || this.opts.preVote) && (m.type === MessageType.Heartbeat || m.type === MessageType.App)) {
        // A stale leader cut off from the cluster: our higher term makes it step down.
        this.send(message({ type: MessageType.AppResp, to: m.from }));
      } else if (m.type === MessageType.PreVote) {
        this.send(message({ type: MessageType.PreVoteResp, to: m.from, term: this.term, reject: true }));
      }
      return;
    }

    switch (m.type) {
      case MessageType.Hup:
        this.hup(false);
        return;
      case MessageType.Vote:
      case MessageType.PreVote: {
        const canVote =
          this.vote === m.from || (this.vote === 0 && this.lead === 0) || (m.type === MessageType.PreVote && m.term > this.term);
        const respType = m.type === MessageType.Vote ? MessageType.VoteResp : MessageType.PreVoteResp;
        if (canVote && this.log.isUpToDate(m.index, m.logTerm)) {
          this.send(message({ type: respType, to: m.from, term: m.term }));
          if (m.type === MessageType.Vote) {
            this.electionElapsed = 0;
            this.vote = m.from;
          }
        } else {
          this.send(message({ type: respType, to: m.from, term: this.term, reject: true }));
        }
        return;
      }
      default:
        if (this.role === StateRole.Leader) this.stepLeader(m);
        else if (this.role === StateRole.Follower) this.stepFollower(m);
        else this.stepCandidate(m);
    }
  }

  // ---- Ready -------------------------------------------------------------

  hasReady(): boolean {
    if (this.readyOut) return false;
    const ss = this.softState();
    if (ss.leader !== this.prevSoft.leader || ss.role !== this.prevSoft.role) return true;
    if (!isHardStateEqual(this.hardState(), this.prevHard)) return true;
    return (
      this.log.unstable.length > 0 ||
      this.log.unstableSnapshot !== undefined ||
      this.msgs.length > 0 ||
      this.readStates.length > 0 ||
      this.log.hasNextCommitted()
    );
  }

  ready(): Ready {
    if (this.readyOut) throw new MqError('INVALID_ARGUMENT', 'the previous Ready was not advanced');
    const committed = this.log.unstableSnapshot ? [] : this.log.nextCommitted(this.opts.maxApplyBytes);
    if (committed.length > 0) this.log.applying = committed[committed.length - 1]!.index;
    this.readyHasSnapshot = this.log.unstableSnapshot !== undefined;
    const rd: Ready = {
      entries: [...this.log.unstable],
      committedEntries: committed,
      messages: this.msgs,
      readStates: this.readStates,
    };
    if (this.log.unstableSnapshot) rd.snapshot = this.log.unstableSnapshot;
    const ss = this.softState();
    if (ss.leader !== this.prevSoft.leader || ss.role !== this.prevSoft.role) rd.softState = ss;
    const hs = this.hardState();
    if (!isHardStateEqual(hs, this.prevHard)) rd.hardState = hs;
    this.msgs = [];
    this.readStates = [];
    this.readyOut = true;
    return rd;
  }

  /** Confirms a Ready: its entries/hard state are durable, messages sent, committed entries applied. */
  advance(rd: Ready): void {
    this.readyOut = false;
    if (rd.softState) this.prevSoft = rd.softState;
    if (rd.hardState) this.prevHard = rd.hardState;
    if (rd.snapshot) {
      this.log.stableSnapTo(rd.snapshot.meta.index);
      if (rd.snapshot.meta.index > this.log.applied) {
        this.log.applied = rd.snapshot.meta.index;
        this.log.applying = Math.max(this.log.applying, rd.snapshot.meta.index);
      }
    }
    if (rd.entries.length > 0) {
      const last = rd.entries[rd.entries.length - 1]!;
      this.log.stableTo(last.index, last.term);
      if (this.role === StateRole.Leader && last.term === this.term && this.log.matchTerm(last.index, last.term)) {
        const self = this.prs.get(this.id);
        if (self && self.maybeUpdate(last.index) && this.maybeCommit()) this.bcastAppend();
      }
    }
    this.appliedEntries(rd.committedEntries);
  }

  /**
   * While a Ready is out (its writes in flight), entries that became
   * committed since can be applied right away: they are durable on a quorum.
   * Confirm them with appliedEntries() once applied.
   */
  takeCommitted(): Entry[] {
    if (!this.readyOut || this.readyHasSnapshot || this.log.unstableSnapshot) return [];
    const ents = this.log.nextCommitted(this.opts.maxApplyBytes);
    if (ents.length > 0) this.log.applying = ents[ents.length - 1]!.index;
    return ents;
  }

  /** Confirms that committed entries (in order) were applied; entries at or below `applied` are skipped. */
  appliedEntries(ents: Entry[]): void {
    for (const e of ents) {
      if (e.index <= this.log.applied) continue;
      if (e.type === EntryType.ConfChange) this.applyConfChangeEntry(e);
      if (this.role === StateRole.Leader && e.term === this.term) this.uncommittedBytes = Math.max(0, this.uncommittedBytes - entrySize(e));
      this.log.appliedTo(e.index);
    }
  }

  // ---- state ---------------------------------------------------------------

  softState(): SoftState {
    return { leader: this.lead, role: this.role };
  }

  hardState(): HardState {
    return { term: this.term, vote: this.vote, commit: this.log.committed };
  }

  confState(): ConfState {
    return { voters: [...this.voters].sort((a, b) => a - b), learners: [...this.learners].sort((a, b) => a - b) };
  }

  promotable(): boolean {
    return this.voters.has(this.id) && this.log.unstableSnapshot === undefined;
  }

  // ---- roles ---------------------------------------------------------------

  private reset(term: number): void {
    if (this.term !== term) {
      this.term = term;
      this.vote = 0;
    }
    this.lead = 0;
    this.electionElapsed = 0;
    this.heartbeatElapsed = 0;
    this.randomizedElectionTimeout = this.opts.electionTick + Math.floor(this.random() * this.opts.electionTick);
    this.leadTransferee = 0;
    this.votes.clear();
    const last = this.log.lastIndex();
    for (const [id, pr] of this.prs) {
      const np = new Progress(last + 1, pr.isLearner, this.opts.maxInflightMsgs, this.opts.maxInflightBytes);
      if (id === this.id) np.match = Math.min(this.log.offset - 1, last);
      this.prs.set(id, np);
    }
    this.pendingConfIndex = 0;
    this.uncommittedBytes = 0;
    this.readOnly.reset();
    this.pendingReadIndex = [];
  }

  becomeFollower(term: number, lead: number): void {
    this.reset(term);
    this.lead = lead;
    this.role = StateRole.Follower;
  }

  private becomePreCandidate(): void {
    this.role = StateRole.PreCandidate;
    this.votes.clear();
    this.lead = 0;
  }

  private becomeCandidate(): void {
    this.reset(this.term + 1);
    this.vote = this.id;
    this.role = StateRole.Candidate;
    this.electionsStarted++;
  }

  private becomeLeader(): void {
    this.reset(this.term);
    this.lead = this.id;
    this.role = StateRole.Leader;
    const self = this.prs.get(this.id);
    if (self) self.becomeReplicate();
    // No membership change until everything of earlier terms is applied.
    this.pendingConfIndex = this.log.lastIndex();
    // The no-op that lets entries of earlier terms commit.
    this.appendEntries([{ term: this.term, index: this.log.lastIndex() + 1, type: EntryType.Normal, data: EMPTY }]);
  }

  private hup(transfer: boolean): void {
    if (this.role === StateRole.Leader) return;
    if (!this.promotable()) return;
    // Do not campaign while a membership change we know is committed is not applied yet.
    if (this.log.committed > this.log.applied) {
      let pending: Entry[];
      try {
        pending = this.log.slice(Math.max(this.log.applied + 1, this.log.firstIndex()), this.log.committed + 1, Number.MAX_SAFE_INTEGER);
      } catch {
        return;
      }
      for (const e of pending) if (e.type === EntryType.ConfChange) return;
    }
    if (this.opts.preVote && !transfer) this.runCampaign(true, false);
    else this.runCampaign(false, transfer);
  }

  private runCampaign(pre: boolean, transfer: boolean): void {
    let term: number;
    let type: MessageType;
    if (pre) {
      this.becomePreCandidate();
      type = MessageType.PreVote;
      term = this.term + 1;
    } else {
      this.becomeCandidate();
      type = MessageType.Vote;
      term = this.term;
    }
    if (this.poll(this.id, true) === 'won') {
      if (pre) this.runCampaign(false, transfer);
      else this.becomeLeader();
      return;
    }
    const index = this.log.lastIndex();
    const logTerm = this.log.lastTerm();
    for (const v of [...this.voters].sort((a, b) => a - b)) {
      if (v === this.id) continue;
      this.send(message({ type, to: v, term, index, logTerm, context: transfer ? TRANSFER_CONTEXT : EMPTY }));
    }
  }

  private poll(id: number, granted: boolean): 'won' | 'lost' | 'pending' {
    if (!this.votes.has(id)) this.votes.set(id, granted);
    let yes = 0;
    let no = 0;
    for (const v of this.voters) {
      const g = this.votes.get(v);
      if (g === true) yes++;
      else if (g === false) no++;
    }
    const q = quorum(this.voters.size);
    if (yes >= q) return 'won';
    if (no > this.voters.size - q) return 'lost';
    return 'pending';
  }

  // ---- ticks ---------------------------------------------------------------

  private tickElection(): void {
    this.electionElapsed++;
    if (this.promotable() && this.electionElapsed >= this.randomizedElectionTimeout) {
      this.electionElapsed = 0;
      this.step(message({ type: MessageType.Hup, from: this.id }));
    }
  }

  private tickHeartbeat(): void {
    this.heartbeatElapsed++;
    this.electionElapsed++;
    if (this.electionElapsed >= this.opts.electionTick) {
      this.electionElapsed = 0;
      if (this.opts.checkQuorum) this.step(message({ type: MessageType.CheckQuorum, from: this.id }));
      if (this.role === StateRole.Leader && this.leadTransferee !== 0) this.leadTransferee = 0;
    }
    if (this.role !== StateRole.Leader) return;
    if (this.heartbeatElapsed >= this.opts.heartbeatTick) {
      this.heartbeatElapsed = 0;
      this.step(message({ type: MessageType.Beat, from: this.id }));
    }
  }

  // ---- leader --------------------------------------------------------------

  private stepLeader(m: Message): void {
    switch (m.type) {
      case MessageType.Beat:
        this.bcastHeartbeat(this.readOnly.lastContext());
        return;
      case MessageType.CheckQuorum:
        if (!this.quorumActive()) this.becomeFollower(this.term, 0);
        for (const [id, pr] of this.prs) if (id !== this.id) pr.recentActive = false;
        return;
      case MessageType.ReadIndex:
        this.leaderReadIndex(m);
        return;
      case MessageType.TransferLeader:
        this.leaderTransfer(m.from);
        return;
    }
    const pr = this.prs.get(m.from);
    if (!pr) return; // a reply from a node that is not (or no longer) a member
    switch (m.type) {
      case MessageType.AppResp:
        this.handleAppResp(m, pr);
        return;
      case MessageType.HeartbeatResp:
        pr.recentActive = true;
        pr.probeSent = false;
        if (pr.state === ProgressState.Replicate && pr.inflights.full()) pr.inflights.freeFirst();
        if (pr.state === ProgressState.Snapshot) this.sendSnapshotChunk(m.from, pr);
        else if (pr.match < this.log.lastIndex()) this.sendAppend(m.from);
        if (m.context.length > 0 && this.readOnly.recvAck(m.from, m.context)) this.releaseReads(m.context);
        return;
      case MessageType.SnapResp:
        pr.recentActive = true;
        if (pr.state !== ProgressState.Snapshot) return;
        if (m.snapshot?.index !== pr.pendingSnapshot || m.snapshot.term !== pr.snapTerm) return;
        pr.snapOffset = m.snapOffset;
        this.sendSnapshotChunk(m.from, pr);
        return;
    }
  }

  private handleAppResp(m: Message, pr: Progress): void {
    pr.recentActive = true;
    if (m.reject) {
      let next = m.rejectHint;
      if (m.logTerm > 0) {
        // Fast back-off: skip every entry of the terms the follower cannot have.
        next = this.log.findConflictByTerm(m.rejectHint, m.logTerm)[0];
      }
      if (pr.maybeDecrTo(m.index, next)) {
        if (pr.state === ProgressState.Replicate) pr.becomeProbe();
        this.sendAppend(m.from);
      }
      return;
    }
    const oldPaused = pr.isPaused();
    if (pr.maybeUpdate(m.index)) {
      if (pr.state === ProgressState.Probe) pr.becomeReplicate();
      else if (pr.state === ProgressState.Snapshot && pr.match >= pr.pendingSnapshot) {
        pr.becomeProbe();
        pr.becomeReplicate();
      } else if (pr.state === ProgressState.Replicate) pr.inflights.freeLE(m.index);
      if (this.maybeCommit()) this.bcastAppend();
      else if (oldPaused) this.sendAppend(m.from);
      while (this.maybeSendAppend(m.from, false)) {
        // pipeline as far as the window allows
      }
      if (m.from === this.leadTransferee && pr.match === this.log.lastIndex()) this.sendTimeoutNow(m.from);
    } else if (pr.state === ProgressState.Snapshot && m.index >= pr.pendingSnapshot) {
      // Follower already has everything the snapshot holds.
      pr.becomeProbe();
      this.sendAppend(m.from);
    }
  }

  private leaderReadIndex(m: Message): void {
    if (this.voters.size === 1 && this.voters.has(this.id)) {
      this.answerRead(m, this.log.committed);
      return;
    }
    if (this.log.termOr(this.log.committed) !== this.term) {
      // Nothing of this term committed yet: the commit index may be stale.
      if (this.pendingReadIndex.length < 4096) this.pendingReadIndex.push(m);
      return;
    }
    if (this.readOnly.add(this.log.committed, m, this.id)) this.bcastHeartbeat(m.context);
  }

  private answerRead(m: Message, index: number): void {
    if (m.from === this.id || m.from === 0) this.readStates.push({ index, context: m.context });
    else this.send(message({ type: MessageType.ReadIndexResp, to: m.from, index, context: m.context }));
  }

  private releaseReads(ctx: Uint8Array): void {
    const q = quorum(this.voters.size);
    for (const r of this.readOnly.advance(ctx, (acks) => [...acks].filter((a) => this.voters.has(a)).length >= q)) {
      this.answerRead(r.req, r.index);
    }
  }

  private leaderTransfer(transferee: number): void {
    const pr = this.prs.get(transferee);
    if (!pr || pr.isLearner) return;
    if (transferee === this.id) return;
    if (this.leadTransferee === transferee) return;
    this.leadTransferee = transferee;
    this.electionElapsed = 0;
    if (pr.match === this.log.lastIndex()) this.sendTimeoutNow(transferee);
    else this.sendAppend(transferee);
  }

  private sendTimeoutNow(to: number): void {
    this.send(message({ type: MessageType.TimeoutNow, to }));
  }

  private quorumActive(): boolean {
    let active = 0;
    for (const v of this.voters) {
      if (v === this.id || this.prs.get(v)?.recentActive) active++;
    }
    return active >= quorum(this.voters.size);
  }

  /** Commit index = highest index stored on a quorum of voters, only if of the current term. */
  private maybeCommit(): boolean {
    if (this.voters.size === 0) return false;
    const matches: number[] = [];
    for (const v of this.voters) matches.push(this.prs.get(v)?.match ?? 0);
    matches.sort((a, b) => b - a);
    const mci = matches[quorum(this.voters.size) - 1]!;
    if (!this.log.maybeCommit(mci, this.term)) return false;
    if (this.pendingReadIndex.length > 0) {
      const waiting = this.pendingReadIndex;
      this.pendingReadIndex = [];
      for (const m of waiting) this.leaderReadIndex(m);
    }
    return true;
  }

  private appendEntries(ents: Entry[]): void {
    this.log.append(ents);
    // Our own copy counts towards commit once durable (see advance()).
    for (const e of ents) this.uncommittedBytes += entrySize(e);
  }

  private bcastAppend(): void {
    for (const id of this.prs.keys()) if (id !== this.id) this.sendAppend(id);
  }

  private bcastHeartbeat(ctx: Uint8Array): void {
    for (const [id, pr] of this.prs) {
      if (id === this.id) continue;
      const commit = Math.min(pr.match, this.log.committed);
      this.send(message({ type: MessageType.Heartbeat, to: id, commit, context: ctx }));
    }
  }

  private sendAppend(to: number): void {
    this.maybeSendAppend(to, true);
  }

  private maybeSendAppend(to: number, sendIfEmpty: boolean): boolean {
    const pr = this.prs.get(to);
    if (!pr || pr.isPaused()) return false;
    const prevIndex = pr.next - 1;
    const prevTerm = this.log.termOr(prevIndex);
    let ents: Entry[] = [];
    let compacted = prevTerm < 0 || pr.next < this.log.firstIndex();
    if (!compacted) {
      try {
        ents = this.log.entriesFrom(pr.next, this.opts.maxSizePerMsg);
      } catch {
        compacted = true;
      }
    }
    if (compacted) {
      if (!pr.recentActive) return false;
      const snap = this.log.storage.snapshot();
      pr.becomeSnapshot(snap.meta.index, snap.meta.term);
      this.sendSnapshotChunk(to, pr);
      return false;
    }
    if (ents.length === 0 && !sendIfEmpty) return false;
    this.send(message({ type: MessageType.App, to, index: prevIndex, logTerm: prevTerm, entries: ents, commit: this.log.committed }));
    if (ents.length > 0 && pr.state === ProgressState.Replicate) {
      const last = ents[ents.length - 1]!.index;
      pr.optimisticUpdate(last);
      let bytes = 0;
      for (const e of ents) bytes += entrySize(e);
      pr.inflights.add(last, bytes);
    } else if (pr.state === ProgressState.Probe) {
      pr.probeSent = true;
    }
    return true;
  }

  /** Sends the chunk of the snapshot at pr.snapOffset (restarting if storage has a newer snapshot). */
  private sendSnapshotChunk(to: number, pr: Progress): void {
    const snap = this.log.storage.snapshot();
    if (snap.meta.index !== pr.pendingSnapshot || snap.meta.term !== pr.snapTerm) {
      pr.becomeSnapshot(snap.meta.index, snap.meta.term);
    }
    const size = snap.data.length;
    const offset = Math.min(pr.snapOffset, size);
    const end = Math.min(size, offset + this.opts.snapshotChunkBytes);
    this.send(
      message({
        type: MessageType.Snap,
        to,
        snapshot: { index: snap.meta.index, term: snap.meta.term, confState: cloneConfState(snap.meta.confState), size },
        snapOffset: offset,
        snapData: snap.data.subarray(offset, end),
        snapDone: end === size,
      }),
    );
  }

  // ---- follower / candidate -------------------------------------------------

  private stepFollower(m: Message): void {
    switch (m.type) {
      case MessageType.App:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleAppend(m);
        return;
      case MessageType.Heartbeat:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleHeartbeat(m);
        return;
      case MessageType.Snap:
        this.electionElapsed = 0;
        this.lead = m.from;
        this.handleSnapshotChunk(m);
        return;
      case MessageType.TransferLeader:
        if (this.lead !== 0) this.send(message({ type: MessageType.TransferLeader, to: this.lead, from: m.from, term: 0 }), true);
        return;
      case MessageType.TimeoutNow:
        this.hup(true);
        return;
      case MessageType.ReadIndex:
        if (this.lead === 0) throw new MqError('LEADER_NOT_AVAILABLE', `node ${this.id} knows no leader; retry`);
        this.send(message({ type: MessageType.ReadIndex, to: this.lead, context: m.context }));
        return;
      case MessageType.ReadIndexResp:
        this.readStates.push({ index: m.index, context: m.context });
        return;
    }
  }

  private stepCandidate(m: Message): void {
    const myResp = this.role === StateRole.PreCandidate ? MessageType.PreVoteResp : MessageType.VoteResp;
    switch (m.type) {
      case MessageType.App:
        this.becomeFollower(m.term, m.from);
        this.handleAppend(m);
        return;
      case MessageType.Heartbeat:
        this.becomeFollower(m.term, m.from);
        this.handleHeartbeat(m);
        return;
      case MessageType.Snap:
        this.becomeFollower(m.term, m.from);
        this.handleSnapshotChunk(m);
        return;
      case MessageType.ReadIndex:
        throw new MqError('LEADER_NOT_AVAILABLE', `node ${this.id} is campaigning; retry`);
      case MessageType.PreVoteResp:
      case MessageType.VoteResp: {
        if (m.type !== myResp) return;
        const r = this.poll(m.from, !m.reject);
        if (r === 'won') {
          if (this.role === StateRole.PreCandidate) this.runCampaign(false, false);
          else {
            this.becomeLeader();
            this.bcastAppend();
          }
        } else if (r === 'lost') {
          this.becomeFollower(this.term, 0);
        }
        return;
      }
    }
  }

  private handleAppend(m: Message): void {
    if (m.index < this.log.committed) {
      this.send(message({ type: MessageType.AppResp, to: m.from, index: this.log.committed }));
      return;
    }
    const last = this.log.maybeAppend(m.index, m.logTerm, m.commit, m.entries);
    if (last !== null) {
      this.send(message({ type: MessageType.AppResp, to: m.from, index: last }));
      return;
    }
    const [hintIndex, hintTerm] = this.log.findConflictByTerm(Math.min(m.index, this.log.lastIndex()), m.logTerm);
    this.send(message({ type: MessageType.AppResp, to: m.from, index: m.index, reject: true, rejectHint: hintIndex, logTerm: hintTerm }));
  }

  /**
   * Takes the heartbeat answers queued since the last Ready. They claim nothing about the log, so a node may
   * send them before its Ready is persisted (once its term is durable): a slow disk write or apply does not make
   * a live follower look silent to its leader.
   */
  takeHeartbeatAnswers(): Message[] {
    if (!this.msgs.some((m) => m.type === MessageType.HeartbeatResp)) return [];
    const answers: Message[] = [];
    this.msgs = this.msgs.filter((m) => (m.type === MessageType.HeartbeatResp ? (answers.push(m), false) : true));
    return answers;
  }

  private handleHeartbeat(m: Message): void {
    // Never move commit backwards, nor past what we hold.
    if (m.commit > this.log.committed && m.commit <= this.log.lastIndex()) this.log.commitTo(m.commit);
    this.send(message({ type: MessageType.HeartbeatResp, to: m.from, context: m.context }));
  }

  private handleSnapshotChunk(m: Message): void {
    const meta = m.snapshot!;
    const respond = (offset: number, reject: boolean) =>
      this.send(message({ type: MessageType.SnapResp, to: m.from, snapshot: meta, snapOffset: offset, reject }));
    if (meta.index <= this.log.committed) {
      // An older snapshot than what we have committed: tell the leader where we are.
      this.partialSnapshot = undefined;
      this.send(message({ type: MessageType.AppResp, to: m.from, index: this.log.committed }));
      return;
    }
    if (meta.size > this.opts.maxSnapshotBytes) {
      throw new MqError('INVALID_REQUEST', `snapshot of ${meta.size} bytes exceeds maxSnapshotBytes ${this.opts.maxSnapshotBytes}`);
    }
    let p = this.partialSnapshot;
    if (m.snapOffset === 0 || !p || p.index !== meta.index || p.term !== meta.term) {
      p = { index: meta.index, term: meta.term, size: meta.size, confState: cloneConfState(meta.confState), chunks: [], received: 0 };
      this.partialSnapshot = p;
    }
    if (m.snapOffset !== p.received) {
      respond(p.received, true);
      return;
    }
    if (p.received + m.snapData.length > p.size) {
      this.partialSnapshot = undefined;
      respond(0, true);
      return;
    }
    p.chunks.push(Uint8Array.from(m.snapData));
    p.received += m.snapData.length;
    if (!m.snapDone) {
      respond(p.received, false);
      return;
    }
    this.partialSnapshot = undefined;
    if (p.received !== p.size) {
      respond(0, true);
      return;
    }
    const data = Buffer.concat(p.chunks);
    const snap: Snapshot = { meta: { index: p.index, term: p.term, confState: p.confState }, data };
    if (this.restore(snap)) {
      this.send(message({ type: MessageType.AppResp, to: m.from, index: this.log.lastIndex() }));
    } else {
      this.send(message({ type: MessageType.AppResp, to: m.from, index: this.log.committed }));
    }
  }

  /** Installs a snapshot received from the leader; false when it brings nothing new. */
  private restore(s: Snapshot): boolean {
    if (s.meta.index <= this.log.committed) return false;
    if (this.log.matchTerm(s.meta.index, s.meta.term)) {
      // We hold the entry: just fast-forward the commit index.
      this.log.commitTo(s.meta.index);
      return false;
    }
    this.log.restore(s);
    this.setConf(s.meta.confState);
    return true;
  }

  // ---- membership ----------------------------------------------------------

  private setConf(cs: ConfState): void {
    this.voters = new Set(cs.voters);
    this.learners = new Set(cs.learners);
    const next = this.log.lastIndex() + 1;
    for (const id of [...this.prs.keys()]) if (!this.voters.has(id) && !this.learners.has(id)) this.prs.delete(id);
    for (const id of [...cs.voters, ...cs.learners]) {
      const learner = this.learners.has(id);
      const pr = this.prs.get(id);
      if (pr) pr.isLearner = learner;
      else {
        const np = new Progress(next, learner, this.opts.maxInflightMsgs, this.opts.maxInflightBytes);
        np.recentActive = true;
        this.prs.set(id, np);
      }
    }
  }

  private applyConfChangeEntry(e: Entry): void {
    let cs: ConfState;
    let nodeId: number;
    try {
      const cc = decodeConfChange(e.data);
      nodeId = cc.nodeId;
      cs = applyToConfState(this.confState(), cc);
    } catch {
      return; // a committed but undecodable change is ignored the same way on every node
    }
    if (cs.voters.length === 0) return;
    this.setConf(cs);
    if (this.role !== StateRole.Leader) return;
    if (!this.voters.has(this.id) && !this.learners.has(this.id)) {
      // The leader removed itself: step down so that the others elect a leader.
      this.becomeFollower(this.term, 0);
      return;
    }
    if (this.leadTransferee === nodeId && !this.voters.has(nodeId)) this.leadTransferee = 0;
    if (this.maybeCommit()) this.bcastAppend();
    else if (this.prs.has(nodeId)) this.sendAppend(nodeId);
  }

  // ---- helpers -------------------------------------------------------------

  private send(m: Message, keepTerm = false): void {
    if (m.type !== MessageType.TransferLeader) m.from = this.id;
    const votey =
      m.type === MessageType.Vote || m.type === MessageType.VoteResp || m.type === MessageType.PreVote || m.type === MessageType.PreVoteResp;
    if (!keepTerm && !votey) m.term = this.term;
    this.msgs.push(m);
  }

  private validate(m: Message): void {
    const bad = (why: string): never => {
      throw new MqError('INVALID_REQUEST', `raft message ${m.type} from ${m.from} refused: ${why}`, { from: m.from, type: m.type });
    };
    if (!Number.isSafeInteger(m.from) || m.from < 0) bad('bad sender');
    if (!Number.isSafeInteger(m.term) || m.term < 0) bad('bad term');
    if (!Number.isSafeInteger(m.index) || m.index < 0 || !Number.isSafeInteger(m.commit) || m.commit < 0) bad('bad index');
    if (m.term !== 0 && m.to !== this.id) bad(`addressed to ${m.to}, this is node ${this.id}`);
    if (m.term !== 0 && m.from === 0) bad('no sender');
    if (m.type === MessageType.App) {
      let expect = m.index + 1;
      for (const e of m.entries) {
        if (e.index !== expect || e.term > m.term || e.term <= 0) bad(`entries not contiguous from ${m.index + 1}`);
        expect++;
      }
    }
    if (m.type === MessageType.Snap) {
      const s = m.snapshot;
      if (!s || s.index <= 0 || s.term <= 0 || m.snapOffset < 0 || s.confState.voters.length === 0) bad('snapshot metadata missing');
    }
  }
}

export function quorum(n: number): number {
  return Math.floor(n / 2) + 1;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
