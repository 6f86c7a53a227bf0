/**
 * A process's cluster membership, by its `process.roles`: the controller (a
 * Raft voter of the metadata log, or for a broker-only process an observer
 * that fetches it from the active controller), the connections to the other
 * brokers, the replica manager (started only when the process is a broker),
 * and the handlers that serve the cluster's view. startBroker always starts
 * one: with neither `controller.quorum.voters` nor
 * `controller.quorum.bootstrap.servers` configured, the broker is a one-node
 * cluster (a lone KRaft node in combined mode: broker and the only voter).
 */
import type { Logger } from 'pino';
import type { Timers } from '@mq/protocol/components';
import type { ConnectFn } from '@mq/client/internal';
import type { BrokerConfig } from '../config/broker-config.js';
import { newIncarnation, RaftController, type Controller, type ControllerComponents } from '../controller/controller.js';
import { formatRoles, type ProcessRoles } from '../controller/roles.js';
import type { HandlerDeps } from '../handlers/index.js';
import type { HandlerMap } from '../handlers/types.js';
import type { LogOpener } from '../log-factory.js';
import type { TlsSettings } from '../server/tls.js';
import type { PeerConnections } from './peer-connections.js';
import { ReplicaManager, type ReplicaManagerComponents } from './replica-manager.js';
import { BrokerRegistration, registerBrokerCommand, type BrokerEndpoints } from './node/broker-registration.js';
import { registerControllerEndpoint } from './node/controller-endpoint.js';
import { createController } from './node/controller-factory.js';
import { clusterLinks } from './node/links.js';
import { nodeHandlers } from './node/node-handlers.js';
import { nodeRoles } from './node/node-roles.js';
import { closeNode, controlledShutdown } from './node/node-shutdown.js';
import { peerFetch, peerOffsetForLeaderEpoch } from './node/replica-requests.js';
import { ReplicaStart } from './node/replica-start.js';

export type { BrokerEndpoints } from './node/broker-registration.js';

export interface ClusterNodeOptions {
  brokerId: number;
  dataDir: string;
  config: BrokerConfig;
  /** The previous run shut down cleanly (the data directory's clean-shutdown marker); told to the controller at registration. */
  cleanShutdown?: boolean;
  /**
   * A one-node cluster (no cluster settings): this broker is the quorum's only
   * voter and has no peers, so nothing listens for Raft or for other brokers.
   */
  oneNode?: boolean;
  /**
   * The cluster secret (cluster.secret.file): every inter-broker, controller
   * channel and Raft connection this process opens proves it, and the Raft
   * listener requires it. Absent (the simulator, a cluster without one): no
   * peer authentication.
   */
  clusterSecret?: Uint8Array;
  /** TLS both ways on the inter-broker and Raft links (inter.broker.tls.enabled): dials present this broker's certificate and verify the peer's. */
  interBrokerTls?: TlsSettings;
}

/** What the broker hands its cluster membership: the same logger, clock, timers and log factory as the rest of it. */
export interface ClusterNodeComponents {
  logger: Logger;
  clock: () => number;
  timers: Timers;
  openLog: LogOpener;
  /** Opens connections to the other brokers (default: a WebSocket to each one's inter-broker listener). */
  connect?: ConnectFn;
  /** The metadata log's Raft transport and storage (default: WebSocket and files under the data directory). */
  raft?: ControllerComponents['raft'];
  /** High-watermark checkpoints and directory operations of the replicas (default: files under the data directory). */
  replicaStorage?: Pick<ReplicaManagerComponents, 'checkpointFor' | 'dirs'>;
  /** Called once a transaction marker is written to a partition led here (see HandlerDeps.onTxnMarker). */
  onTxnMarker?: HandlerDeps['onTxnMarker'];
}

export interface ClusterNode {
  /** What this process is: a controller voter, a broker, or both. */
  readonly roles: ProcessRoles;
  /** A one-node cluster: the only voter, with no peers (no Raft or inter-broker listener). */
  readonly oneNode: boolean;
  /** The ids of the metadata quorum's voters (controller.quorum.voters; this broker alone in a one-node cluster). */
  readonly voterIds: readonly number[];
  /** This run's id (its registrations carry it; logins it delegates end with it). */
  readonly incarnation: string;
  readonly controller: Controller;
  readonly replicas: ReplicaManager;
  readonly handlers: HandlerMap;
  /** Connections to the other brokers (the HTTP API forwards record requests to partition leaders over them). */
  readonly peers: PeerConnections;
  /** Topics as the cluster knows them, for the group coordinator: partition counts, and HWs of partitions led here. */
  topicView(): { partitionCount(topic: string): number | undefined; logEndOffset(topic: string, partition: number): number | undefined; topicId(topic: string): string | undefined };
  /**
   * Registers this broker with the controller. A voter registers in the
   * background (the quorum may still be forming) and this resolves at once;
   * a broker-only process waits until it is registered, and rejects with
   * DUPLICATE_BROKER_REGISTRATION when another live process holds its id.
   * A controller-only process registers nothing.
   */
  register(endpoints: BrokerEndpoints): Promise<void>;
  close(): Promise<void>;
}

export async function startClusterNode(o: ClusterNodeOptions, components: ClusterNodeComponents): Promise<ClusterNode> {
  const { logger, clock, timers, openLog } = components;
  const cfg = o.config;
  const oneNode = o.oneNode ?? false;
  const { roles, voters, voterIds } = nodeRoles(o.brokerId, cfg, oneNode);
  const log = logger.child({ component: 'cluster' });
  log.info({ roles: formatRoles(roles) }, `process.roles=${formatRoles(roles)}`);
  const incarnation = newIncarnation();
  const closing = new AbortController();
  const secured = { ...(o.clusterSecret ? { clusterSecret: o.clusterSecret } : {}), ...(o.interBrokerTls ? { interBrokerTls: o.interBrokerTls } : {}) };
  // The links find peers' addresses in the controller's metadata: they dial no one before the controller exists.
  const { channel, peers } = clusterLinks({ brokerId: o.brokerId, config: cfg, ...secured, ...(components.connect ? { connect: components.connect } : {}) }, () => created.controller.metadata);
  const created = createController(
    { brokerId: o.brokerId, config: cfg, roles, voters, oneNode, incarnation, ...secured },
    { logger, clock, timers, channel, peers, ...(components.raft ? { raft: components.raft } : {}) },
  );
  const controller = created.controller;
  await created.start(o.dataDir);

  const registration = new BrokerRegistration(o.brokerId, { controller, logger: log, clock, timers, closing: closing.signal, onRegistered: () => replicas.schedule() });
  const replicas = new ReplicaManager(
    {
      brokerId: o.brokerId,
      dataDir: o.dataDir,
      config: cfg,
      replicaLagTimeMaxMs: cfg.int('replica.lag.time.max.ms'),
      replicaFetchMaxWaitMs: cfg.int('replica.fetch.max.wait.ms'),
    },
    { controller, fetch: peerFetch(peers), offsetForLeaderEpoch: peerOffsetForLeaderEpoch(peers), logger, clock, timers, openLog, brokerEpoch: () => registration.brokerEpoch, ...components.replicaStorage },
  );
  const replicaStart = new ReplicaStart(controller, replicas, roles.broker, closing.signal);
  // This process the quorum's only voter (a one-node cluster, as a lone KRaft node in combined mode, or a one-voter quorum that has not grown).
  const soleVoter = (): boolean => roles.controller && controller instanceof RaftController && controller.soleVoter;
  let controllerRegistering: Promise<void> | undefined;
  const handlers = nodeHandlers(roles, { controller, replicas, config: cfg, timers, metadataReady: () => replicaStart.metadataCaughtUp, ...(components.onTxnMarker ? { onTxnMarker: components.onTxnMarker } : {}) });
  return {
    roles,
    oneNode,
    voterIds,
    incarnation,
    controller,
    replicas,
    peers,
    handlers,
    topicView: () => ({
      partitionCount: (topic) => controller.metadata.topic(topic)?.partitions.length,
      logEndOffset: (topic, partition) => replicas.leaderOf(topic, partition)?.highWatermark,
      topicId: (topic) => controller.metadata.topic(topic)?.topicId,
    }),
    register(ep: BrokerEndpoints): Promise<void> {
      // Every controller of a cluster says where brokers reach it, in the background (the quorum may be forming, or it may not be a member yet).
      if (roles.controller && !oneNode && ep.interBrokerPort !== undefined) {
        controllerRegistering ??= registerControllerEndpoint({ type: 'registerController', id: o.brokerId, host: ep.host, port: ep.interBrokerPort }, { controller, logger: log, closing: closing.signal });
      }
      if (!roles.broker) return Promise.resolve();
      const registering = registration.register(registerBrokerCommand({ brokerId: o.brokerId, config: cfg, incarnation, cleanShutdown: o.cleanShutdown ?? false }, ep), roles.controller ? 0 : cfg.int('broker.session.timeout.ms'));
      // The only voter has its quorum at once: it is registered, unfenced and leading its partitions before it says it is listening.
      if (soleVoter()) return registering.then(() => replicaStart.untilServing(o.brokerId));
      // A voter registers in the background (the quorum may still be forming); a broker-only process waits for it.
      return roles.controller ? Promise.resolve() : registering;
    },
    async close() {
      if (closing.signal.aborted) return;
      closing.abort();
      await closeNode({
        ...(roles.broker ? { fence: () => controlledShutdown(controller, o.brokerId, registration.brokerEpoch, log) } : {}),
        replicas,
        peers,
        controller,
        channel,
        registrations: [() => registration.settled(), async () => void (await controllerRegistering?.catch(() => undefined))],
      });
    },
  };
}
