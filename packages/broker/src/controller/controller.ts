/**
 * The controller: the cluster metadata as a Raft-replicated log among the
 * controller voters (process.roles containing `controller`; the Raft leader
 * is the active controller). Every voter applies the log to its own
 * MetadataState through a MetadataFeed, from which broker-only processes
 * (observers, observer.ts) fetch it. The active one also watches broker
 * liveness (a voter whose Raft heartbeat responses stop, an observer whose
 * metadata fetches stop), fences brokers that miss their session, unfences
 * them when they are back and caught up, refuses a second live process
 * registering a broker id, and moves leadership back to preferred replicas.
 * Commands from any broker go through `submit`, which proposes on the leader
 * or forwards to it.
 */
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { isMqError, MqError } from '@mq/protocol/errors';
import { createRaftNode, createWsTransport, FileStorage, MemoryNetwork, StateRole, type ConfState, type RaftNode, type RaftStorage, type RaftTransport, type WsTransport, type WsTransportTls } from '@mq/consensus';
import { sleep, systemClock, systemTimers, type Clock, type TimerHandle, type Timers } from '@mq/protocol/components';
import { addsPartitions, checkCommandLimits } from './command-limits.js';
import { decodeCommand, encodeCommand, isQuorumCommand, type AddVoterCommand, type CommandResult, type MetadataCommand, type QuorumCommand, type RegisterBrokerCommand } from './commands.js';
import { MetadataFeed, type FeedRead } from './metadata-feed.js';
import { MetadataState } from './metadata-state.js';
import { parseControllerOptions, quorumClusterId, type ControllerOptions, type ParsedControllerOptions } from './options.js';
import { RecoveryWaits } from './recovery-waits.js';
import { AutoBalancer } from './auto-balancer.js';
import { electable, preferredElections } from './preferred-leaders.js';
import { submitWithRetry } from './submit.js';
import { encodeVoterContext, memberAddress, membersOf, parseVoterAddress, quorumView, type QuorumView } from './quorum.js';
import type { BrokerRegistration } from './types.js';
import { checkVoterMetadata, writeVoterMarker } from './voter-marker.js';
import { readMaterial, watchCertificates, type TlsSettings } from '../server/tls.js';

/** Sends a command to the active controller on another broker. */
export type ForwardFn = (controllerId: number, command: MetadataCommand, timeoutMs: number) => Promise<CommandResult>;

/**
 * Dials a broker's inter-broker listener once: true when the connection is
 * refused (nothing listens: its process is gone), false when it is accepted
 * or the attempt times out (a paused process is still accepted by its kernel).
 */
export type RefusedProbe = (brokerId: number) => Promise<boolean>;

export interface ControllerComponents {
  logger: Logger;
  clock?: Clock;
  timers?: Timers;
  forward: ForwardFn;
  /** Confirms the loss of a broker-only process's metadata fetch connection (none: its session decides). */
  probeRefused?: RefusedProbe;
  /**
   * The metadata log's Raft transport and storage. Default: a WebSocket
   * transport on this voter's address and a FileStorage under the data
   * directory, guarded by the voter marker (voter-marker.ts). The simulator
   * (@mq/sim) passes an in-memory network and a crashable in-memory disk.
   */
  raft?: { transport: RaftTransport; storage: RaftStorage };
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
  /** Metadata-quorum elections this process started as a candidate (0 on a broker-only process). */
  raftElections: number;
  /** Times this process learned of a new active controller. */
  controllerChanges: number;
  /** The metadata quorum's voters as this process last applied them (absent on a broker-only process). */
  quorumVoters?: number[];
  brokers: BrokerLiveness[];
}

export const METADATA_DIR = '__cluster_metadata';
/** How often a controller outside the quorum asks the active controller for the members' addresses. */
const DISCOVERY_INTERVAL_MS = 1000;
/** Dials of a broker-only process whose fetch connection closed, while its listener still accepts (its exit may be closing its sockets). */
const OBSERVER_PROBE_ATTEMPTS = 5;
const OBSERVER_PROBE_INTERVAL_MS = 200;

/** An observer's metadata fetch, as the active controller serves it. */
export interface MetadataFetch {
  brokerId: number;
  incarnation: string;
  fetchIndex: number;
  maxWaitMs: number;
  maxEntries: number;
}

/**
 * What the rest of the broker sees of the metadata log, whether this process
 * votes on it (RaftController) or follows it (ObserverController).
 */
export interface Controller {
  readonly metadata: MetadataState;
  readonly options: { readonly brokerId: number; readonly sessionTimeoutMs: number };
  /** The active controller's id, -1 when unknown. */
  readonly controllerId: number;
  readonly isActive: boolean;
  /** Milliseconds this process has gone without an active controller (0 while it has one). */
  readonly leaderlessMs: number;
  onControllerChange(fn: (leader: number) => void): () => void;
  /** Waits until this process's metadata has applied everything committed when it is called. */
  catchUp(timeoutMs?: number): Promise<void>;
  /** Commits a command through the active controller and returns its result; a refusal throws its MqError. */
  submit(command: MetadataCommand, timeoutMs?: number): Promise<unknown>;
  /** Serves a ControllerForward request. */
  handleForward(command: MetadataCommand, timeoutMs: number): Promise<CommandResult>;
  /** Serves an observer's metadata fetch (NOT_CONTROLLER unless this is the active controller). */
  handleMetadataFetch(fetch: MetadataFetch, signal?: AbortSignal): Promise<FeedRead>;
  status(): ControllerStatus;
  close(): Promise<void>;
}

/** A fresh incarnation id for a broker run. */
export function newIncarnation(): string {
  return randomBytes(8).toString('hex');
}

export class RaftController implements Controller {
  readonly metadata = new MetadataState();
  readonly options: ParsedControllerOptions;
  private readonly feed = new MetadataFeed(this.metadata);
  /** Observers: the metadata index each last fetched from (only fetches of its registered run count). */
  private readonly observerIndex = new Map<number, number>();
  private readonly refusedLogged = new Set<string>();
  /** The last command that adds partitions (they are checked and proposed one at a time). */
  private partitionChanges: Promise<unknown> = Promise.resolve();
  private raft!: RaftNode;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly forward: ForwardFn;
  private readonly probeRefused: RefusedProbe | undefined;
  private readonly injectedRaft: { transport: RaftTransport; storage: RaftStorage } | undefined;
  private readonly lastSeen = new Map<number, number>();
  /**
   * Voters whose Raft port refused a connection (their process is gone, e.g.
   * killed: the kernel refuses at once), with when; cleared when a
   * connection opens again. The active controller fences such a broker at
   * once instead of waiting out its session, unless it has heard from it
   * since the refusal (it restarted).
   */
  private readonly refusedSince = new Map<number, number>();
  /** Observers: the connection (its close signal) their registered run last fetched on. */
  private readonly fetchConnections = new Map<number, AbortSignal>();
  /**
   * Registrations (broker id → broker epoch) fenced because their process was
   * proven gone: never unfenced. A voter's Raft messages do not tell its runs
   * apart, so the next run of the id, heard from before its registration is
   * committed, would otherwise revive the dead run's registration (and its
   * ISR places and leaderships) until it registers.
   */
  private readonly goneRuns = new Map<number, number>();
  /** The last Raft leader other than this voter (the previous controller, once this one takes over). */
  private lastOtherLeader = -1;
  /** The previous controller while this active one has not heard from it: its silence counts from its last message as leader. */
  private predecessor = -1;
  private checkAgain = false;
  /** Leaderless partitions waiting for unclean recovery (set up in the constructor from the options). */
  private readonly recoveryWaits: RecoveryWaits;
  private activeTerm = -1;
  private ready = false;
  private busy = false;
  private lastImbalanceCheck = 0;
  private autoBalancer: AutoBalancer | undefined;
  private livenessTimer: TimerHandle | undefined;
  /** When the first unfenced broker's session runs out if it stays silent (set by each active round). */
  private sessionExpiry = Infinity;
  private closed = false;
  /** Stops the Raft transport's certificate reload (inter.broker.tls.enabled). */
  private stopTlsReload: () => void = () => undefined;
  private lastLeaderSeen: number;
  private readonly leaderWatchers = new Set<(leader: number) => void>();
  /** The Raft transport (its address book follows the membership: syncMembers). */
  private transport: RaftTransport | undefined;
  /** The quorum's membership as this controller last applied it (the founding voters until the log says otherwise). */
  private members: ConfState;
  /** Members the transport has an address for (beside this controller). */
  private readonly peerIds = new Set<number>();
  /** The voter change in progress on this active controller (one at a time), or undefined. */
  private quorumChanging: string | undefined;

  constructor(options: ControllerOptions, components: ControllerComponents) {
    this.options = parseControllerOptions(options);
    this.logger = components.logger.child({ component: 'controller' });
    if (this.options.autoBalance.mode !== 'off') this.autoBalancer = new AutoBalancer(this.options.autoBalance, this.logger);
    this.clock = components.clock ?? systemClock;
    this.timers = components.timers ?? systemTimers;
    this.forward = components.forward;
    this.probeRefused = components.probeRefused;
    this.injectedRaft = components.raft;
    this.recoveryWaits = new RecoveryWaits(this.options.uncleanRecoveryWaitMs);
    this.lastLeaderSeen = this.clock();
    const o = this.options;
    this.members = { voters: o.founding ? o.voters.map((v) => v.id) : [], learners: [] };
    for (const v of o.voters) if (v.id !== o.brokerId) this.peerIds.add(v.id);
  }

  async start(dataDir: string): Promise<void> {
    const o = this.options;
    const { transport, storage } = this.injectedRaft ?? (await this.openRaft(dataDir));
    this.transport = transport;
    // Every committed membership change (and a restored snapshot) updates the transport's address book.
    this.feed.onMembershipChange((cs) => this.syncMembers(cs ?? this.raft?.status().confState));
    try {
      this.raft = await createRaftNode(
        // A controller joining a running quorum writes no founding membership: it has no vote until it is added.
        { id: o.brokerId, peers: o.founding ? o.voters.map((v) => v.id) : [], tickMs: o.tickMs, snapshotEntries: o.snapshotEntries },
        { storage, transport, stateMachine: this.feed, clock: this.clock, timers: this.timers, logger: this.logger },
      );
    } catch (err) {
      await transport.close();
      await storage.close();
      throw err;
    }
    if (!this.injectedRaft) await writeVoterMarker(dataDir, o.brokerId, this.clock());
    this.syncMembers(this.raft.status().confState);
    if (!o.founding && this.members.voters.length === 0) {
      this.logger.info({ raftAddress: `${o.self.host}:${o.self.port}` }, `controller ${o.brokerId} is not in the quorum yet: add it with mq controller add-voter --id ${o.brokerId} --address ${o.self.host}:${o.self.port}`);
      void this.discoverMembers();
    }
    // The WebSocket transport reports a peer whose port refuses a redial (its process is gone); an injected one may not.
    (transport as Partial<Pick<WsTransport, 'onPeerReachability'>>).onPeerReachability?.((id, reachable) => this.onPeerReachability(id, reachable));
    this.raft.onLeaderChange((leader, role, term) => {
      if (leader > 0) this.lastLeaderSeen = this.clock();
      if (leader > 0 && leader !== o.brokerId) this.lastOtherLeader = leader;
      // A new active controller takes up its duties now (a dead predecessor is fenced in this round), not at the next tick of its timer.
      if (leader === o.brokerId && role === StateRole.Leader) this.checkNow();
      this.logger.info({ leader, role, term }, leader === o.brokerId ? 'this broker is the active controller' : 'controller changed');
      for (const w of [...this.leaderWatchers]) w(leader);
    });
    // A quorum of one has no one to wait for: it elects itself now instead of after an election timeout.
    if (this.soleVoter) this.raft.campaign();
    this.schedule();
  }

  /** The production transport and storage: a WebSocket listener on this voter's address, files under `dataDir`/metadata. */
  private async openRaft(dataDir: string): Promise<{ transport: RaftTransport; storage: RaftStorage }> {
    const o = this.options;
    await checkVoterMetadata(dataDir, METADATA_DIR, o.brokerId);
    const self = o.self;
    // The founding voters; members added later are learned from the log (syncMembers).
    const peers = Object.fromEntries(o.voters.filter((v) => v.id !== o.brokerId).map((v) => [v.id, raftUrl(v, o.tls !== undefined)]));
    // A one-node cluster's voter has no one to talk to: no Raft listener, no socket (its own messages never leave the node).
    const transport: RaftTransport = o.local
      ? new MemoryNetwork().transport(o.brokerId)
      : await createWsTransport(
          { id: o.brokerId, host: self.host, port: self.port, peers, clusterId: quorumClusterId(o.voters), verifyPeerAddress: o.verifyPeerAddress, ...(o.clusterSecret ? { secret: o.clusterSecret } : {}), ...(o.tls ? { tls: raftTls(o.tls) } : {}) },
          { logger: this.logger },
        );
    // A renewed certificate is used by the Raft links' next connections, both ways.
    if (o.tls && !o.local) {
      const ws = transport as WsTransport;
      this.stopTlsReload = watchCertificates({ setSecureContext: (m) => ws.setSecureContext({ cert: m.cert, key: m.key, ca: m.ca! }) }, o.tls, this.logger, 'Raft');
    }
    try {
      return { transport, storage: await FileStorage.open(path.join(dataDir, METADATA_DIR), { sync: o.fsync }) };
    } catch (err) {
      await transport.close();
      throw err;
    }
  }

  /**
   * The connection-loss hint, confirmed: a voter's Raft port refused a
   * connection (a redial right after the connection dropped), so its process
   * is gone. A follower of it forgets it and campaigns within a few ticks
   * (the survivors all see the refusal, so their leases end together); the
   * active controller fences it in this round. A paused process is still
   * accepted by its kernel: that case waits for the session timeout.
   */
  private onPeerReachability(id: number, reachable: boolean): void {
    if (this.closed) return;
    if (reachable) {
      this.refusedSince.delete(id);
      return;
    }
    if (this.refusedSince.has(id)) return;
    this.refusedSince.set(id, this.clock());
    this.logger.info({ broker: id }, `broker ${id} refuses connections to its Raft port: its process is gone`);
    if (this.raft.status().leader === id) this.raft.forgetLeader(id);
    else if (this.isActive) this.checkNow();
  }

  /** Runs a round of the controller's duties now (or right after the one in progress). */
  private checkNow(): void {
    void this.check();
  }

  /**
   * True while this process is the quorum's only member (a one-node cluster,
   * like a lone KRaft node in combined mode, or a one-voter quorum that has
   * not grown yet): it needs no one to elect it or to commit.
   */
  get soleVoter(): boolean {
    const m = this.members;
    return m.voters.length === 1 && m.voters[0] === this.options.brokerId && m.learners.length === 0;
  }

  /**
   * The membership `cs` was committed (or restored): the transport gets the
   * address of every member (recorded by the change that added it, or its
   * place in the static voters) and forgets removed ones, so their Raft
   * connections are refused from now on. A controller that is not in the
   * quorum yet (no voters known) keeps the founding voters: the active
   * controller is among them when it is added.
   */
  private syncMembers(cs: ConfState | undefined): void {
    if (!cs) return;
    this.members = { voters: [...cs.voters], learners: [...cs.learners] };
    const t = this.transport as Partial<Pick<WsTransport, 'addPeer' | 'removePeer'>> | undefined;
    if (!t?.addPeer || !t.removePeer || cs.voters.length === 0) return;
    const ids = new Set(membersOf(cs));
    for (const id of ids) {
      if (id === this.options.brokerId) continue;
      const a = memberAddress(id, this.metadata.quorumAddress(id), this.options.voters);
      if (!a) {
        this.logger.warn({ member: id }, `the address of controller ${id} is unknown (not in controller.quorum.voters, none recorded in the log)`);
        continue;
      }
      t.addPeer(id, raftUrl(a, this.options.tls !== undefined));
      this.peerIds.add(id);
    }
    for (const id of [...this.peerIds]) {
      if (ids.has(id)) continue;
      t.removePeer(id);
      this.peerIds.delete(id);
    }
  }

  /**
   * A controller outside the quorum learns the members' Raft addresses from
   * the active controller (DescribeQuorum, through its bootstrap servers)
   * until its own log holds the membership: the active controller that adds
   * it may be a voter added after the founding ones, which it must dial to
   * answer. Addresses only: what it votes on comes from the log.
   */
  private async discoverMembers(): Promise<void> {
    const t = this.transport as Partial<Pick<WsTransport, 'addPeer'>> | undefined;
    while (!this.closed && this.members.voters.length === 0 && t?.addPeer) {
      try {
        const r = await this.forward(-1, { type: 'describeQuorum' }, DISCOVERY_INTERVAL_MS * 3);
        if (r.ok && this.members.voters.length === 0) {
          for (const m of (r.value as QuorumView).members) {
            const a = m.address ? parseVoterAddress(m.address) : undefined;
            if (a && m.id !== this.options.brokerId && !this.peerIds.has(m.id)) {
              t.addPeer(m.id, raftUrl(a, this.options.tls !== undefined));
              this.peerIds.add(m.id);
              this.logger.info({ member: m.id, address: m.address }, `learned the Raft address of controller ${m.id} from the active controller`);
            }
          }
        }
      } catch (err) {
        this.logger.debug({ err: (err as Error).message }, 'asking the active controller for the quorum failed; retrying');
      }
      await this.sleep(DISCOVERY_INTERVAL_MS);
    }
  }

  /** host:port of a member's Raft listener, '' when unknown. */
  private memberAddressText(id: number): string {
    const a = id === this.options.brokerId ? this.options.self : memberAddress(id, this.metadata.quorumAddress(id), this.options.voters);
    return a ? `${a.host}:${a.port}` : '';
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
      this.lastLeaderSeen = this.clock();
      return 0;
    }
    return this.clock() - this.lastLeaderSeen;
  }

  onControllerChange(fn: (leader: number) => void): () => void {
    this.leaderWatchers.add(fn);
    return () => this.leaderWatchers.delete(fn);
  }

  /** Waits until this broker's metadata has applied everything committed when it is called (linearizable). */
  async catchUp(timeoutMs = 5000): Promise<void> {
    const deadline = this.clock() + timeoutMs;
    for (;;) {
      try {
        if (this.isActive) {
          await this.raft.readIndex({ timeoutMs: Math.max(1, deadline - this.clock()) });
          return;
        }
        const st = this.raft.status();
        if (st.leader > 0 && st.applied >= st.commit) return;
      } catch (err) {
        if (this.clock() >= deadline) throw err;
      }
      if (this.clock() >= deadline) throw new MqError('REQUEST_TIMED_OUT', 'the cluster metadata did not catch up (no active controller?)');
      await this.sleep(50);
    }
  }

  /**
   * Commits a command through the active controller (here or forwarded) and
   * returns its result; a refusal throws the MqError it carries. Retries
   * while there is no controller or it moves, until `timeoutMs`.
   */
  submit(command: MetadataCommand, timeoutMs = 10_000): Promise<unknown> {
    return submitWithRetry(
      command,
      (left) => {
        const leader = this.controllerId;
        if (leader === this.options.brokerId) return this.proposeHere(command, left);
        if (leader > 0) return this.forward(leader, command, left);
        throw new MqError('NOT_CONTROLLER', 'no active controller (election in progress or no quorum)');
      },
      { timeoutMs, clock: this.clock, timers: this.timers, closed: () => this.closed },
    );
  }

  /** Serves a ControllerForward request: proposes here when this broker is the active controller. */
  async handleForward(command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
    if (!this.isActive) return { ok: false, code: 'NOT_CONTROLLER', message: `broker ${this.options.brokerId} is not the active controller (it is ${this.controllerId})` };
    return this.proposeHere(command, timeoutMs);
  }

  async handleMetadataFetch(f: MetadataFetch, signal?: AbortSignal): Promise<FeedRead> {
    if (!this.isActive) throw new MqError('NOT_CONTROLLER', `broker ${this.options.brokerId} is not the active controller (it is ${this.controllerId})`, { controllerId: this.controllerId });
    const b = this.metadata.broker(f.brokerId);
    const registeredRun = b !== undefined && b.incarnation === f.incarnation && !this.isVoter(f.brokerId);
    if (registeredRun) {
      // The fetch is the heartbeat of the registered run (another run of the same id does not keep it alive).
      this.lastSeen.set(f.brokerId, this.clock());
      this.observerIndex.set(f.brokerId, f.fetchIndex);
      this.refusedSince.delete(f.brokerId);
    }
    if (registeredRun && signal && this.probeRefused) this.watchFetchConnection(f.brokerId, signal);
    const maxWait = Math.min(f.maxWaitMs, Math.floor(this.options.sessionTimeoutMs / 3));
    await this.feed.waitBeyond(f.fetchIndex, maxWait, (fn, ms) => {
      const timer = this.timers.setTimeout(fn, ms);
      return () => this.timers.clearTimeout(timer);
    }, signal);
    return this.feed.read(f.fetchIndex, f.maxEntries);
  }

  /**
   * The connection an observer's registered run fetches on closing is its
   * connection-loss hint, whether or not a fetch is in flight then (a process
   * killed between two fetches closes it too). One watch per observer: the
   * connection of its latest fetch.
   */
  private watchFetchConnection(id: number, signal: AbortSignal): void {
    if (this.fetchConnections.get(id) === signal || signal.aborted) return;
    this.fetchConnections.set(id, signal);
    signal.addEventListener(
      'abort',
      () => {
        if (this.fetchConnections.get(id) !== signal) return; // it fetches on another connection now
        this.fetchConnections.delete(id);
        this.onObserverConnectionLost(id);
      },
      { once: true },
    );
  }

  /**
   * A broker-only process's fetch connection closed: confirmed by dialling its
   * inter-broker listener; refused means its process is gone, and it is fenced
   * in this round (the voters' equivalent is the Raft transport's refused redial).
   * An accepted dial is tried again a few times while the broker has not
   * fetched again: a killed process's kernel closes its sockets one by one,
   * so the connection can close while its listener still accepts.
   */
  private onObserverConnectionLost(id: number): void {
    const at = this.clock();
    const probe = (attempt: number): void => {
      void this.probeRefused!(id).then(
        (refused) => {
          if (this.closed || !this.isActive) return;
          if ((this.lastSeen.get(id) ?? -1) > at) return; // it fetched again meanwhile
          if (!refused) {
            if (attempt < OBSERVER_PROBE_ATTEMPTS) this.timers.setTimeout(() => probe(attempt + 1), OBSERVER_PROBE_INTERVAL_MS);
            return;
          }
          this.refusedSince.set(id, this.clock());
          this.logger.info({ broker: id }, `broker ${id} closed its metadata fetch connection and refuses connections: its process is gone`);
          this.checkNow();
        },
        (err: unknown) => this.logger.debug({ err, broker: id }, 'probing a broker failed'),
      );
    };
    probe(1);
  }

  /** Whether `id` is a member of the metadata quorum (a voter, or a learner catching up to become one). */
  /** What the Raft node heard from each member: any Raft message (precise to the message, not to the check-quorum period of recentActive). */
  private hearMembers(now: number): void {
    for (const id of membersOf(this.members)) {
      const heard = this.raft.lastHeardFrom(id);
      if (heard > (this.lastSeen.get(id) ?? -1)) {
        this.lastSeen.set(id, Math.min(now, heard));
        if (id === this.predecessor) this.predecessor = -1;
      }
    }
    this.lastSeen.set(this.options.brokerId, now);
  }

  /** True when an unfenced broker has been silent past its session. */
  private overdue(now: number): boolean {
    return this.metadata.brokers().some((b) => !b.fenced && now - this.silentSince(b.id, this.lastSeen.get(b.id) ?? now, now) > this.options.sessionTimeoutMs);
  }

  /**
   * Since when broker `id` has been silent, as the active controller may count it. A Raft member owes an
   * answer only from the first message sent to it after it was last heard from: a controller whose own
   * event loop stalled (GC, a long step) sent no heartbeat meanwhile, and that stall is not the broker's
   * silence. The previous controller (until heard from again) counts from its last message as leader, a
   * broker-only process from its last metadata fetch.
   */
  private silentSince(id: number, seen: number, now: number): number {
    if (id === this.options.brokerId || id === this.predecessor || !this.isVoter(id)) return seen;
    const asked = this.raft.unansweredSince(id);
    return asked < 0 ? now : Math.max(seen, asked);
  }

  private isVoter(id: number): boolean {
    return this.members.voters.includes(id) || this.members.learners.includes(id);
  }

  /**
   * A registration of a broker id whose registered run (another incarnation)
   * is still alive is a second process with the same id: refused. After a
   * crash the old run goes silent, so the new one gets in once the old
   * session has expired (the broker retries until then). Voters are told
   * apart by their Raft identity and data directory lock instead.
   */
  private duplicateRegistration(cmd: RegisterBrokerCommand): CommandResult | undefined {
    const old = this.metadata.broker(cmd.id);
    if (!old || old.incarnation === cmd.incarnation || old.shuttingDown || this.isVoter(cmd.id)) return undefined;
    const now = this.clock();
    const silentMs = now - (this.lastSeen.get(cmd.id) ?? now);
    if (silentMs >= this.options.sessionTimeoutMs) return undefined;
    const message =
      `broker id ${cmd.id} is registered by another live process (${old.host}:${old.port}, run ${old.incarnation}, heard from ${silentMs} ms ago); ` +
      `refusing run ${cmd.incarnation} from ${cmd.host}:${cmd.port} until that session expires (broker.session.timeout.ms=${this.options.sessionTimeoutMs})`;
    const key = `${cmd.id}/${cmd.incarnation}`;
    if (!this.refusedLogged.has(key)) {
      this.refusedLogged.add(key);
      this.logger.warn({ broker: cmd.id, incarnation: cmd.incarnation, registered: old.incarnation, silentMs }, message);
    }
    return { ok: false, code: 'DUPLICATE_BROKER_REGISTRATION', message };
  }

  /**
   * Proposes a command, whatever door it came through (this broker's own
   * submit, a ControllerForward): the exact bytes proposed are decoded first
   * (the rules of decodeCommand), then checked against this cluster's limits
   * (command-limits.ts). Commands that add partitions are proposed one at a
   * time, each checked after the one before it has been applied, so
   * concurrent requests cannot together overrun a budget.
   */
  private async proposeHere(command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
    let data: Uint8Array;
    let checked: MetadataCommand;
    try {
      data = encodeCommand(command);
      checked = decodeCommand(data);
    } catch (err) {
      return refusalOf(err);
    }
    if (isQuorumCommand(checked)) return this.quorumRequest(checked, timeoutMs);
    if (checked.type === 'registerBroker') {
      const refusal = this.duplicateRegistration(checked);
      if (refusal) return refusal;
    }
    const propose = async (): Promise<CommandResult> => {
      try {
        checkCommandLimits(checked, this.metadata, this.options.limits);
      } catch (err) {
        return refusalOf(err);
      }
      const r = await this.raft.propose(data, { timeoutMs });
      const result = (r.result as CommandResult | null) ?? { ok: true };
      if (checked.type === 'registerBroker' && checked.id === this.options.brokerId && this.soleVoter && result.ok) {
        // The sole voter's own broker is alive and caught up by definition: unfenced now, not at the next liveness round.
        const { brokerEpoch } = result.value as { brokerEpoch: number };
        await this.submitQuietly({ type: 'unfenceBroker', id: checked.id, brokerEpoch });
      }
      return result;
    };
    if (!addsPartitions(checked)) return propose();
    const run = this.partitionChanges.then(propose);
    this.partitionChanges = run.catch(() => undefined);
    return run;
  }

  // ---- controller quorum membership (quorum.ts) ------------------------------------

  /**
   * AddRaftVoter, RemoveRaftVoter and DescribeQuorum on the active
   * controller. Changes are single-server and one at a time (the Raft
   * core also refuses a second uncommitted one): a second request while one
   * runs is refused with VOTER_CHANGE_IN_PROGRESS (retriable).
   */
  private async quorumRequest(cmd: QuorumCommand, timeoutMs: number): Promise<CommandResult> {
    try {
      if (cmd.type === 'describeQuorum') return { ok: true, value: quorumView(this.raft.status(), (id) => this.memberAddressText(id)) };
      if (this.options.local && cmd.type === 'addVoter') {
        throw new MqError(
          'INVALID_REQUEST',
          `this broker is a one-node cluster with no Raft listener, so its quorum cannot grow yet: restart it with controller.quorum.voters=${this.options.brokerId}@<host>:<raft port> and inter.broker.port=<port> (its data stays), then add controllers (see "Growing a single broker into a cluster" in the broker README)`,
        );
      }
      if (this.quorumChanging) throw new MqError('VOTER_CHANGE_IN_PROGRESS', `a change of the controller quorum is in progress (${this.quorumChanging}); retry once it is done`);
      const what = cmd.type === 'addVoter' ? `adding controller ${cmd.id}` : `removing controller ${cmd.id}`;
      this.quorumChanging = what;
      try {
        const cs = cmd.type === 'addVoter' ? await this.addVoter(cmd, timeoutMs) : await this.removeVoter(cmd.id, timeoutMs);
        return { ok: true, value: cs };
      } finally {
        this.quorumChanging = undefined;
      }
    } catch (err) {
      if (isMqError(err) && err.code === 'PROPOSAL_DROPPED' && /membership change is still pending/.test(err.message)) {
        return { ok: false, code: 'VOTER_CHANGE_IN_PROGRESS', message: err.message };
      }
      return refusalOf(err);
    }
  }

  /**
   * Adds a controller: first as a learner (it copies the log without
   * counting for commits), then, once it holds everything committed, as a
   * voter. A learner that does not catch up within the request's time is
   * removed again, so no half-added member stays.
   */
  private async addVoter(cmd: AddVoterCommand, timeoutMs: number): Promise<ConfState> {
    const deadline = this.clock() + timeoutMs;
    const left = () => Math.max(1, deadline - this.clock());
    // Catching up may take most of the time; undoing or promoting gets the rest.
    const catchUpBy = deadline - Math.min(2000, Math.floor(timeoutMs / 4));
    const cs = this.raft.status().confState;
    if (cs.voters.includes(cmd.id)) {
      throw new MqError('DUPLICATE_VOTER', `controller ${cmd.id} is already a voter of the metadata quorum (voters: ${cs.voters.join(', ')})`);
    }
    const context = encodeVoterContext(cmd);
    const address = `${cmd.host}:${cmd.port}`;
    this.logger.info({ id: cmd.id, address }, `adding controller ${cmd.id} (${address}) to the metadata quorum as a learner`);
    await this.raft.addLearner(cmd.id, { context, timeoutMs: left() });
    for (;;) {
      const st = this.raft.status();
      if (st.role !== StateRole.Leader) throw new MqError('NOT_CONTROLLER', `controller ${this.options.brokerId} lost leadership while adding ${cmd.id} (it stays a learner); retry on the new active controller`);
      const match = st.progress[cmd.id]?.match ?? 0;
      if (match >= st.commit) break;
      if (this.clock() >= catchUpBy) {
        this.logger.warn({ id: cmd.id, address, match, commit: st.commit }, `controller ${cmd.id} did not catch up; removing the learner again`);
        await this.raft.removeNode(cmd.id, { timeoutMs: left() }).catch((err: unknown) => this.logger.warn({ id: cmd.id, err: (err as Error).message }, `removing learner ${cmd.id} failed`));
        // Not retriable: a retry would add it again for as long, to the same end.
        throw new MqError(
          'ABORTED',
          `controller ${cmd.id} at ${address} did not catch up with the metadata log within ${timeoutMs} ms (it holds ${match} of ${st.commit} entries): is it running with controller.raft.address=${address}? It was removed again; give it more time with --timeout-ms`,
        );
      }
      await this.sleep(Math.min(50, left()));
    }
    const after = await this.raft.addVoter(cmd.id, { context, timeoutMs: left() });
    this.logger.info({ id: cmd.id, voters: after.voters }, `controller ${cmd.id} is a voter of the metadata quorum`);
    return after;
  }

  /** Removes a voter or learner; the active controller removing itself steps down once the change is committed. */
  private async removeVoter(id: number, timeoutMs: number): Promise<ConfState> {
    const cs = this.raft.status().confState;
    if (!cs.voters.includes(id) && !cs.learners.includes(id)) {
      throw new MqError('UNKNOWN_NODE', `controller ${id} is not in the metadata quorum (voters: ${cs.voters.join(', ')}${cs.learners.length ? `; learners: ${cs.learners.join(', ')}` : ''})`);
    }
    if (cs.voters.length === 1 && cs.voters[0] === id) {
      throw new MqError('INVALID_REQUEST', `refusing to remove controller ${id}, the last voter: the metadata log would have no quorum (add another voter first)`);
    }
    this.logger.info({ id }, `removing controller ${id} from the metadata quorum`);
    const after = await this.raft.removeNode(id, { timeoutMs });
    this.logger.info({ id, voters: after.voters }, `controller ${id} is no longer in the metadata quorum${id === this.options.brokerId ? ': this controller steps down' : ''}`);
    return after;
  }

  status(): ControllerStatus {
    const st = this.raft.status();
    const now = this.clock();
    const active = st.role === StateRole.Leader;
    return {
      controllerId: st.leader > 0 ? st.leader : -1,
      active,
      raftTerm: st.term,
      raftCommit: st.commit,
      applied: st.applied,
      raftElections: st.electionsStarted,
      controllerChanges: st.leaderChangesSeen,
      quorumVoters: [...st.confState.voters],
      brokers: this.metadata.brokers().map((b) => ({
        id: b.id,
        fenced: b.fenced,
        lastSeenMsAgo: active ? now - (this.lastSeen.get(b.id) ?? now) : -1,
      })),
    };
  }

  private schedule(): void {
    if (this.closed) return;
    // A round every livenessCheckMs, and one just after the first session that can run out before then:
    // a silent broker is fenced within a Raft message of its session, not up to a round later.
    const untilExpiry = this.sessionExpiry - this.clock();
    if (this.livenessTimer) this.timers.clearTimeout(this.livenessTimer);
    this.livenessTimer = this.timers.setTimeout(() => {
      this.livenessTimer = undefined;
      void this.check();
    }, Math.max(1, Math.min(this.options.livenessCheckMs, untilExpiry)));
  }

  /** One round of the active controller's duties, then the next one scheduled (from what this one saw). */
  private async check(): Promise<void> {
    if (this.busy) {
      this.checkAgain = true; // the round in progress runs another when it ends
      return;
    }
    try {
      await this.round();
    } finally {
      this.schedule();
    }
  }

  private async round(): Promise<void> {
    if (this.closed || this.busy) return;
    const st = this.raft.status();
    if (st.role !== StateRole.Leader) {
      this.activeTerm = -1;
      this.ready = false;
      this.sessionExpiry = Infinity;
      return;
    }
    let now = this.clock();
    this.busy = true;
    this.sessionExpiry = Infinity;
    try {
      if (this.activeTerm !== st.term) {
        // A new active controller: everyone gets a full session from now, and acting waits for the log.
        this.activeTerm = st.term;
        this.ready = false;
        this.lastSeen.clear();
        this.observerIndex.clear();
        this.recoveryWaits.clear();
        for (const b of this.metadata.brokers()) this.lastSeen.set(b.id, now);
        // Except the previous controller: this voter, its follower, knows when it last heard from it
        // (a paused controller is fenced one session after it went quiet, not one session after the election).
        const prev = this.lastOtherLeader;
        const heard = prev > 0 ? this.raft.lastHeardFrom(prev) : -1;
        this.predecessor = -1;
        if (heard >= 0 && this.lastSeen.has(prev)) {
          this.lastSeen.set(prev, Math.min(now, heard));
          this.predecessor = prev;
        }
        this.lastImbalanceCheck = now;
        await this.raft.readIndex({ timeoutMs: this.options.sessionTimeoutMs });
        this.ready = true;
        this.autoBalancer?.activate(this.metadata, now);
      }
      if (!this.ready) return;
      this.hearMembers(now);
      if (this.overdue(now)) {
        // Answers may be waiting on this controller's own sockets (its loop was busy when they arrived): they are
        // read once before anyone is fenced for silence.
        await new Promise<void>((resolve) => this.timers.setTimeout(resolve, 0));
        now = this.clock();
        this.hearMembers(now);
      }
      let expiry = Infinity;
      for (const b of this.metadata.brokers()) {
        const seen = this.lastSeen.get(b.id) ?? (this.lastSeen.set(b.id, now), now);
        const silentMs = now - this.silentSince(b.id, seen, now);
        // (One already past its session is dealt with in this round; a refused fencing is retried at the usual pace.)
        if (!b.fenced && silentMs <= this.options.sessionTimeoutMs) expiry = Math.min(expiry, now - silentMs + this.options.sessionTimeoutMs + 1);
        const refusedAt = this.refusedSince.get(b.id);
        // Refused after the last message (or metadata fetch) from it: the process is gone (a restarted one is heard from again).
        const gone = refusedAt !== undefined && refusedAt > (this.isVoter(b.id) ? this.raft.lastHeardFrom(b.id) : seen);
        if (!b.fenced && (silentMs > this.options.sessionTimeoutMs || gone)) {
          const reason = gone ? `its port refuses connections (process gone), last heard from ${silentMs} ms ago` : `not heard from for ${silentMs} ms`;
          this.logger.warn({ broker: b.id, silentMs, heardMsAgo: now - seen, gone, brokerEpoch: b.brokerEpoch }, `fencing broker ${b.id}: ${reason}`);
          if (gone) this.goneRuns.set(b.id, b.brokerEpoch);
          await this.submitQuietly({ type: 'fenceBroker', id: b.id, brokerEpoch: b.brokerEpoch, reason });
        } else if (b.fenced && !b.shuttingDown && this.goneRuns.get(b.id) !== b.brokerEpoch && silentMs <= this.options.livenessCheckMs * 3 && this.caughtUp(b, st.progress)) {
          this.logger.info({ broker: b.id, brokerEpoch: b.brokerEpoch }, `unfencing broker ${b.id}: alive and caught up with the metadata log`);
          await this.submitQuietly({ type: 'unfenceBroker', id: b.id, brokerEpoch: b.brokerEpoch });
        }
      }
      this.sessionExpiry = expiry;
      await this.recoverLeaderless(now);
      if (this.options.autoLeaderRebalance && now - this.lastImbalanceCheck >= this.options.leaderImbalanceCheckMs) {
        this.lastImbalanceCheck = now;
        await this.rebalanceLeaders();
      }
      await this.autoBalance(now);
    } catch (err) {
      if (!this.closed) this.logger.warn({ err: (err as Error).message }, 'controller round failed');
    } finally {
      this.busy = false;
      if (this.checkAgain && !this.closed) {
        this.checkAgain = false;
        void this.check();
      }
    }
  }

  /**
   * Unclean recovery: a leaderless partition whose candidates have not all
   * reported their log ends gets `unclean.recovery.wait.ms` (from when this
   * controller first saw it waiting); then the best candidate reported so far
   * is elected, at error level, since a missing one may have held more.
   */
  private async recoverLeaderless(now: number): Promise<void> {
    const { started, due } = this.recoveryWaits.round(this.metadata.pendingRecoveries(), now);
    for (const r of started) {
      const waitingFor = [
        ...(r.missing.length > 0 ? [`the log ends of broker(s) ${r.missing.join(', ')}`] : []),
        ...(r.fenced.length > 0 ? [`broker(s) ${r.fenced.join(', ')} (the longest log reported) to be unfenced`] : []),
      ].join(' and ');
      this.logger.warn(
        { topic: r.topic, partition: r.partition, candidates: r.candidates, missing: r.missing, fenced: r.fenced, waitMs: this.options.uncleanRecoveryWaitMs },
        `${r.topic}-${r.partition} has no trusted live ISR member: waiting up to ${this.options.uncleanRecoveryWaitMs} ms for ${waitingFor} before electing the longest log`,
      );
    }
    for (const r of due) await this.submitQuietly({ type: 'electRecovered', topic: r.topic, topicId: r.topicId, partition: r.partition, leaderEpoch: r.leaderEpoch });
  }

  private caughtUp(b: BrokerRegistration, progress: Record<number, { match: number }>): boolean {
    if (b.id === this.options.brokerId) return true;
    if (!this.isVoter(b.id)) return (this.observerIndex.get(b.id) ?? -1) >= b.brokerEpoch;
    return (progress[b.id]?.match ?? 0) >= b.brokerEpoch;
  }

  /** The automatic preferred-leader election (the same mechanism as ElectLeaders on demand: preferred-leaders.ts). */
  private async rebalanceLeaders(): Promise<void> {
    const moves = electable(preferredElections(this.metadata));
    if (moves.length === 0) return;
    this.logger.info({ partitions: moves.length }, 'moving leadership back to preferred replicas');
    await this.submitQuietly({ type: 'electPreferred', partitions: moves });
  }

  /** The controller's own partition balancer (auto-balancer.ts): its moves are ordinary reassignments. */
  private async autoBalance(now: number): Promise<void> {
    if (!this.autoBalancer) return;
    const moves = this.autoBalancer.check(this.metadata, now, (id) => now - (this.lastSeen.get(id) ?? now));
    if (moves.length > 0) await this.submitQuietly({ type: 'alterReassignments', partitions: moves });
  }

  private async submitQuietly(command: MetadataCommand): Promise<void> {
    const r = await this.proposeHere(command, this.options.sessionTimeoutMs);
    if (!r.ok) this.logger.warn({ command: command.type, code: r.code, err: r.message }, 'controller command refused');
  }

  private sleep(ms: number): Promise<void> {
    return sleep(this.timers, ms);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.livenessTimer) this.timers.clearTimeout(this.livenessTimer);
    this.stopTlsReload();
    await this.raft?.close();
  }
}

/** The Raft transport's TLS material from the broker's files (inter.broker.tls.enabled makes tls.ca.file required). */
function raftTls(s: TlsSettings): WsTransportTls {
  const m = readMaterial(s);
  return { cert: m.cert, key: m.key, ca: m.ca! };
}

/** The URL the Raft transport dials a member's listener at (the one place for every member, founding or added). */
function raftUrl(a: { host: string; port: number }, tls: boolean): string {
  return `${tls ? 'wss' : 'ws'}://${a.host}:${a.port}`;
}

/** A refusal for a command that breaks a rule (an MqError's code, else INVALID_REQUEST). */
function refusalOf(err: unknown): CommandResult {
  return { ok: false, code: isMqError(err) ? err.code : 'INVALID_REQUEST', message: (err as Error).message };
}

export async function startController(options: ControllerOptions, components: ControllerComponents, dataDir: string): Promise<RaftController> {
  const c = new RaftController(options, components);
  await c.start(dataDir);
  return c;
}
