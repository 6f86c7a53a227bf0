/**
 * The controller of a cluster node: a Raft voter of the metadata log (its
 * options from the broker configuration, commands for another voter sent
 * over the broker or controller connections), or, for a broker-only
 * process, an observer that fetches the metadata from the active controller.
 */
import type { Logger } from 'pino';
import type { Timers } from '@mq/protocol/components';
import type { AutoBalanceMode } from '../../controller/auto-balancer.js';
import type { BrokerConfig } from '../../config/broker-config.js';
import { commandLimitsOf } from '../../controller/command-limits.js';
import { encodeCommand, type CommandResult, type MetadataCommand } from '../../controller/commands.js';
import { commandResultOf, type ControllerChannel } from '../../controller/controller-channel.js';
import { RaftController, type Controller, type ControllerComponents } from '../../controller/controller.js';
import type { MetadataState } from '../../controller/metadata-state.js';
import { ObserverController } from '../../controller/observer.js';
import type { ControllerOptions } from '../../controller/options.js';
import type { ProcessRoles } from '../../controller/roles.js';
import type { TlsSettings } from '../../server/tls.js';
import type { PeerConnections } from '../peer-connections.js';
import { dialRefused } from '../refused-probe.js';

export interface ControllerFactoryOptions {
  brokerId: number;
  config: BrokerConfig;
  roles: ProcessRoles;
  voters: string;
  oneNode: boolean;
  /** This run's incarnation (an observer's metadata fetches name it). */
  incarnation: string;
  clusterSecret?: Uint8Array;
  interBrokerTls?: TlsSettings;
}

export interface ControllerFactoryComponents {
  logger: Logger;
  clock: () => number;
  timers: Timers;
  /** The metadata log's Raft transport and storage (default: WebSocket and files under the data directory). */
  raft?: ControllerComponents['raft'];
  channel: ControllerChannel | undefined;
  peers: Pick<PeerConnections, 'request'>;
}

/** A voter's controller options, from the broker configuration. */
export function raftControllerOptions(o: Omit<ControllerFactoryOptions, 'roles' | 'incarnation'>): ControllerOptions {
  const cfg = o.config;
  return {
    brokerId: o.brokerId,
    voters: o.voters,
    raftAddress: cfg.get('controller.raft.address'),
    ...(o.oneNode ? { local: true } : {}),
    tickMs: cfg.int('controller.tick.ms'),
    sessionTimeoutMs: cfg.int('broker.session.timeout.ms'),
    autoLeaderRebalance: cfg.bool('auto.leader.rebalance.enable'),
    leaderImbalanceCheckMs: cfg.int('leader.imbalance.check.interval.ms'),
    fsync: cfg.bool('controller.fsync'),
    uncleanRecoveryWaitMs: cfg.int('unclean.recovery.wait.ms'),
    verifyPeerAddress: cfg.bool('controller.quorum.verify.peer.address'),
    ...(o.clusterSecret ? { clusterSecret: o.clusterSecret } : {}),
    ...(o.interBrokerTls ? { tls: o.interBrokerTls } : {}),
    limits: commandLimitsOf(cfg),
    autoBalance: {
      mode: cfg.get('partition.autobalancing.mode') as AutoBalanceMode,
      maxConcurrentMoves: cfg.int('partition.autobalancing.max.concurrent.moves'),
      nodeAvailabilityTimeoutMs: cfg.int('partition.autobalancing.node.availability.timeout.ms'),
      checkIntervalMs: cfg.int('partition.autobalancing.tick.interval.ms'),
    },
  };
}

/**
 * How a voter sends a command to another voter (the active controller):
 * through its broker connection when that voter is also a broker, else
 * through the controller channel.
 */
export function forwardToVoter(brokerId: number, metadata: () => MetadataState, channel: ControllerChannel | undefined, peers: Pick<PeerConnections, 'request'>) {
  return async (controllerId: number, command: MetadataCommand, timeoutMs: number): Promise<CommandResult> => {
    if (!metadata().broker(controllerId) && channel) return channel.forward(brokerId, command, timeoutMs);
    const r = await peers.request(controllerId, 'controllerForward', { brokerId, command: encodeCommand(command), timeoutMs }, { timeoutMs: timeoutMs + 2000 });
    return commandResultOf(r);
  };
}

/**
 * This process's controller, not started yet: a Raft voter (`start` opens its
 * log on the data directory) or an observer (`start` begins its fetches).
 */
export function createController(o: ControllerFactoryOptions, c: ControllerFactoryComponents): { controller: Controller; start(dataDir: string): Promise<void> } {
  const { logger, clock, timers, channel, peers } = c;
  if (!o.roles.controller) {
    const observer = new ObserverController({ brokerId: o.brokerId, incarnation: o.incarnation, sessionTimeoutMs: o.config.int('broker.session.timeout.ms') }, { logger, channel: channel! });
    return { controller: observer, start: async () => observer.start() };
  }
  const metadata = (): MetadataState => raft.metadata;
  const raft: RaftController = new RaftController(raftControllerOptions(o), {
    logger,
    clock,
    timers,
    ...(c.raft ? { raft: c.raft } : {}),
    forward: forwardToVoter(o.brokerId, metadata, channel, peers),
    probeRefused: async (id) => {
      const b = metadata().broker(id);
      return b ? dialRefused(b.host, b.interBrokerPort ?? b.port) : false;
    },
  });
  return { controller: raft, start: (dataDir) => raft.start(dataDir) };
}
