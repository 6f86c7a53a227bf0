/**
 * The controller: the cluster metadata as a Raft-replicated log (every
 * broker of a small cluster is a voter, and the Raft leader is the active
 * controller). Every broker applies the log to its own MetadataState; the
 * active one also watches broker liveness (from Raft: a voter whose
 * heartbeat responses stop is not alive), fences brokers that miss their
 * session, unfences them when they are back and caught up, and moves
 * leadership back to preferred replicas. Commands from any broker go through
 * `submit`, which proposes on the leader or forwards to it.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { createRaftNode, createWsTransport, FileStorage, StateRole, systemClock, type Clock, type RaftNode } from '@mq/consensus';
import { encodeCommand, type CommandResult, type MetadataCommand } from './commands.js';
import { MetadataState } from './metadata-state.js';
import { parseControllerOptions, type ControllerOptions, type ParsedControllerOptions } from './options.js';
import type { BrokerRegistration } from './types.js';

/** Sends a command to the active controller on another broker. */
export type ForwardFn = (controllerId: number, command: MetadataCommand, timeoutMs: number) => Promise<CommandResult>;

export interface ControllerComponents {
  logger: Logger;
  clock?: Clock;
  forward: ForwardFn;
}

export interface BrokerLiveness {
  id: number;
  fenced: boolean;
  /** Milliseconds since the active controller last heard from it; -1 when this broker is not the active controller. */
  lastSeenMsAgo: number;
}

export interface ControllerStatus {
  controllerId: number;
  active: boolean;
  raftTerm: number;
  raftCommit: number;
  applied: number;
  brokers: BrokerLiveness[];
}

const RETRIABLE_FORWARD: ReadonlySet<string> = new Set([
  'NOT_CONTROLLER',
  'NOT_LEADER',
  'PROPOSAL_DROPPED',
  'CONNECTION_ERROR',
  'CONNECTION_CLOSED',
  'REQUEST_TIMED_OUT',
  'BROKER_NOT_AVAILABLE',
  'BUFFER_FULL',
]);

export const METADATA_DIR = '__cluster_metadata';

export class Controller {
  readonly metadata = new MetadataState();
  readonly options: ParsedControllerOptions;
  private raft!: RaftNode;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly forward: ForwardFn;
  private readonly lastSeen = new Map<number, number>();
  private activeTerm = -1;
  private ready = false;
  private busy = false;
  private lastImbalanceCheck = 0;
  private cancelTimer: (() => void) | undefined;
  private closed = false;
  private lastLeaderSeen: number;
  private readonly leaderWatchers = new Set<(leader: number) => void>();

  constructor(options: ControllerOptions, components: ControllerComponents) {
    this.options = parseControllerOptions(options);
    this.logger = components.logger.child({ component: 'controller' });
    this.clock = components.clock ?? systemClock;
    this.forward = components.forward;
    this.lastLeaderSeen = this.clock.now();
  }

  async start(dataDir: string): Promise<void> {
    const o = this.options;
    const self = o.voters.find((v) => v.id === o.brokerId)!;
    const peers = Object.fromEntries(o.voters.map((v) => [v.id, `ws://${v.host}:${v.port}`]));
    const transport = await createWsTransport({ id: o.brokerId, host: self.host, port: self.port, peers, clusterId: 'mq-metadata' }, { logger: this.logger });
    let storage: FileStorage;
    try {
      storage = await FileStorage.open(path.join(dataDir, METADATA_DIR), { sync: o.fsync });
    } catch (err) {
      await transport.close();
      throw err;
    }
    try {
      this.raft = await createRaftNode(
        { id: o.brokerId, peers: o.voters.map((v) => v.id), tickMs: o.tickMs, snapshotEntries: o.snapshotEntries },
        { storage, transport, stateMachine: this.metadata, clock: this.clock, logger: this.logger },
      );
    } catch (err) {
      await transport.close();
      await storage.close();
      throw err;
    }
    this.raft.onLeaderChange((leader, role, term) => {
      if (leader > 0) this.lastLeaderSeen = this.clock.now();
      this.logger.info({ leader, role, term }, leader === o.brokerId ? 'this broker is the active controller' : 'controller changed');
      for (const w of [...this.leaderWatchers]) w(leader);
    });
    this.schedule();
  }

  /** The active controller's id, -1 when unknown. */
  get controllerId(): number {
    const l = this.raft.status().leader;
    return l > 0 ? l : -1;
  }

  get isActive(): boolean {
    return this.raft.status().role === StateRole.Leader;
  }

  /** Milliseconds this broker has gone without knowing an active controller (0 while it knows one). */
  get leaderlessMs(): number {
    if (this.raft.status().leader > 0) {
      this.lastLeaderSeen = this.clock.now();
      return 0;
    }
    return this.clock.now() - this.lastLeaderSeen;
  }

  onControllerChange(fn: (leader: number) => void): () => void {
    this.leaderWatchers.add(fn);
    return () => this.leaderWatchers.delete(fn);
  }

  /** Waits until this broker's metadata has applied everything committed when it is called (linearizable). */
  async catchUp(timeoutMs = 5000): Promise<void> {
    const deadline = this.clock.now() + timeoutMs;
    for (;;) {
      try {
        if (this.isActive) {
          await this.raft.readIndex({ timeoutMs: Math.max(1, deadline - this.clock.now()) });
          return;
        }
        const st = this.raft.status();
        if (st.leader > 0 && st.applied >= st.commit) return;
      } catch (err) {
        if (this.clock.now() >= deadline) throw err;
      }
      if (this.clock.now() >= deadline) throw new MqError('REQUEST_TIMED_OUT', 'the cluster metadata did not catch up (no active controller?)');
      await this.sleep(50);
    }
  }

  /**
   * Commits a command through the active controller (here or forwarded) and
   * returns its result; a refusal throws the MqError it carries. Retries
   * while there is no controller or it moves, until `timeoutMs`.
   */
  async submit(command: MetadataCommand, timeoutMs = 10_000): Promise<unknown> {
    const deadline = this.clock.now() + timeoutMs;
    let delay = 50;
    let last: unknown;
    while (!this.closed) {
      const left = deadline - this.clock.now();
      if (left <= 0) break;
      let result: CommandResult | undefined;
      try {
        const leader = this.controllerId;
        if (leader === this.options.brokerId) result = await this.proposeHere(command, left);
        else if (leader > 0) result = await this.forward(leader, command, left);
        else last = new MqError('NOT_CONTROLLER', 'no active controller (election in progress or no quorum)');
      } catch (err) {
        last = err;
        if (!isMqError(err) || !RETRIABLE_FORWARD.has(err.code)) throw err;
      }
      if (result) {
        if (result.ok) return result.value;
        if (!RETRIABLE_FORWARD.has(result.code)) throw new MqError(result.code as ErrorCode, result.message);
        last = new MqError(result.code as ErrorCode, result.message);
      }
      await this.sleep(Math.min(delay, Math.max(1, deadline - this.clock.now())));
      delay = Math.min(delay * 2, 1000);
    }
    if (this.closed) throw new MqError('CLOSED', 'the controller is closed');
    throw new MqError('REQUEST_TIMED_OUT', `the controller did not commit ${command.type} within ${timeoutMs} ms: ${(last as Error)?.message ?? ''}`, { cause: last });
  }

  /** Serves a ControllerForward request: proposes here when this broker is the active controller. */
  async handleForward(command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
    if (!this.isActive) return { ok: false, code: 'NOT_CONTROLLER', message: `broker ${this.options.brokerId} is not the active controller (it is ${this.controllerId})` };
    return this.proposeHere(command, timeoutMs);
  }

  private async proposeHere(command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
    const r = await this.raft.propose(encodeCommand(command), { timeoutMs });
    return (r.result as CommandResult | null) ?? { ok: true };
  }

  status(): ControllerStatus {
    const st = this.raft.status();
    const now = this.clock.now();
    const active = st.role === StateRole.Leader;
    return {
      controllerId: st.leader > 0 ? st.leader : -1,
      active,
      raftTerm: st.term,
      raftCommit: st.commit,
      applied: st.applied,
      brokers: this.metadata.brokers().map((b) => ({
        id: b.id,
        fenced: b.fenced,
        lastSeenMsAgo: active ? now - (this.lastSeen.get(b.id) ?? now) : -1,
      })),
    };
  }

  /** A fresh incarnation id for a broker run. */
  static newIncarnation(): string {
    return randomBytes(8).toString('hex');
  }

  private schedule(): void {
    if (this.closed) return;
    this.cancelTimer = this.clock.setTimeout(() => {
      void this.check().finally(() => this.schedule());
    }, this.options.livenessCheckMs);
  }

  /** One round of the active controller's duties. */
  private async check(): Promise<void> {
    if (this.closed || this.busy) return;
    const st = this.raft.status();
    if (st.role !== StateRole.Leader) {
      this.activeTerm = -1;
      this.ready = false;
      return;
    }
    const now = this.clock.now();
    this.busy = true;
    try {
      if (this.activeTerm !== st.term) {
        // A new active controller: everyone gets a full session from now, and acting waits for the log.
        this.activeTerm = st.term;
        this.ready = false;
        this.lastSeen.clear();
        for (const b of this.metadata.brokers()) this.lastSeen.set(b.id, now);
        this.lastImbalanceCheck = now;
        await this.raft.readIndex({ timeoutMs: this.options.sessionTimeoutMs });
        this.ready = true;
        return;
      }
      if (!this.ready) return;
      for (const [idText, pr] of Object.entries(st.progress)) {
        if (pr.recentActive) this.lastSeen.set(Number(idText), now);
      }
      this.lastSeen.set(this.options.brokerId, now);
      for (const b of this.metadata.brokers()) {
        const seen = this.lastSeen.get(b.id) ?? (this.lastSeen.set(b.id, now), now);
        const silentMs = now - seen;
        if (!b.fenced && silentMs > this.options.sessionTimeoutMs) {
          this.logger.warn({ broker: b.id, silentMs, brokerEpoch: b.brokerEpoch }, `fencing broker ${b.id}: not heard from for ${silentMs} ms`);
          await this.submitQuietly({ type: 'fenceBroker', id: b.id, brokerEpoch: b.brokerEpoch, reason: `not heard from for ${silentMs} ms` });
        } else if (b.fenced && !b.shuttingDown && silentMs <= this.options.livenessCheckMs * 3 && this.caughtUp(b, st.progress)) {
          this.logger.info({ broker: b.id, brokerEpoch: b.brokerEpoch }, `unfencing broker ${b.id}: alive and caught up with the metadata log`);
          await this.submitQuietly({ type: 'unfenceBroker', id: b.id, brokerEpoch: b.brokerEpoch });
        }
      }
      if (this.options.autoLeaderRebalance && now - this.lastImbalanceCheck >= this.options.leaderImbalanceCheckMs) {
        this.lastImbalanceCheck = now;
        await this.rebalanceLeaders();
      }
    } catch (err) {
      if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'controller round failed');
    } finally {
      this.busy = false;
    }
  }

  private caughtUp(b: BrokerRegistration, progress: Record<number, { match: number }>): boolean {
    if (b.id === this.options.brokerId) return true;
    return (progress[b.id]?.match ?? 0) >= b.brokerEpoch;
  }

  private async rebalanceLeaders(): Promise<void> {
    const live = (id: number) => this.metadata.broker(id)?.fenced === false;
    const moves: { topic: string; partition: number; leaderEpoch: number }[] = [];
    for (const t of this.metadata.topics()) {
      t.partitions.forEach((p, partition) => {
        const preferred = p.replicas[0]!;
        if (p.leader !== preferred && p.isr.includes(preferred) && live(preferred)) moves.push({ topic: t.name, partition, leaderEpoch: p.leaderEpoch });
      });
    }
    if (moves.length === 0) return;
    this.logger.info({ partitions: moves.length }, 'moving leadership back to preferred replicas');
    await this.submitQuietly({ type: 'electPreferred', partitions: moves });
  }

  private async submitQuietly(command: MetadataCommand): Promise<void> {
    const r = await this.proposeHere(command, this.options.sessionTimeoutMs);
    if (!r.ok) this.logger.warn({ command: command.type, code: r.code, err: r.message }, 'controller command refused');
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.setTimeout(resolve, ms));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.cancelTimer?.();
    await this.raft?.close();
  }
}

export async function startController(options: ControllerOptions, components: ControllerComponents, dataDir: string): Promise<Controller> {
  const c = new Controller(options, components);
  await c.start(dataDir);
  return c;
}
