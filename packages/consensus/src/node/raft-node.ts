import { MqError, isMqError } from '@mq/protocol/errors';
import { applyToConfState, decodeConfChange, encodeConfChange } from '../core/conf-change.js';
import { RaftCore } from '../core/raft.js';
import { ConfChangeOp, EntryType, MessageType, StateRole, type ConfChange, type ConfState, type Entry, type Message, type Ready } from '../core/types.js';
import type { RaftStorage } from '../storage/types.js';
import { parseRaftNodeOptions, type ParsedRaftNodeOptions, type RaftNodeOptions } from './options.js';
import { silentLogger, systemClock, systemTimers, type Clock, type Logger, type TimerHandle, type Timers } from '@mq/protocol/components';
import type { RaftTransport, StateMachine } from './types.js';

export interface RaftNodeComponents {
  storage: RaftStorage;
  transport: RaftTransport;
  stateMachine: StateMachine;
  /** Time and timers, injected so that the simulator can run a node on virtual time. */
  clock?: Clock;
  timers?: Timers;
  logger?: Logger;
  /** Source of randomness for election timeouts (seeded in the simulator). */
  random?: () => number;
}

export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface ProposeResult {
  index: number;
  term: number;
  /** What the state machine's apply() returned for the entry. */
  result: unknown;
}

export interface ProgressStatus {
  match: number;
  next: number;
  state: string;
  learner: boolean;
  recentActive: boolean;
}

export interface RaftStatus {
  id: number;
  role: StateRole;
  leader: number;
  term: number;
  vote: number;
  commit: number;
  applied: number;
  firstIndex: number;
  lastIndex: number;
  snapshotIndex: number;
  confState: ConfState;
  /** Replication progress per member (leader only). */
  progress: Record<number, ProgressStatus>;
  leadTransferee: number;
  pendingProposals: number;
  pendingReads: number;
  /** Elections this node started as a candidate since it started. */
  electionsStarted: number;
  /** Times this node learned of a new leader (itself included) since it started (etcd's leader_changes_seen). */
  leaderChangesSeen: number;
}

interface Pending<T> {
  resolve(v: T): void;
  reject(e: unknown): void;
  cleanup(): void;
}

interface PendingProposal extends Pending<ProposeResult> {
  term: number;
}

interface PendingRead extends Pending<number> {
  index: number; // -1 until the leader confirmed
}

export interface RaftNode {
  readonly id: number;
  /** Replicates `data`; resolves once committed and applied here, with apply()'s result. Leader only (NOT_LEADER otherwise). */
  propose(data: Uint8Array, options?: RequestOptions): Promise<ProposeResult>;
  /** Linearizable read barrier: resolves with an index once this node's state machine has applied it. */
  readIndex(options?: RequestOptions): Promise<number>;
  campaign(): void;
  /**
   * A failure detector outside Raft says `leader` is gone (its port refuses
   * connections): a follower of it forgets it and campaigns within a few
   * ticks instead of an election timeout (RaftCore.forgetLeader).
   */
  forgetLeader(leader: number): boolean;
  /** When this node last received a message from `id` (its clock), -1 if never. */
  lastHeardFrom(id: number): number;
  /**
   * When this node sent `id` the first message that asks for an answer
   * (append, heartbeat, snapshot) since it last heard from `id`, -1 if none
   * is outstanding. A silence counted from here never includes this node's
   * own stall: a node whose event loop was blocked sent nothing and is owed nothing.
   */
  unansweredSince(id: number): number;
  /** Hands leadership to `id`; resolves when it is leader (or rejects on timeout). */
  transferLeadership(id: number, options?: RequestOptions): Promise<void>;
  addVoter(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState>;
  addLearner(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState>;
  removeNode(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState>;
  /** Snapshot the state machine now and compact the log. */
  compact(): Promise<number>;
  status(): RaftStatus;
  /** Called whenever role or leader changes. */
  onLeaderChange(fn: (leader: number, role: StateRole, term: number) => void): () => void;
  /** Feeds one message (the transport does this; tests may too). */
  receive(m: Message): void;
  close(): Promise<void>;
}

let ctxCounter = 0;

const LEADER_MESSAGES = new Set<number>([MessageType.App, MessageType.Heartbeat, MessageType.Snap, MessageType.TimeoutNow]);
/** The messages a peer answers (unansweredSince). */
const ASKING_MESSAGES = new Set<number>([MessageType.App, MessageType.Heartbeat, MessageType.Snap]);

/** Writes the founding membership as entries 1..n (term 1), identically on every founding node. */
export async function bootstrapStorage(storage: RaftStorage, peers: number[]): Promise<boolean> {
  if (storage.lastIndex() !== 0 || storage.snapshot().meta.index !== 0 || peers.length === 0) return false;
  const entries: Entry[] = peers.map((id, i) => ({
    term: 1,
    index: i + 1,
    type: EntryType.ConfChange,
    data: encodeConfChange({ op: ConfChangeOp.AddVoter, nodeId: id }),
  }));
  await storage.save({ entries, hardState: { term: 1, vote: 0, commit: entries.length } });
  return true;
}

/**
 * Builds a Raft node: the deterministic core driven by a clock, persisting
 * through `storage`, talking through `transport`, applying to `stateMachine`.
 */
export async function createRaftNode(options: RaftNodeOptions, components: RaftNodeComponents): Promise<RaftNode> {
  const opts = parseRaftNodeOptions(options);
  await bootstrapStorage(components.storage, opts.peers);
  const node = new RaftNodeImpl(opts, components);
  await node.start();
  return node;
}

class RaftNodeImpl implements RaftNode {
  readonly id: number;
  private readonly core: RaftCore;
  private readonly storage: RaftStorage;
  private readonly transport: RaftTransport;
  private readonly sm: StateMachine;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly logger: Logger;
  private readonly opts: ParsedRaftNodeOptions;
  private readonly proposals = new Map<number, PendingProposal>();
  private readonly reads = new Map<string, PendingRead>();
  private readonly leaderWatchers = new Set<(leader: number, role: StateRole, term: number) => void>();
  /** When a message from each peer last arrived. */
  private readonly heard = new Map<number, number>();
  /** When the first message sent to each peer since it was last heard from left (unansweredSince). */
  private readonly asked = new Map<number, number>();
  private running = false;
  private closed = false;
  private fatal: unknown;
  private tickTimer: TimerHandle | undefined;
  private nextTickAt = 0;
  private applied = 0;
  private snapshotIndex = 0;
  private lastLeader = 0;
  private leaderChangesSeen = 0;
  private compacting = false;
  private applyChain: Promise<void> = Promise.resolve();
  /** `options.applied`: what a durable state machine had applied before this start. */
  private readonly restoredApplied: number;
  /** Term and vote as last written durably. */
  private synced = { term: -1, vote: -1 };
  private idle: Promise<void> = Promise.resolve();
  private idleResolve: (() => void) | undefined;

  constructor(opts: ParsedRaftNodeOptions, c: RaftNodeComponents) {
    this.opts = opts;
    this.id = opts.id;
    this.storage = c.storage;
    this.transport = c.transport;
    this.sm = c.stateMachine;
    this.clock = c.clock ?? systemClock;
    this.timers = c.timers ?? systemTimers;
    this.logger = c.logger ?? silentLogger;
    const snap = this.storage.snapshot();
    this.snapshotIndex = snap.meta.index;
    this.restoredApplied = opts.applied ?? 0;
    this.core = new RaftCore({ ...opts, applied: 0 }, this.storage, c.random ?? Math.random);
  }

  async start(): Promise<void> {
    const snap = this.storage.snapshot();
    const applied = this.opts.applied ?? 0;
    if (snap.meta.index > applied) {
      await this.sm.restore(snap.data, snap.meta.index);
      this.core.log.applied = Math.max(this.core.log.applied, snap.meta.index);
      this.core.log.applying = Math.max(this.core.log.applying, this.core.log.applied);
    }
    this.applied = this.core.log.applied;
    const hs = this.storage.initialState().hardState;
    this.synced = { term: hs.term, vote: hs.vote };
    this.transport.listen((m) => this.receive(m));
    this.scheduleTick();
    this.kick();
  }

  private scheduleTick(): void {
    if (this.closed) return;
    // Ticks keep to a fixed schedule (no drift from a busy event loop); when
    // far behind, the schedule restarts instead of firing a burst.
    const now = this.clock();
    this.nextTickAt = this.nextTickAt === 0 ? now + this.opts.tickMs : this.nextTickAt + this.opts.tickMs;
    if (this.nextTickAt < now - this.opts.tickMs) this.nextTickAt = now + this.opts.tickMs;
    this.tickTimer = this.timers.setTimeout(() => {
      if (this.closed) return;
      try {
        this.core.tick();
      } catch (err) {
        this.logger.error({ err }, 'raft tick failed');
      }
      this.kick();
      this.scheduleTick();
    }, Math.max(0, this.nextTickAt - now));
  }

  receive(m: Message): void {
    if (this.closed) return;
    if (m.from !== this.id && m.from !== 0) {
      this.heard.set(m.from, this.clock());
      this.asked.delete(m.from);
    }
    try {
      this.core.step(m);
    } catch (err) {
      this.logger.warn({ err, from: m.from, type: m.type }, 'raft message refused');
      return;
    }
    // A heartbeat is answered now, not after the Ready in progress (a disk write, an apply): the answer claims
    // nothing about the log, only the term, which must be durable first.
    if (m.type === MessageType.Heartbeat && this.core.term === this.synced.term) {
      const answers = this.core.takeHeartbeatAnswers();
      if (answers.length > 0) this.send(answers);
    }
    if (this.running) this.applyNewlyCommitted();
    this.kick();
  }

  // ---- the Ready loop ----------------------------------------------------------

  private kick(): void {
    if (this.running || this.closed) return;
    if (!this.core.hasReady()) return;
    this.running = true;
    this.idle = new Promise((r) => (this.idleResolve = r));
    void this.loop();
  }

  private async loop(): Promise<void> {
    try {
      while (!this.closed && this.core.hasReady()) {
        const rd = this.core.ready();
        await this.handleReady(rd);
        if (this.closed) return;
        this.core.advance(rd);
        this.afterAdvance();
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.running = false;
      this.idleResolve?.();
    }
    if (!this.closed && this.core.hasReady()) this.kick();
  }

  private async handleReady(rd: Ready): Promise<void> {
    // A leader's appends, heartbeats and snapshot chunks depend on nothing it
    // has yet to persist (its own copy counts towards commit only once
    // durable), so they go out while it writes: leader and follower fsyncs
    // overlap (Raft thesis 10.2.1). Votes, vote grants and acks wait for disk.
    let late = rd.messages;
    if (rd.messages.length > 0 && (rd.entries.length > 0 || rd.hardState || rd.snapshot)) {
      const early: Message[] = [];
      late = [];
      for (const m of rd.messages) (LEADER_MESSAGES.has(m.type) ? early : late).push(m);
      if (early.length > 0) this.send(early);
    }
    let durable: Promise<void> | undefined;
    if (rd.snapshot || rd.entries.length > 0 || rd.hardState) {
      const update: Parameters<RaftStorage['save']>[0] = {};
      if (rd.snapshot) update.snapshot = rd.snapshot;
      if (rd.entries.length > 0) update.entries = rd.entries;
      if (rd.hardState) update.hardState = rd.hardState;
      const hs = rd.hardState;
      const commitOnly = !rd.snapshot && rd.entries.length === 0 && hs !== undefined && hs.term === this.synced.term && hs.vote === this.synced.vote;
      const write = this.storage.save(update);
      if (commitOnly) {
        // Only the commit index moved: nothing waits on its durability (it is
        // re-learned after a crash). Storage writes stay ordered.
        write.catch((err: unknown) => this.fail(err));
      } else {
        durable = write.then(() => {
          if (hs) this.synced = { term: hs.term, vote: hs.vote };
        });
      }
    }
    if (rd.snapshot) {
      await durable;
      if (this.closed) return;
      this.snapshotIndex = rd.snapshot.meta.index;
      await this.applyChain;
      await this.sm.restore(rd.snapshot.data, rd.snapshot.meta.index);
      this.applied = rd.snapshot.meta.index;
      for (const [index, p] of this.proposals) {
        if (index <= this.applied) {
          this.proposals.delete(index);
          p.cleanup();
          p.reject(new MqError('REQUEST_TIMED_OUT', `proposal at ${index}: outcome unknown (state replaced by a snapshot)`, { index }));
        }
      }
    }
    for (const rs of rd.readStates) {
      const r = this.reads.get(Buffer.from(rs.context).toString('hex'));
      if (r) r.index = rs.index;
    }
    // Committed entries are durable on a quorum: they are applied while this
    // node's own write is still in flight (as etcd does).
    if (rd.committedEntries.length > 0) await this.applyInOrder(rd.committedEntries);
    if (durable) await durable;
    if (this.closed) return;
    if (late.length > 0) this.send(late);
    if (rd.softState) {
      if (rd.softState.leader > 0 && rd.softState.leader !== this.lastLeader) this.leaderChangesSeen++;
      this.lastLeader = rd.softState.leader;
      if (rd.softState.role !== StateRole.Leader) this.failUnconfirmedReads('NOT_LEADER');
      for (const w of this.leaderWatchers) w(rd.softState.leader, rd.softState.role, this.core.term);
    }
  }

  private send(messages: Message[]): void {
    let now = -1;
    for (const m of messages) {
      if (!ASKING_MESSAGES.has(m.type) || this.asked.has(m.to)) continue;
      if (now < 0) now = this.clock();
      this.asked.set(m.to, now);
    }
    this.transport.send(messages);
  }

  /** Entries that became committed while a Ready is in flight are applied at once. */
  private applyNewlyCommitted(): void {
    const ents = this.core.takeCommitted();
    if (ents.length > 0) void this.applyInOrder(ents).catch((err: unknown) => this.fail(err));
  }

  private applyInOrder(ents: Entry[]): Promise<void> {
    const run = this.applyChain.then(() => this.applyEntries(ents));
    this.applyChain = run.catch(() => undefined);
    return run;
  }

  private async applyEntries(ents: Entry[]): Promise<void> {
    for (const e of ents) {
      if (this.closed) return;
      if (e.index <= this.applied) continue;
      if (e.index <= this.restoredApplied) {
        // A durable state machine already holds this entry (it may have applied
        // it before this node's own copy was durable): only the core learns of it.
        this.applied = e.index;
        this.core.appliedEntries([e]);
        continue;
      }
      let result: unknown;
      if (e.type === EntryType.ConfChange) {
        let cc: ConfChange | undefined;
        try {
          cc = decodeConfChange(e.data);
        } catch (err) {
          this.logger.error({ err, index: e.index }, 'committed conf change is undecodable; ignored');
        }
        if (cc) {
          const cs = applyToConfState(this.core.confState(), cc);
          result = cs;
          if (this.sm.applyConfChange) await this.sm.applyConfChange(cc, cs, e);
        }
      } else if (e.data.length > 0) {
        result = await this.sm.apply(e);
      }
      this.applied = e.index;
      this.core.appliedEntries([e]);
      const p = this.proposals.get(e.index);
      if (p) {
        this.proposals.delete(e.index);
        p.cleanup();
        if (p.term === e.term) p.resolve({ index: e.index, term: e.term, result });
        else p.reject(new MqError('PROPOSAL_DROPPED', `proposal at ${e.index} was overwritten by a new leader; retry`, { index: e.index }));
      }
    }
    this.resolveReads();
  }

  private resolveReads(): void {
    for (const [key, r] of this.reads) {
      if (r.index >= 0 && r.index <= this.applied) {
        this.reads.delete(key);
        r.cleanup();
        r.resolve(r.index);
      }
    }
  }

  private afterAdvance(): void {
    this.resolveReads();
    if (this.opts.snapshotEntries > 0 && this.applied - this.snapshotIndex >= this.opts.snapshotEntries && !this.compacting) {
      void this.compact().catch((err) => this.logger.warn({ err }, 'automatic snapshot failed'));
    }
  }

  private fail(err: unknown): void {
    this.fatal = err;
    this.logger.error({ err }, 'raft node stopped: storage or state machine failed');
    const e = isMqError(err) ? err : new MqError('STORAGE_ERROR', `raft node ${this.id} stopped: ${String(err)}`, { cause: err });
    void this.shutdown(e);
  }

  // ---- requests -----------------------------------------------------------------

  private guard(): void {
    if (this.closed) throw new MqError('CLOSED', `raft node ${this.id} is closed`, { cause: this.fatal });
  }

  private track<T, P extends Pending<T>>(
    options: RequestOptions | undefined,
    what: string,
    register: (p: P) => void,
    unregister: () => void,
    extra: Omit<P, keyof Pending<T>>,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timeoutMs = options?.timeoutMs ?? this.opts.requestTimeoutMs;
      const signal = options?.signal;
      const onAbort = () => {
        unregister();
        p.cleanup();
        reject(new MqError('ABORTED', `${what} aborted`));
      };
      const timer = this.timers.setTimeout(() => {
        unregister();
        p.cleanup();
        reject(new MqError('REQUEST_TIMED_OUT', `${what} timed out after ${timeoutMs} ms (outcome unknown)`));
      }, timeoutMs);
      const p = {
        ...extra,
        resolve,
        reject,
        cleanup: () => {
          this.timers.clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      } as unknown as P;
      if (signal?.aborted) {
        this.timers.clearTimeout(timer);
        reject(new MqError('ABORTED', `${what} aborted`));
        return;
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      register(p);
    });
  }

  propose(data: Uint8Array, options?: RequestOptions): Promise<ProposeResult> {
    return this.proposeTyped(false, data, options);
  }

  private proposeTyped(conf: boolean, data: Uint8Array, options?: RequestOptions): Promise<ProposeResult> {
    try {
      this.guard();
      if (this.proposals.size >= this.opts.maxPendingProposals) {
        throw new MqError('BUFFER_FULL', `${this.proposals.size} proposals are pending on node ${this.id}; wait for some to complete`);
      }
      const { index, term } = conf ? this.core.proposeConfChange(data) : this.core.propose(data);
      const promise = this.track<ProposeResult, PendingProposal>(
        options,
        `proposal at ${index}`,
        (p) => this.proposals.set(index, p),
        () => this.proposals.delete(index),
        { term },
      );
      this.kick();
      return promise;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  readIndex(options?: RequestOptions): Promise<number> {
    try {
      this.guard();
      const ctx = Buffer.alloc(16);
      ctx.writeBigUInt64BE(BigInt(this.id), 0);
      ctx.writeBigUInt64BE(BigInt(++ctxCounter), 8);
      const key = ctx.toString('hex');
      if (this.reads.size >= this.opts.maxPendingProposals) {
        throw new MqError('BUFFER_FULL', `${this.reads.size} reads are pending on node ${this.id}; wait for some to complete`);
      }
      const promise = this.track<number, PendingRead>(
        options,
        'read index',
        (p) => this.reads.set(key, p),
        () => this.reads.delete(key),
        { index: -1 },
      );
      try {
        this.core.readIndex(ctx);
      } catch (err) {
        const r = this.reads.get(key);
        this.reads.delete(key);
        r?.cleanup();
        r?.reject(err);
      }
      this.kick();
      return promise;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  private failUnconfirmedReads(code: 'NOT_LEADER'): void {
    for (const [key, r] of this.reads) {
      if (r.index >= 0) continue;
      this.reads.delete(key);
      r.cleanup();
      r.reject(new MqError(code, `leadership changed before the read was confirmed; retry`, { leader: this.core.lead }));
    }
  }

  campaign(): void {
    this.guard();
    this.core.campaign();
    this.kick();
  }

  forgetLeader(leader: number): boolean {
    if (this.closed) return false;
    const changed = this.core.forgetLeader(leader);
    if (changed) {
      this.logger.info({ leader, term: this.core.term }, 'raft: the leader is gone (its connection was lost and refused); campaigning soon');
      this.kick();
    }
    return changed;
  }

  lastHeardFrom(id: number): number {
    return this.heard.get(id) ?? -1;
  }

  unansweredSince(id: number): number {
    return this.asked.get(id) ?? -1;
  }

  async transferLeadership(id: number, options?: RequestOptions): Promise<void> {
    this.guard();
    if (this.core.role !== StateRole.Leader) {
      throw new MqError('NOT_LEADER', `node ${this.id} is not the leader`, { leader: this.core.lead });
    }
    if (id === this.id) return;
    if (!this.core.voters.has(id)) throw new MqError('UNKNOWN_NODE', `node ${id} is not a voter`);
    let off: () => void = () => {};
    const done = this.track<void, Pending<void>>(
      options,
      `leadership transfer to ${id}`,
      (p) => {
        off = this.onLeaderChange((leader) => {
          if (leader === id) {
            off();
            p.cleanup();
            p.resolve();
          }
        });
      },
      () => off(),
      {},
    );
    this.core.transferLeadership(id);
    this.kick();
    return done;
  }

  async addVoter(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState> {
    return this.changeConf({ op: ConfChangeOp.AddVoter, nodeId: id, context: options?.context }, options);
  }

  async addLearner(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState> {
    return this.changeConf({ op: ConfChangeOp.AddLearner, nodeId: id, context: options?.context }, options);
  }

  async removeNode(id: number, options?: RequestOptions & { context?: Uint8Array }): Promise<ConfState> {
    return this.changeConf({ op: ConfChangeOp.RemoveNode, nodeId: id, context: options?.context }, options);
  }

  private async changeConf(cc: ConfChange, options?: RequestOptions): Promise<ConfState> {
    if (!Number.isSafeInteger(cc.nodeId) || cc.nodeId <= 0) throw new MqError('INVALID_ARGUMENT', `node id ${cc.nodeId} must be a positive integer`);
    const r = await this.proposeTyped(true, encodeConfChange(cc), options);
    return r.result as ConfState;
  }

  async compact(): Promise<number> {
    this.guard();
    if (this.compacting) return this.snapshotIndex;
    this.compacting = true;
    try {
      // Snapshot exactly at `applied`: wait until the Ready loop is between batches.
      while (this.running) await this.idle;
      await this.applyChain;
      const index = this.applied;
      if (index <= this.snapshotIndex) return this.snapshotIndex;
      const data = await this.sm.snapshot();
      if (this.applied !== index) {
        // State moved on while serialising; take the next chance.
        return this.snapshotIndex;
      }
      await this.storage.createSnapshot(index, this.core.confState(), data, this.opts.compactionKeepEntries);
      this.snapshotIndex = index;
      return index;
    } finally {
      this.compacting = false;
    }
  }

  status(): RaftStatus {
    const c = this.core;
    const progress: Record<number, ProgressStatus> = {};
    if (c.role === StateRole.Leader) {
      for (const [id, pr] of c.prs) {
        progress[id] = { match: pr.match, next: pr.next, state: pr.state, learner: pr.isLearner, recentActive: pr.recentActive };
      }
    }
    return {
      id: this.id,
      role: c.role,
      leader: c.lead,
      term: c.term,
      vote: c.vote,
      commit: c.log.committed,
      applied: this.applied,
      firstIndex: c.log.firstIndex(),
      lastIndex: c.log.lastIndex(),
      snapshotIndex: this.snapshotIndex,
      confState: c.confState(),
      progress,
      leadTransferee: c.leadTransferee,
      pendingProposals: this.proposals.size,
      pendingReads: this.reads.size,
      electionsStarted: c.electionsStarted,
      leaderChangesSeen: this.leaderChangesSeen,
    };
  }

  onLeaderChange(fn: (leader: number, role: StateRole, term: number) => void): () => void {
    this.leaderWatchers.add(fn);
    return () => this.leaderWatchers.delete(fn);
  }

  /** The core, for the simulator's invariant checks (not part of the public API). */
  get raft(): RaftCore {
    return this.core;
  }

  private async shutdown(err: MqError): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.tickTimer) this.timers.clearTimeout(this.tickTimer);
    for (const p of this.proposals.values()) {
      p.cleanup();
      p.reject(err);
    }
    this.proposals.clear();
    for (const r of this.reads.values()) {
      r.cleanup();
      r.reject(err);
    }
    this.reads.clear();
    this.leaderWatchers.clear();
  }

  async close(): Promise<void> {
    await this.shutdown(new MqError('CLOSED', `raft node ${this.id} closed`));
    await this.transport.close();
    await this.storage.close();
  }
}
