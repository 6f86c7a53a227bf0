/** Controller options: the Raft voters, timings of liveness and leader balancing. */
import { createHash } from 'node:crypto';
import { MqError } from '@mq/protocol/errors';
import { DEFAULT_COMMAND_LIMITS, type CommandLimits } from './command-limits.js';
import { AUTO_BALANCE_MODES, DEFAULT_AUTO_BALANCE, type AutoBalanceOptions } from './auto-balancer.js';
import type { TlsSettings } from '../server/tls.js';

export interface ControllerOptions {
  /** This broker's id (also its Raft node id). */
  brokerId: number;
  /** `id@host:port` of every founding controller voter (the Raft transport's address), comma separated. */
  voters: string;
  /**
   * `host:port` of this controller's Raft listener when it is not a founding
   * voter (`controller.raft.address`): it starts with an empty log and no
   * vote, and waits to be added (mq controller add-voter).
   */
  raftAddress?: string;
  /**
   * A one-node cluster (a broker started with no cluster settings): the only
   * voter, with no Raft listener and no socket. Its quorum cannot grow until
   * the broker is restarted with controller.quorum.voters naming its Raft
   * address (a one-voter quorum that listens).
   */
  local?: boolean;
  /** Raft tick. */
  tickMs?: number;
  /** A broker not heard from for this long is fenced. */
  sessionTimeoutMs?: number;
  /** How often the active controller checks broker liveness. */
  livenessCheckMs?: number;
  /** Move leadership back to preferred replicas. */
  autoLeaderRebalance?: boolean;
  leaderImbalanceCheckMs?: number;
  /** Snapshot the metadata every this many entries. */
  snapshotEntries?: number;
  /** fsync the metadata log (on by default; the tests of a whole cluster on one disk may turn it off). */
  fsync?: boolean;
  /**
   * Unclean recovery: how long a leaderless partition waits for its last ISR
   * members to report their log ends before the best reported one is elected
   * (`unclean.recovery.wait.ms`).
   */
  uncleanRecoveryWaitMs?: number;
  /** Refuse a Raft connection claiming to be a voter unless it comes from that voter's configured address. */
  verifyPeerAddress?: boolean;
  /** The cluster secret every Raft peer proves in its hello (cluster.secret.file); absent: none. */
  clusterSecret?: Uint8Array;
  /** TLS both ways on the Raft links (inter.broker.tls.enabled): wss://, this voter's certificate, peers verified against the CA. */
  tls?: TlsSettings;
  /** Partition limits and budgets checked before a command is proposed (command-limits.ts). */
  limits?: Partial<CommandLimits>;
  /** The controller's own partition balancer (auto-balancer.ts; off by default). */
  autoBalance?: Partial<AutoBalanceOptions>;
}

/** 40 ms: a paused active controller's successor is elected within 400-800 ms (10-20 ticks). */
export const DEFAULT_CONTROLLER_TICK_MS = 40;
/**
 * 15 ticks: a paused broker is fenced within about 0.65 s. Passed the 10-minute full-load no-false-positive run
 * once silences stopped counting the controller's own stalls and a follower's slow disk (broker README, "Failover").
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 600;
export const DEFAULT_LIVENESS_CHECK_MS = 200;
export const DEFAULT_LEADER_IMBALANCE_CHECK_MS = 30_000;
export const DEFAULT_METADATA_SNAPSHOT_ENTRIES = 10_000;
export const DEFAULT_UNCLEAN_RECOVERY_WAIT_MS = 5000;

export interface Voter {
  id: number;
  host: string;
  port: number;
}

export type ParsedControllerOptions = Readonly<Required<Omit<ControllerOptions, 'voters' | 'limits' | 'autoBalance' | 'clusterSecret' | 'tls' | 'raftAddress'>>> & {
  readonly tls: TlsSettings | undefined;
  readonly voters: readonly Voter[];
  readonly limits: CommandLimits;
  readonly autoBalance: Readonly<AutoBalanceOptions>;
  readonly clusterSecret: Uint8Array | undefined;
  /** This controller's Raft listener (its place in the voters, or controller.raft.address). */
  readonly self: Voter;
  /** Whether it is one of the founding voters (controller.quorum.voters), else one that joins a running quorum. */
  readonly founding: boolean;
  /** A one-node cluster's voter: no Raft listener. */
  readonly local: boolean;
};

/** Parses `1@127.0.0.1:19091,2@127.0.0.1:19092`. */
export function parseVoters(text: string, what = 'controller.quorum.voters'): Voter[] {
  const out: Voter[] = [];
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)@(.+):(\d+)$/.exec(part);
    if (!m) throw new MqError('INVALID_CONFIG', `${what}: "${part}" is not id@host:port (e.g. 1@127.0.0.1:19091)`);
    const id = Number(m[1]);
    const port = Number(m[3]);
    if (port < 1 || port > 65535) throw new MqError('INVALID_CONFIG', `${what}: port ${port} of ${id} is not a port number`);
    if (id < 1) throw new MqError('INVALID_CONFIG', `${what}: broker id ${id} must be positive in a cluster (Raft node ids start at 1)`);
    if (out.some((v) => v.id === id)) throw new MqError('INVALID_CONFIG', `${what}: broker ${id} is listed twice`);
    out.push({ id, host: m[2]!, port });
  }
  return out;
}

/**
 * The metadata quorum's cluster id, which every Raft Hello must name: derived
 * from the voters (ids and hosts, the same in every voter's configuration),
 * so a process configured for another quorum, or one that only knows the
 * old constant, is refused. It identifies; it does not authenticate.
 */
export function quorumClusterId(voters: readonly Voter[]): string {
  const canonical = [...voters].sort((a, b) => a.id - b.id).map((v) => `${v.id}@${v.host.toLowerCase()}`).join(',');
  return `mq-metadata-${createHash('sha256').update(canonical).digest('hex').slice(0, 16)}`;
}

function nonNeg(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new MqError('INVALID_CONFIG', `${name} must be a non-negative integer, got ${v}`);
  return v;
}

export function parseControllerOptions(o: ControllerOptions): ParsedControllerOptions {
  const voters = parseVoters(o.voters);
  if (voters.length === 0) throw new MqError('INVALID_CONFIG', 'controller.quorum.voters is empty');
  const listed = voters.find((v) => v.id === o.brokerId);
  const raftAddress = (o.raftAddress ?? '').trim();
  if (listed && raftAddress !== '' && raftAddress !== `${listed.host}:${listed.port}`) {
    throw new MqError('INVALID_CONFIG', `controller.raft.address ${raftAddress} contradicts broker ${o.brokerId}'s place in controller.quorum.voters (${listed.host}:${listed.port}); leave it empty for a founding voter`);
  }
  let self: Voter;
  if (listed) self = listed;
  else if (raftAddress !== '') self = parseVoters(`${o.brokerId}@${raftAddress}`, 'controller.raft.address')[0]!;
  else {
    throw new MqError(
      'INVALID_CONFIG',
      `broker ${o.brokerId} is not in controller.quorum.voters (${voters.map((v) => v.id).join(', ')}): list it there, or, to add a controller to a running quorum, set controller.raft.address=host:port and run mq controller add-voter`,
    );
  }
  if (o.local && (voters.length !== 1 || !listed)) throw new MqError('INVALID_CONFIG', 'a one-node cluster has exactly one voter: this broker');
  const tickMs = nonNeg('controller.tick.ms', o.tickMs ?? DEFAULT_CONTROLLER_TICK_MS) || DEFAULT_CONTROLLER_TICK_MS;
  const sessionTimeoutMs = nonNeg('broker.session.timeout.ms', o.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS);
  if (sessionTimeoutMs < tickMs * 15) {
    throw new MqError('INVALID_CONFIG', `broker.session.timeout.ms ${sessionTimeoutMs} must be at least 15 Raft ticks (${tickMs * 15} ms): liveness is judged from Raft heartbeats`);
  }
  return Object.freeze({
    brokerId: o.brokerId,
    voters: Object.freeze(voters.map((v) => Object.freeze({ ...v }))),
    self: Object.freeze({ ...self }),
    founding: listed !== undefined,
    local: o.local ?? false,
    tickMs,
    sessionTimeoutMs,
    livenessCheckMs: nonNeg('livenessCheckMs', o.livenessCheckMs ?? DEFAULT_LIVENESS_CHECK_MS) || DEFAULT_LIVENESS_CHECK_MS,
    autoLeaderRebalance: o.autoLeaderRebalance ?? true,
    leaderImbalanceCheckMs: nonNeg('leader.imbalance.check.interval.ms', o.leaderImbalanceCheckMs ?? DEFAULT_LEADER_IMBALANCE_CHECK_MS) || DEFAULT_LEADER_IMBALANCE_CHECK_MS,
    snapshotEntries: nonNeg('snapshotEntries', o.snapshotEntries ?? DEFAULT_METADATA_SNAPSHOT_ENTRIES),
    fsync: o.fsync ?? true,
    uncleanRecoveryWaitMs: nonNeg('unclean.recovery.wait.ms', o.uncleanRecoveryWaitMs ?? DEFAULT_UNCLEAN_RECOVERY_WAIT_MS),
    verifyPeerAddress: o.verifyPeerAddress ?? true,
    clusterSecret: o.clusterSecret,
    tls: o.tls,
    limits: parseLimits(o.limits ?? {}),
    autoBalance: parseAutoBalance(o.autoBalance ?? {}),
  });
}

function parseAutoBalance(a: Partial<AutoBalanceOptions>): AutoBalanceOptions {
  const d = DEFAULT_AUTO_BALANCE;
  const mode = a.mode ?? d.mode;
  if (!AUTO_BALANCE_MODES.includes(mode)) throw new MqError('INVALID_CONFIG', `partition.autobalancing.mode must be one of ${AUTO_BALANCE_MODES.join(', ')}, got "${String(mode)}"`);
  const positive = (name: string, v: number) => {
    if (!Number.isSafeInteger(v) || v < 1) throw new MqError('INVALID_CONFIG', `${name} must be a positive integer, got ${v}`);
    return v;
  };
  return Object.freeze({
    mode,
    maxConcurrentMoves: positive('partition.autobalancing.max.concurrent.moves', a.maxConcurrentMoves ?? d.maxConcurrentMoves),
    nodeAvailabilityTimeoutMs: positive('partition.autobalancing.node.availability.timeout.ms', a.nodeAvailabilityTimeoutMs ?? d.nodeAvailabilityTimeoutMs),
    checkIntervalMs: positive('partition.autobalancing.tick.interval.ms', a.checkIntervalMs ?? d.checkIntervalMs),
  });
}

function parseLimits(l: Partial<CommandLimits>): CommandLimits {
  const positive = (name: string, v: number) => {
    if (!Number.isSafeInteger(v) || v < 1) throw new MqError('INVALID_CONFIG', `${name} must be a positive integer, got ${v}`);
    return v;
  };
  const d = DEFAULT_COMMAND_LIMITS;
  return Object.freeze({
    maxPartitionsPerTopic: positive('topic.max.partitions', l.maxPartitionsPerTopic ?? d.maxPartitionsPerTopic),
    maxPartitionsPerRequest: positive('max.partitions.per.request', l.maxPartitionsPerRequest ?? d.maxPartitionsPerRequest),
    maxReplicasPerBroker: positive('max.partition.replicas.per.broker', l.maxReplicasPerBroker ?? d.maxReplicasPerBroker),
    maxFrameBytes: positive('max.frame.bytes', l.maxFrameBytes ?? d.maxFrameBytes),
  });
}
