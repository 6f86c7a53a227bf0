import { isMqError } from '@mq/protocol/errors';
import { encodeConfChange } from '../core/conf-change.js';
import { ConfChangeOp, EntryType, StateRole, type Entry, type HardState, type Message, type Snapshot } from '../core/types.js';
import { createRaftNode, type RaftNode } from '../node/raft-node.js';
import type { Clock, TimerHandle, Timers } from '@mq/protocol/components';
import type { RaftTransport, StateMachine } from '../node/types.js';
import { MemoryStorage } from '../storage/memory-storage.js';
import { checkKvHistory, type KvOp } from './linearizability.js';
import { Rng } from './rng.js';
import { EventQueue } from './event-queue.js';
import type { RaftCore } from '../core/raft.js';

export interface SimOptions {
  seed: number;
  nodes?: 3 | 5;
  /** Virtual milliseconds of faulty operation before the network heals. */
  durationMs?: number;
  /** Virtual milliseconds after healing in which the cluster must converge. */
  settleMs?: number;
  clients?: number;
  keys?: number;
  /** Invariant and linearizability checks (on by default; tests of the checker turn parts off). */
  faults?: boolean;
  /** Record a human-readable trace of events (for replaying a failing seed). */
  trace?: boolean;
}

export interface SimResult {
  seed: number;
  ok: boolean;
  violation?: string;
  steps: number;
  virtualMs: number;
  committed: number;
  ops: number;
  okOps: number;
  elections: number;
  crashes: number;
  snapshotsInstalled: number;
  confChanges: number;
  trace: string[];
}

export class InvariantViolation extends Error {}

const TICK_MS = 10;
const MAX_STEPS = 400_000;

/** Durable state of a simulated disk: MemoryStorage whose writes land only after a delay; a crash loses what has not landed. */
class SimDisk extends MemoryStorage {
  constructor(private readonly sim: Simulator, readonly nodeId: number) {
    super();
  }
  incarnation = 0;
  private pending: { update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }; resolve: () => void; inc: number }[] = [];

  override save(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): Promise<void> {
    const inc = this.incarnation;
    return new Promise((resolve) => {
      const item = { update, resolve, inc };
      this.pending.push(item);
      this.sim.schedule(this.sim.rng.chance(0.2) ? this.sim.rng.int(5, 50) : this.sim.rng.int(0, 3), () => {
        const i = this.pending.indexOf(item);
        if (i < 0) return; // lost in a crash, or landed with a later write
        // The disk completes writes in order: earlier ones land first.
        for (const p of this.pending.splice(0, i + 1)) {
          this.land(p.update);
          if (p.inc === this.incarnation) p.resolve();
        }
      });
    });
  }

  private land(update: { hardState?: HardState; entries?: Entry[]; snapshot?: Snapshot }): void {
    this.applyUpdate(update);
    if (update.entries) this.sim.checkAppend(this.nodeId, update.entries, (i) => this.termOr(i));
  }

  termOr(i: number): number {
    if (i < this.dummyIndex || i > this.lastIndex()) return -1;
    return this.term(i);
  }

  /** Crash: a prefix of the writes not yet fsynced may have reached the disk anyway; the rest is lost. */
  crash(rng: Rng): void {
    const keep = rng.int(0, this.pending.length);
    const landed = this.pending.slice(0, keep);
    this.pending = [];
    for (const p of landed) this.land(p.update);
    this.incarnation++;
    this.closed = false;
  }

  override close(): Promise<void> {
    return Promise.resolve();
  }
}

class KvMachine implements StateMachine {
  data = new Map<string, string>();
  constructor(
    private readonly sim: Simulator,
    private readonly nodeId: number,
  ) {}
  apply(e: Entry): unknown {
    this.sim.checkApply(this.nodeId, e);
    const cmd = JSON.parse(Buffer.from(e.data).toString()) as { k: string; v: string };
    this.data.set(cmd.k, cmd.v);
    return null;
  }
  snapshot(): Uint8Array {
    return Buffer.from(JSON.stringify([...this.data]));
  }
  restore(data: Uint8Array): void {
    this.sim.snapshotsInstalled++;
    this.data = new Map(data.length ? (JSON.parse(Buffer.from(data).toString()) as [string, string][]) : []);
  }
}

interface Slot {
  id: number;
  disk: SimDisk;
  node: RaftNode | undefined;
  sm: KvMachine | undefined;
  inc: number;
  lastCommit: number;
  leaderTerms: Set<number>;
}

/**
 * A deterministic cluster on virtual time: one seeded RNG drives message
 * delays, drops, duplicates, reordering, partitions (also one-way), disk
 * latency, crashes (losing unfsynced writes) and restarts. Invariants are
 * checked after every event; the client history is checked for
 * linearizability at the end.
 */
export class Simulator {
  readonly rng: Rng;
  private readonly q = new EventQueue();
  private seq = 0;
  now = 0;
  private readonly slots = new Map<number, Slot>();
  private readonly blocked = new Set<string>(); // "a>b": messages from a to b are dropped
  private dropRate = 0;
  private dupRate = 0;
  private readonly leaders = new Map<number, number>(); // term -> leader id
  private readonly applied = new Map<number, { term: number; data: string }>();
  private readonly appended = new Map<string, { prevTerm: number; data: string }>();
  private readonly history: KvOp[] = [];
  private readonly opts: Required<SimOptions>;
  readonly trace: string[] = [];
  private violation: string | undefined;
  private elections = 0;
  private crashes = 0;
  private valueSeq = 0;
  snapshotsInstalled = 0;
  private confChanges = 0;
  private healed = false;

  constructor(options: SimOptions) {
    this.opts = {
      nodes: 3,
      durationMs: 6000,
      settleMs: 4000,
      clients: 3,
      keys: 3,
      faults: true,
      trace: false,
      ...options,
    };
    this.rng = new Rng(options.seed);
  }

  schedule(delay: number, fn: () => void): void {
    this.q.push({ at: this.now + delay, seq: this.seq++, fn });
  }

  private log(s: string): void {
    if (this.opts.trace) this.trace.push(`${String(this.now).padStart(6)} ${s}`);
  }

  fail(why: string): never {
    this.violation ??= why;
    throw new InvariantViolation(why);
  }

  // ---- invariants --------------------------------------------------------------------

  checkAppend(nodeId: number, entries: Entry[], termOf: (i: number) => number): void {
    for (const e of entries) {
      const key = `${e.index}:${e.term}`;
      const data = Buffer.from(e.data).toString('hex') + `/${e.type}`;
      const prevTerm = termOf(e.index - 1);
      const seen = this.appended.get(key);
      if (!seen) this.appended.set(key, { prevTerm, data });
      else if (seen.data !== data || (prevTerm >= 0 && seen.prevTerm >= 0 && seen.prevTerm !== prevTerm)) {
        this.fail(`log matching: node ${nodeId} holds entry ${key} that differs from another node's (prev term ${prevTerm} vs ${seen.prevTerm})`);
      }
    }
  }

  checkApply(nodeId: number, e: Entry): void {
    const data = Buffer.from(e.data).toString('hex');
    const seen = this.applied.get(e.index);
    if (!seen) this.applied.set(e.index, { term: e.term, data });
    else if (seen.term !== e.term || seen.data !== data) {
      this.fail(`state machine safety: node ${nodeId} applied a different entry at ${e.index} (term ${e.term} vs ${seen.term})`);
    }
  }

  private checkStep(): void {
    if (this.violation !== undefined) throw new InvariantViolation(this.violation);
    for (const s of this.slots.values()) {
      if (!s.node) continue;
      const core = (s.node as unknown as { raft: RaftCore }).raft;
      if (core.log.committed < s.lastCommit) this.fail(`commit index of node ${s.id} went back from ${s.lastCommit} to ${core.log.committed}`);
      if (core.log.committed > core.log.lastIndex()) this.fail(`node ${s.id} committed ${core.log.committed} beyond its last index ${core.log.lastIndex()}`);
      s.lastCommit = core.log.committed;
      if (core.role !== StateRole.Leader) continue;
      const prev = this.leaders.get(core.term);
      if (prev === undefined) {
        this.leaders.set(core.term, s.id);
        this.elections++;
        this.log(`node ${s.id} leader of term ${core.term}`);
      } else if (prev !== s.id) this.fail(`election safety: nodes ${prev} and ${s.id} are both leaders of term ${core.term}`);
      if (!s.leaderTerms.has(core.term)) {
        s.leaderTerms.add(core.term);
        // Leader completeness: every entry applied anywhere is in the new leader's log.
        for (const [index, a] of this.applied) {
          if (index < core.log.firstIndex()) continue;
          const t = core.log.termOr(index);
          if (t !== a.term) this.fail(`leader completeness: leader ${s.id} (term ${core.term}) lacks committed entry ${index} (term ${a.term}, has ${t})`);
        }
      }
    }
  }

  // ---- nodes --------------------------------------------------------------------------

  private async startNode(s: Slot): Promise<void> {
    const inc = ++s.inc;
    const clock: Clock = () => this.now;
    const cancelled = new WeakSet<TimerHandle>();
    const timers: Timers = {
      setTimeout: (fn, ms) => {
        const handle = {};
        this.schedule(ms, () => {
          if (!cancelled.has(handle) && s.inc === inc && s.node) fn();
        });
        return handle;
      },
      clearTimeout: (handle) => {
        cancelled.add(handle);
      },
    };
    let handler: ((m: Message) => void) | undefined;
    const transport: RaftTransport = {
      send: (msgs) => {
        for (const m of msgs) this.deliver(m, inc);
      },
      listen: (h) => {
        handler = h;
      },
      close: () => Promise.resolve(),
    };
    const sm = new KvMachine(this, s.id);
    s.sm = sm;
    s.lastCommit = 0;
    const node = await createRaftNode(
      { id: s.id, peers: [], tickMs: TICK_MS, electionTick: 10, heartbeatTick: 2, requestTimeoutMs: 1000, snapshotEntries: 40, compactionKeepEntries: 5, maxSizePerMsg: 512, snapshotChunkBytes: 256, maxInflightMsgs: 8 },
      { storage: s.disk, transport, stateMachine: sm, clock, timers, random: () => this.rng.next() },
    );
    (s as { handler?: (m: Message) => void }).handler = handler;
    s.node = node;
    this.log(`node ${s.id} started (incarnation ${inc})`);
  }

  private deliver(m: Message, fromInc: number): void {
    const from = this.slots.get(m.from);
    if (!from || from.inc !== fromInc || !from.node) return;
    if (this.blocked.has(`${m.from}>${m.to}`)) return;
    if (this.rng.chance(this.dropRate)) return;
    const copies = this.rng.chance(this.dupRate) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      // Independent delays per message reorder them.
      const delay = this.rng.chance(0.1) ? this.rng.int(5, 60) : this.rng.int(1, 5);
      this.schedule(delay, () => {
        const to = this.slots.get(m.to);
        if (!to?.node) return;
        if (this.blocked.has(`${m.from}>${m.to}`)) return;
        to.node.receive(m);
      });
    }
  }

  private crash(s: Slot): void {
    if (!s.node) return;
    this.crashes++;
    this.log(`node ${s.id} crashed`);
    s.node = undefined;
    s.sm = undefined;
    s.disk.crash(this.rng);
    s.inc++;
  }

  // ---- faults ---------------------------------------------------------------------------

  private injectFault(): void {
    const ids = [...this.slots.keys()];
    const r = this.rng.next();
    if (r < 0.15) {
      const a = this.rng.pick(ids);
      const b = this.rng.pick(ids.filter((x) => x !== a));
      this.blocked.add(`${a}>${b}`);
      this.log(`one-way partition ${a} -> ${b}`);
    } else if (r < 0.3) {
      const a = this.rng.pick(ids);
      for (const b of ids) {
        if (b === a) continue;
        this.blocked.add(`${a}>${b}`);
        this.blocked.add(`${b}>${a}`);
      }
      this.log(`node ${a} isolated`);
    } else if (r < 0.45) {
      this.blocked.clear();
      this.log('network healed');
    } else if (r < 0.6) {
      const live = [...this.slots.values()].filter((s) => s.node);
      if (live.length > 0) this.crash(this.rng.pick(live));
    } else if (r < 0.75) {
      const dead = [...this.slots.values()].filter((s) => !s.node);
      if (dead.length > 0) void this.startNode(this.rng.pick(dead));
    } else if (r < 0.8) {
      this.dropRate = this.rng.pick([0, 0.02, 0.1, 0.3]);
      this.dupRate = this.rng.pick([0, 0.05, 0.2]);
      this.log(`drop ${this.dropRate} dup ${this.dupRate}`);
    } else if (r < 0.84) {
      // Leadership transfer to a random other voter (it may be lagging or cut off).
      const leader = [...this.slots.values()].find((x) => x.node?.status().role === StateRole.Leader);
      if (leader) {
        const to = this.rng.pick(ids.filter((x) => x !== leader.id));
        this.log(`transfer leadership ${leader.id} -> ${to}`);
        leader.node!.transferLeadership(to, { timeoutMs: 300 }).catch(() => undefined);
      }
    } else if (r < 0.93) {
      // Membership: remove a voter (maybe the leader itself), or add a node back as learner, then voter.
      const leader = [...this.slots.values()].find((x) => x.node?.status().role === StateRole.Leader);
      if (leader) {
        const cs = leader.node!.status().confState;
        const id = this.rng.pick(ids);
        const op = cs.learners.includes(id) ? 'add-voter' : cs.voters.includes(id) ? (cs.voters.length > 2 ? 'remove' : 'none') : 'add-learner';
        if (op !== 'none') {
          this.log(`membership: ${op} ${id} via leader ${leader.id}`);
          const n = leader.node!;
          const p = op === 'remove' ? n.removeNode(id) : op === 'add-voter' ? n.addVoter(id) : n.addLearner(id);
          p.then(
            (c) => {
              this.confChanges++;
              this.log(`membership now voters=${c.voters.join(',')} learners=${c.learners.join(',')}`);
            },
            () => undefined,
          );
        }
      }
    } else if (r < 0.97) {
      // Crash a minority-plus-one at once: the leader and a follower that may have acked unsynced entries.
      const live = [...this.slots.values()].filter((x) => x.node);
      const leader = live.find((x) => x.node!.status().role === StateRole.Leader);
      if (leader) {
        this.crash(leader);
        const others = live.filter((x) => x !== leader);
        if (others.length > 0) this.crash(this.rng.pick(others));
      }
    } else {
      // Crash the leader, the most interesting node to lose.
      const leader = [...this.slots.values()].find((s) => s.node?.status().role === StateRole.Leader);
      if (leader) this.crash(leader);
    }
  }

  // ---- clients --------------------------------------------------------------------------

  private clientLoop(client: number): void {
    const think = this.rng.int(1, 30);
    this.schedule(think, () => {
      if (this.healed && this.now > this.opts.durationMs + this.opts.settleMs - 1000) return;
      const live = [...this.slots.values()].filter((s) => s.node);
      if (live.length === 0) return this.clientLoop(client);
      // Prefer the node that believes it leads; sometimes any node.
      const leader = live.find((s) => s.node!.status().role === StateRole.Leader);
      const s = leader && this.rng.chance(0.85) ? leader : this.rng.pick(live);
      const node = s.node!;
      const key = `k${this.rng.int(1, this.opts.keys)}`;
      const call = this.now;
      let finished = false;
      const finish = (op: KvOp, outcome: 'ok' | 'failed' | 'unknown') => {
        if (finished) return;
        finished = true;
        if (outcome === 'ok') {
          op.ret = this.now;
          op.ok = true;
        } else if (outcome === 'failed') {
          this.history.splice(this.history.indexOf(op), 1);
        }
        this.clientLoop(client);
      };
      const isPut = this.rng.chance(0.5);
      const op: KvOp = { client, key, kind: isPut ? 'put' : 'get', value: null, call, ret: Infinity, ok: false };
      this.history.push(op);
      // The client gives up after a while (e.g. its node crashed): outcome unknown.
      this.schedule(1500, () => finish(op, 'unknown'));
      if (isPut) {
        op.value = `v${++this.valueSeq}`;
        node.propose(Buffer.from(JSON.stringify({ k: key, v: op.value }))).then(
          () => finish(op, 'ok'),
          (err: unknown) => {
            // Refused before appending, or overwritten: it never took effect.
            const never = isMqError(err, 'NOT_LEADER') || isMqError(err, 'PROPOSAL_DROPPED') || isMqError(err, 'BUFFER_FULL');
            finish(op, never ? 'failed' : 'unknown');
          },
        );
      } else {
        const sm = s.sm!;
        node.readIndex().then(
          () => {
            if (s.sm !== sm) return finish(op, 'failed'); // crashed meanwhile: the read is void
            op.value = sm.data.get(key) ?? null;
            finish(op, 'ok');
          },
          () => finish(op, 'failed'),
        );
      }
    });
  }

  // ---- run ------------------------------------------------------------------------------

  async run(): Promise<SimResult> {
    let steps = 0;
    const n = this.opts.nodes;
    const peers = Array.from({ length: n }, (_, i) => i + 1);
    for (const id of peers) {
      const disk = new SimDisk(this, id);
      // The founding membership is on disk before the run starts.
      disk.applyUpdate({
        entries: peers.map((p, i) => ({ term: 1, index: i + 1, type: EntryType.ConfChange, data: encodeConfChange({ op: ConfChangeOp.AddVoter, nodeId: p }) })),
        hardState: { term: 1, vote: 0, commit: n },
      });
      this.slots.set(id, { id, disk, node: undefined, sm: undefined, inc: 0, lastCommit: 0, leaderTerms: new Set() });
    }
    try {
      for (const s of this.slots.values()) await this.startNode(s);
      for (let c = 1; c <= this.opts.clients; c++) this.clientLoop(c);
      if (this.opts.faults) {
        const faultLoop = () => {
          if (this.now >= this.opts.durationMs) return;
          this.injectFault();
          this.schedule(this.rng.int(50, 400), faultLoop);
        };
        this.schedule(this.rng.int(100, 300), faultLoop);
      }
      this.schedule(this.opts.durationMs, () => {
        this.healed = true;
        this.blocked.clear();
        this.dropRate = 0;
        this.dupRate = 0;
        this.log('heal: network restored, crashed nodes restart');
        for (const s of this.slots.values()) if (!s.node) void this.startNode(s);
      });
      const end = this.opts.durationMs + this.opts.settleMs;
      for (;;) {
        const ev = this.q.pop();
        if (!ev || ev.at > end) break;
        this.now = ev.at;
        ev.fn();
        await drain();
        if (++steps > MAX_STEPS) this.fail(`livelock: more than ${MAX_STEPS} events in ${this.now} virtual ms (a message storm)`);
        this.checkStep();
      }
      this.checkConverged();
      const lin = checkKvHistory(this.history);
      if (!lin.ok) {
        const ops = lin.ops!.map((o) => `${o.kind} ${o.value} [${o.call}, ${o.ret}]${o.ok ? '' : '?'}`).join('; ');
        this.fail(`linearizability: history of key ${lin.key} has no legal order: ${ops}`);
      }
    } catch (err) {
      if (!(err instanceof InvariantViolation)) this.violation ??= `unexpected error: ${(err as Error).stack ?? String(err)}`;
    } finally {
      for (const s of this.slots.values()) {
        s.node = undefined;
        s.inc++;
      }
    }
    const okOps = this.history.filter((o) => o.ok).length;
    return {
      seed: this.opts.seed,
      ok: this.violation === undefined,
      ...(this.violation !== undefined ? { violation: this.violation } : {}),
      steps,
      virtualMs: this.now,
      committed: Math.max(0, ...this.applied.keys()),
      ops: this.history.length,
      okOps,
      elections: this.elections,
      crashes: this.crashes,
      snapshotsInstalled: this.snapshotsInstalled,
      confChanges: this.confChanges,
      trace: this.trace,
    };
  }

  private checkConverged(): void {
    const live = [...this.slots.values()].filter((s) => s.node);
    const leaders = live.filter((s) => s.node!.status().role === StateRole.Leader);
    if (leaders.length !== 1) this.fail(`liveness: ${leaders.length} leaders after the network healed (expected 1)`);
    const leader = leaders[0]!.node!.status();
    const members = new Set([...leader.confState.voters, ...leader.confState.learners]);
    for (const s of live) {
      if (!members.has(s.id)) continue; // removed nodes are not told and need not converge
      const st = s.node!.status();
      if (st.applied !== leader.commit) {
        this.fail(`liveness: node ${s.id} applied ${st.applied} but leader ${leader.id} committed ${leader.commit} after settling`);
      }
    }
    const current = live.filter((s) => members.has(s.id));
    const states = current.map((s) => JSON.stringify([...s.sm!.data].sort()));
    const appliedIdx = current.map((s) => s.node!.status().applied);
    if (appliedIdx.every((a) => a === appliedIdx[0]) && states.some((x) => x !== states[0])) {
      this.fail('state machine safety: nodes at the same applied index hold different state');
    }
  }
}

function drain(): Promise<void> {
  return new Promise((r) => setImmediate(r));
}

export async function runSimulation(options: SimOptions): Promise<SimResult> {
  return new Simulator(options).run();
}
