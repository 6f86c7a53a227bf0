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
import type { AutoBalanceMode } from '../controller/auto-balancer.js';
import type { Logger } from 'pino';
import { errorCodeFromNumber, isMqError, MqError } from '@mq/protocol/errors';
import type { FetchFn, OffsetForLeaderEpochFn } from '@mq/replication';
import { sleep, type Timers } from '@mq/protocol/components';
import type { ConnectFn } from '@mq/client/internal';
import type { BrokerConfig } from '../config/broker-config.js';
import { commandLimitsOf } from '../controller/command-limits.js';
import { encodeCommand, type CommandResult, type MetadataCommand } from '../controller/commands.js';
import { ControllerChannel } from '../controller/controller-channel.js';
import { newIncarnation, RaftController, type Controller, type ControllerComponents } from '../controller/controller.js';
import { CONTROLLED_SHUTDOWN } from '../controller/metadata-state.js';
import { ObserverController } from '../controller/observer.js';
import { parseVoters } from '../controller/options.js';
import { formatRoles, parseBootstrapServers, parseProcessRoles, type ProcessRoles } from '../controller/roles.js';
import { partitionHandlers, type HandlerDeps } from '../handlers/index.js';
import type { HandlerMap } from '../handlers/types.js';
import type { LogOpener } from '../log-factory.js';
import { readMaterial, type TlsSettings } from '../server/tls.js';
import { dialRefused } from './refused-probe.js';
import { parsePeerAddresses, PeerConnections } from './peer-connections.js';
import { ReplicaManager, type ReplicaManagerComponents } from './replica-manager.js';

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

export interface BrokerEndpoints {
  host: string;
  port: number;
  httpPort: number;
  /** The inter-broker listener (cluster/listeners.ts). */
  interBrokerPort?: number;
  /** The Kafka listener, as Kafka clients reach it. */
  kafkaHost?: string;
  kafkaPort?: number;
}

export interface ClusterNode {
  /** What this process is: a controller voter, a broker, or both. */
  readonly roles: ProcessRoles;
  /** A one-node cluster: the only voter, with no peers (no Raft or inter-broker listener). */
  readonly oneNode: boolean;
  /** The ids of the metadata quorum's voters (controller.quorum.voters; this broker alone in a one-node cluster). */
  readonly voterIds: readonly number[];
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

/** Per-partition request entries grouped by topic, in the wire's `[{ name, partitions }]` shape (topics in first-seen order). */
/** Partitions grouped by topic name and topic id (the incarnation a replica asks about). */
function groupByTopic<I extends { topic: string; topicId?: string }, T>(items: readonly I[], entry: (item: I) => T): { name: string; topicId: string; partitions: T[] }[] {
  const byTopic = new Map<string, { name: string; topicId: string; partitions: T[] }>();
  for (const item of items) {
    const topicId = item.topicId ?? '';
    const k = `${item.topic}\u0000${topicId}`;
    let group = byTopic.get(k);
    if (!group) byTopic.set(k, (group = { name: item.topic, topicId, partitions: [] }));
    group.partitions.push(entry(item));
  }
  return [...byTopic.values()];
}

/** Whether the configuration names other cluster members (voters or controllers); without them a broker is a one-node cluster. */
export function isClusterConfig(config: BrokerConfig): boolean {
  return config.get('controller.quorum.voters').trim() !== '' || config.get('controller.quorum.bootstrap.servers').trim() !== '';
}

/**
 * The voters of a one-node cluster: this broker alone. The only voter opens
 * no Raft listener and dials no one, so the address is never used.
 */
export function oneNodeVoters(brokerId: number): string {
  return `${brokerId}@localhost:1`;
}

/** The handlers a controller-only process serves (no partitions, no groups): who is the controller, the metadata, forwarding and metadata fetches, the quorum's membership. */
export const CONTROLLER_ONLY_APIS = ['metadata', 'describeConfigs', 'controllerForward', 'alterRaftVoters', 'describeQuorum'] as const;

export async function startClusterNode(o: ClusterNodeOptions, components: ClusterNodeComponents): Promise<ClusterNode> {
  const { logger, clock, timers, openLog } = components;
  const cfg = o.config;
  const voters = o.oneNode ? oneNodeVoters(o.brokerId) : cfg.get('controller.quorum.voters');
  if (o.oneNode && !['', 'broker,controller', 'controller,broker'].includes(cfg.get('process.roles').replace(/\s/g, ''))) {
    throw new MqError(
      'INVALID_CONFIG',
      `process.roles=${cfg.get('process.roles')} needs a cluster: set controller.quorum.voters (or, for process.roles=broker, controller.quorum.bootstrap.servers); a broker without them is a one-node cluster (broker,controller)`,
    );
  }
  const roles = parseProcessRoles({
    brokerId: o.brokerId,
    roles: o.oneNode ? 'broker,controller' : cfg.get('process.roles'),
    voters,
    bootstrapServers: cfg.get('controller.quorum.bootstrap.servers'),
    raftAddress: cfg.get('controller.raft.address'),
  });
  const log = logger.child({ component: 'cluster' });
  log.info({ roles: formatRoles(roles) }, `process.roles=${formatRoles(roles)}`);
  const incarnation = newIncarnation();
  const bootstrap = parseBootstrapServers(cfg.get('controller.quorum.bootstrap.servers'));
  const clusterAuth = o.clusterSecret ? { secret: o.clusterSecret, brokerId: o.brokerId } : undefined;
  // Read at each dial: a renewed certificate is used by the next connection.
  const tlsSettings = o.interBrokerTls;
  const dialTls = tlsSettings ? () => ({ ...readMaterial(tlsSettings), rejectUnauthorized: true }) : undefined;
  const channel =
    bootstrap.length > 0
      ? new ControllerChannel({
          brokerId: o.brokerId,
          servers: bootstrap,
          connectTimeoutMs: 3000,
          maxResponseBytes: cfg.int('max.frame.bytes') * 2,
          clusterAuth,
          dialTls,
          // Controllers added after this process was configured: their addresses are in the metadata.
          registered: () => controller.metadata.controllerEndpoints(),
        })
      : undefined;
  const overrides = parsePeerAddresses(cfg.get('cluster.peer.addresses'));
  let brokerEpoch = -1;
  // Inter-broker connections; a peer's address comes from its registration (looked up when connecting).
  const peers: PeerConnections = new PeerConnections(
    {
      brokerId: o.brokerId,
      overrides,
      connectTimeoutMs: 3000,
      requestTimeoutMs: cfg.int('replica.fetch.max.wait.ms') + 10_000,
      maxResponseBytes: cfg.int('max.frame.bytes') * 2,
      ...(components.connect ? { connect: components.connect } : {}),
      clusterAuth,
      dialTls,
    },
    (id) => {
      const b = controller.metadata.broker(id);
      // The inter-broker listener: the client port refuses replica fetches and ControllerForward.
      if (b) return `${b.host}:${b.interBrokerPort ?? b.port}`;
      // A dedicated controller (a forwarded command): its own registration.
      const c = controller.metadata.controllerEndpoint(id);
      return c ? `${c.host}:${c.port}` : undefined;
    },
  );
  const sessionTimeoutMs = cfg.int('broker.session.timeout.ms');
  let controller: Controller;
  if (roles.controller) {
    const raft = new RaftController(
      {
        brokerId: o.brokerId,
        voters,
        raftAddress: cfg.get('controller.raft.address'),
        ...(o.oneNode ? { local: true } : {}),
        tickMs: cfg.int('controller.tick.ms'),
        sessionTimeoutMs,
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
      },
      {
        logger,
        clock,
        timers,
        ...(components.raft ? { raft: components.raft } : {}),
        forward: async (controllerId, command, timeoutMs): Promise<CommandResult> => {
          // Another voter: through its broker connection when it is also a broker, else through the controller channel.
          if (!controller.metadata.broker(controllerId) && channel) return channelForward(channel, o.brokerId, command, timeoutMs);
          const r = await peers.request(controllerId, 'controllerForward', { brokerId: o.brokerId, command: encodeCommand(command), timeoutMs }, { timeoutMs: timeoutMs + 2000 });
          if (!r.errorCode) return { ok: true, value: r.result && r.result.length > 0 ? JSON.parse(Buffer.from(r.result).toString('utf8')) : undefined };
          return { ok: false, code: errorCodeFromNumber(r.errorCode), message: r.errorMessage || 'refused by the controller' };
        },
        probeRefused: async (id) => {
          const b = controller.metadata.broker(id);
          return b ? dialRefused(b.host, b.interBrokerPort ?? b.port) : false;
        },
      },
    );
    controller = raft;
    await raft.start(o.dataDir);
  } else {
    const observer = new ObserverController({ brokerId: o.brokerId, incarnation, sessionTimeoutMs }, { logger, channel: channel! });
    controller = observer;
    observer.start();
  }

  const fetch: FetchFn = async (leaderId, req, signal) => {
    const topics = groupByTopic(req.partitions, (p) => ({
      partition: p.partition,
      fetchOffset: p.fetchOffset,
      partitionMaxBytes: p.partitionMaxBytes,
      currentLeaderEpoch: p.currentLeaderEpoch,
      logStartOffset: p.logStartOffset ?? -1,
      lastFetchedEpoch: p.lastFetchedEpoch ?? -1,
    }));
    const res = await peers.request(
      leaderId,
      'fetch',
      { replicaId: req.replicaId, replicaEpoch: req.replicaEpoch ?? -1, maxWaitMs: req.maxWaitMs, minBytes: req.minBytes, maxBytes: req.maxBytes, topics },
      { signal, timeoutMs: req.maxWaitMs + 10_000 },
    );
    return {
      partitions: (res.topics ?? []).flatMap((t) =>
        (t.partitions ?? []).map((p) => ({
          topic: t.name ?? '',
          topicId: t.topicId ?? '',
          partition: p.partition ?? 0,
          errorCode: errorCodeFromNumber(p.errorCode ?? 0),
          errorMessage: p.errorMessage ?? '',
          highWatermark: Number(p.highWatermark ?? -1),
          logStartOffset: Number(p.logStartOffset ?? -1),
          logEndOffset: Number(p.logEndOffset ?? -1),
          records: p.records ? Buffer.from(p.records.buffer, p.records.byteOffset, p.records.byteLength) : Buffer.alloc(0),
          ...(p.divergingEpoch ? { divergingEpoch: { epoch: p.divergingEpoch.epoch ?? -1, endOffset: Number(p.divergingEpoch.endOffset ?? -1) } } : {}),
          currentLeaderId: p.currentLeaderId ?? -1,
          currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
        })),
      ),
    };
  };
  const offsetForLeaderEpoch: OffsetForLeaderEpochFn = async (leaderId, req, signal) => {
    const topics = groupByTopic(req.partitions, (p) => ({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, leaderEpoch: p.leaderEpoch }));
    const res = await peers.request(leaderId, 'offsetForLeaderEpoch', { replicaId: req.replicaId, topics }, { signal, timeoutMs: 10_000 });
    return {
      partitions: (res.topics ?? []).flatMap((t) =>
        (t.partitions ?? []).map((p) => ({
          topic: t.name ?? '',
          topicId: t.topicId ?? '',
          partition: p.partition ?? 0,
          errorCode: errorCodeFromNumber(p.errorCode ?? 0),
          leaderEpoch: p.leaderEpoch ?? -1,
          endOffset: Number(p.endOffset ?? -1),
        })),
      ),
    };
  };

  const replicas = new ReplicaManager(
    {
      brokerId: o.brokerId,
      dataDir: o.dataDir,
      config: cfg,
      replicaLagTimeMaxMs: cfg.int('replica.lag.time.max.ms'),
      replicaFetchMaxWaitMs: cfg.int('replica.fetch.max.wait.ms'),
    },
    { controller, fetch, offsetForLeaderEpoch, logger, clock, timers, openLog, brokerEpoch: () => brokerEpoch, ...components.replicaStorage },
  );
  // This process the quorum's only voter (a one-node cluster, as a lone KRaft node in combined mode, or a one-voter quorum that has not grown).
  const soleVoter = (): boolean => roles.controller && controller instanceof RaftController && controller.soleVoter;
  let closed = false;
  let replicasStarted: () => void = () => undefined;
  /** This broker has applied everything the controller had committed when it started (see below); always, without the broker role. */
  let metadataCaughtUp = !roles.broker;
  const replicasRunning = new Promise<void>((resolve) => (replicasStarted = resolve));
  // Act on partition metadata only once this broker has applied everything the controller had
  // committed: on a restart the log replays old leaderships before the current ones.
  void (async () => {
    while (!closed && roles.broker) {
      try {
        await controller.catchUp(5000);
        metadataCaughtUp = true;
        replicas.start();
        replicasStarted();
        return;
      } catch {
        // no controller yet: keep waiting
      }
    }
  })();

  let registering: Promise<void> | undefined;
  /**
   * Registers until it succeeds. DUPLICATE_BROKER_REGISTRATION means another
   * live run holds this id: it may be this broker's own previous run that
   * crashed, which the controller fences once its session expires, so that
   * is retried for `duplicateGraceMs`; refused for longer, a second process
   * really holds the id, and registration fails.
   */
  async function registerLoop(command: MetadataCommand & { type: 'registerBroker' }, duplicateGraceMs: number): Promise<void> {
    let firstRefusal = -1;
    while (!closed) {
      try {
        const v = (await controller.submit(command, 10_000)) as { brokerEpoch: number };
        brokerEpoch = v.brokerEpoch;
        log.info({ brokerEpoch, incarnation: command.incarnation }, 'registered with the controller');
        // What waits for this run's registration (the sweep of deleted topics' logs) may have seen it applied before this answer.
        replicas.schedule();
        return;
      } catch (err) {
        if (closed) return;
        const code = isMqError(err) ? (err as MqError).code : 'UNKNOWN';
        if (code === 'DUPLICATE_BROKER_REGISTRATION' && duplicateGraceMs > 0) {
          const now = clock();
          if (firstRefusal < 0) {
            firstRefusal = now;
            log.warn(
              { code, err: (err as Error).message },
              `broker id ${o.brokerId} is held by another live run; if that is this broker's own previous run (a crash), the controller frees the id when its session expires: retrying for up to ${duplicateGraceMs + 2000} ms`,
            );
          } else if (now - firstRefusal > duplicateGraceMs + 2000) {
            throw new MqError(
              'DUPLICATE_BROKER_REGISTRATION',
              `broker id ${o.brokerId} is already registered by another running process (still alive after broker.session.timeout.ms=${duplicateGraceMs}); give this process another broker id or stop the other one`,
              { retriable: false },
            );
          }
        } else {
          log.warn({ code, err: (err as Error).message }, 'registration with the controller failed; retrying');
        }
        await sleep(timers, 500);
      }
    }
  }
  let controllerRegistering: Promise<void> | undefined;
  /** Records this controller's inter-broker listener in the metadata (retried until committed; the same record again is a no-op). */
  async function registerControllerLoop(command: MetadataCommand & { type: 'registerController' }): Promise<void> {
    const current = controller.metadata.controllerEndpoint(command.id);
    if (current?.host === command.host && current.port === command.port) return;
    let failures = 0;
    while (!closed) {
      try {
        await controller.submit(command, 10_000);
        log.info({ host: command.host, port: command.port }, 'controller endpoint registered in the metadata (brokers reach this controller there)');
        return;
      } catch (err) {
        if (closed) return;
        const code = isMqError(err) ? err.code : 'UNKNOWN';
        if (code !== 'REQUEST_TIMED_OUT') {
          log.warn({ code, err: (err as Error).message }, "this controller's endpoint was refused by the active controller: brokers find it only through their bootstrap servers");
          return;
        }
        // Not a member yet (a controller waiting for add-voter), or no quorum: said now and then.
        if (failures++ % 6 === 0) log.info({ code, err: (err as Error).message }, "this controller's endpoint is not in the metadata yet; retrying");
      }
    }
  }
  /** Resolves once this broker is unfenced and its partitions match the metadata (the sole voter's start). */
  async function untilServing(): Promise<void> {
    await new Promise<void>((resolve) => {
      const live = () => closed || controller.metadata.broker(o.brokerId)?.fenced === false;
      if (live()) return resolve();
      const off = controller.metadata.onChange(() => {
        if (!live()) return;
        off();
        resolve();
      });
    });
    await replicasRunning;
    await replicas.settled();
  }
  const all = partitionHandlers({ controller, replicas, config: cfg, timers, metadataReady: () => metadataCaughtUp, ...(components.onTxnMarker ? { onTxnMarker: components.onTxnMarker } : {}) });
  const handlers: HandlerMap = roles.broker ? all : Object.fromEntries(CONTROLLER_ONLY_APIS.map((k) => [k, all[k]]));
  return {
    roles,
    oneNode: o.oneNode ?? false,
    voterIds: voters.trim() ? parseVoters(voters).map((v) => v.id) : [],
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
      if (roles.controller && !o.oneNode && ep.interBrokerPort !== undefined) {
        controllerRegistering ??= registerControllerLoop({ type: 'registerController', id: o.brokerId, host: ep.host, port: ep.interBrokerPort });
      }
      if (!roles.broker) return Promise.resolve();
      const command: MetadataCommand = {
        type: 'registerBroker',
        id: o.brokerId,
        host: ep.host,
        port: ep.port,
        httpPort: ep.httpPort,
        ...(ep.interBrokerPort !== undefined ? { interBrokerPort: ep.interBrokerPort } : {}),
        ...(ep.kafkaPort !== undefined && ep.kafkaHost !== undefined ? { kafkaHost: ep.kafkaHost, kafkaPort: ep.kafkaPort } : {}),
        rack: cfg.get('broker.rack'),
        incarnation,
        // Whether this broker's logs can be trusted to hold everything it acknowledged (unclean recovery).
        cleanShutdown: o.cleanShutdown ?? false,
        flushAlways: cfg.get('log.flush.policy') === 'always',
      };
      registering ??= registerLoop(command, roles.controller ? 0 : sessionTimeoutMs);
      // The only voter has its quorum at once: it is registered, unfenced and leading its partitions before it says it is listening.
      if (soleVoter()) return registering.then(() => untilServing());
      // A voter registers in the background (the quorum may still be forming); a broker-only process waits for it.
      return roles.controller ? Promise.resolve() : registering;
    },
    async close() {
      if (closed) return;
      closed = true;
      replicasStarted();
      // Controlled shutdown: ask the controller to fence this broker first, so its partitions get new
      // leaders now rather than after the session timeout. Best effort (there may be no quorum left).
      if (roles.broker && brokerEpoch >= 0 && controller.controllerId > 0) {
        try {
          await controller.submit({ type: 'fenceBroker', id: o.brokerId, brokerEpoch, reason: CONTROLLED_SHUTDOWN }, 2000);
          log.info('controlled shutdown: fenced, partition leadership moved to other brokers');
        } catch (err) {
          log.warn({ err: (err as Error).message }, 'controlled shutdown: could not reach the controller; others take over after the session timeout');
        }
      }
      await replicas.close();
      peers.close();
      await controller.close();
      channel?.close();
      await registering?.catch(() => undefined);
      await controllerRegistering?.catch(() => undefined);
    },
  };
}

async function channelForward(channel: ControllerChannel, brokerId: number, command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
  const r = await channel.request({ brokerId, command: encodeCommand(command), timeoutMs }, timeoutMs + 2000);
  if (!r.errorCode) return { ok: true, value: r.result && r.result.length > 0 ? JSON.parse(Buffer.from(r.result).toString('utf8')) : undefined };
  return { ok: false, code: errorCodeFromNumber(r.errorCode), message: r.errorMessage || 'refused by the controller' };
}
