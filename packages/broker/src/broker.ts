/**
 * startBroker: wires the data directory, the cluster node (controller,
 * replica manager and their handlers), the group coordinator, the WebSocket
 * protocol server and the HTTP API together, and shuts them down in order.
 * Without cluster settings the broker is a one-node cluster: the only voter
 * of its metadata quorum, with no Raft or inter-broker listener.
 */
import { pino, type Logger } from 'pino';
import { ReadBufferPool } from '@mq/log-store';
import { systemTimers, type Timers } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { BrokerConfig } from './config/broker-config.js';
import type { BrokerContext } from './context.js';
import { apiVersionsFor, authorizeRequest, DEFAULT_HANDLERS, saslAuthenticate, secureHandlers } from './handlers/index.js';
import { Security, parseSecurityOptions } from './security/security.js';
import { HttpGuard, httpSessions } from './security/http-auth.js';
import { newSession } from './security/session.js';
import { ProducerIdManager, controllerBlockSource } from './producers/producer-ids.js';
import type { HandlerMap } from './handlers/types.js';
import { HttpServer } from './http/http-server.js';
import { Router } from './http/router.js';
import { registerRecordRoutes } from './http/routes/records.js';
import { registerSystemRoutes } from './http/routes/system.js';
import { registerTokenRoutes } from './http/routes/tokens.js';
import { registerConsoleRoutes } from './http/routes/console.js';
import { registerTopicRoutes } from './http/routes/topics.js';
import { registerScaleoutRoutes } from './http/routes/scaleout.js';
import { registerQuorumRoutes } from './http/routes/quorum.js';
import { registerLogDirRoutes } from './http/routes/log-dirs.js';
import { startGroups } from './group/broker-groups.js';
import { startTransactions } from './txn/broker-transactions.js';
import { OFFSETS_TOPIC } from './group/options.js';
import { startClusterNode } from './cluster/cluster-node.js';
import { isClusterConfig } from './cluster/node/node-roles.js';
import { clusterHttpBackend, clusterPartitionView, registerClusterRoutes } from './cluster/routes.js';
import { startClusterCleaner } from './cluster/cluster-cleaner.js';
import { logStoreFactory, type LogOpener } from './log-factory.js';
import { BrokerMetrics } from './metrics/broker-metrics.js';
import { registerNodeMetrics } from './metrics/node-metrics.js';
import { ConsumerInstances } from './http/consumers/consumer-instances.js';
import { registerConsumerRoutes } from './http/routes/consumers.js';
import { parseBrokerOptions, type BrokerOptions } from './options.js';
import { WsServer } from './server/ws-server.js';
import { connectInProcess } from './server/in-process-socket.js';
import { connectWebSocket } from '@mq/client/transport';
import { checkExposure } from './server/exposure.js';
import { readClusterSecret } from './cluster/cluster-auth.js';
import { parseInterBrokerTls, parseTlsSettings, peerClientTls, type TlsSettings } from './server/tls.js';
import { isLoopbackHost, parseOriginList, type OriginList } from './server/origins.js';
import { parseVoters } from './controller/options.js';
import { ConnectionQuotas, QuotaManager, parseQuotaOptions, quotaHandlers, quotaRecorder } from './quota/index.js';
import { clientListenerHandlers } from './cluster/listeners.js';
import { startKafkaListener } from './kafka/start.js';
import { adoptSingleBrokerTopics, moveSingleBrokerLogs, readSingleBrokerLayout, SINGLE_BROKER_TOPICS_FILE } from './storage/migrate-single-broker.js';
import {
  loadOrCreateMeta,
  lockDataDir,
  readPersistedBrokerConfig,
  takeCleanShutdownMarker,
  writeCleanShutdownMarker,
  writePersistedBrokerConfig,
  type DataDirLock,
} from './storage/data-dir.js';

export const BROKER_VERSION = '0.1.0';

export interface Broker {
  readonly port: number;
  readonly httpPort: number;
  /** The Kafka listener's port (undefined: none). */
  readonly kafkaPort: number | undefined;
  readonly brokerId: number;
  readonly clusterId: string;
  readonly dataDir: string;
  close(): Promise<void>;
}

/** Extra HTTP routes: called once with the router and the broker context. */
export type RouteModule = (router: Router, ctx: BrokerContext) => void;

export interface BrokerComponents {
  logger?: Logger;
  clock?: () => number;
  /** Timers of replication (partition leaders, follower fetchers, fetch long-polls); default: real ones. */
  timers?: Timers;
  /** Opens a partition log, on one broker and as a cluster replica (default: @mq/log-store with this broker's clock and logger). */
  openLog?: LogOpener;
  /** Handlers added to (or replacing) the built-in ones, by frame body name. */
  handlers?: HandlerMap;
  /** Extra HTTP route modules. */
  routes?: RouteModule[];
}

function defaultLogger(): Logger {
  return pino({ name: 'mq-broker', level: process.env.MQ_LOG_LEVEL ?? 'info' });
}

export async function startBroker(options: BrokerOptions = {}, components: BrokerComponents = {}): Promise<Broker> {
  const logger = components.logger ?? defaultLogger();
  const clock = components.clock ?? Date.now;
  const opts = await parseBrokerOptions(options);
  const lock: DataDirLock = await lockDataDir(opts.dataDir);
  const cleanups: Array<() => Promise<void>> = [() => lock.release()];
  const undo = async () => {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
  };
  try {
    const clean = await takeCleanShutdownMarker(opts.dataDir);
    const persisted = await readPersistedBrokerConfig(opts.dataDir);
    const config = new BrokerConfig({ ...persisted, ...opts.config });
    // No voters and no controllers to follow: a one-node cluster (this broker its only voter).
    const oneNode = !isClusterConfig(config);
    const meta = await loadOrCreateMeta(opts.dataDir, opts.brokerId, { oneNode });
    if (JSON.stringify(persisted) !== JSON.stringify({ ...config.explicit })) {
      await writePersistedBrokerConfig(opts.dataDir, config.explicit);
    }
    const log = logger.child({ broker: meta.brokerId });
    if (meta.renumberedFrom !== undefined) {
      log.info({ from: meta.renumberedFrom, to: meta.brokerId }, `data directory of broker ${meta.renumberedFrom} renumbered to broker ${meta.brokerId} (a single broker is a one-node cluster; Raft node ids start at 1)`);
    }
    log.info({ dataDir: opts.dataDir, cleanShutdown: clean }, clean ? 'starting after a clean shutdown' : 'starting (previous run did not shut down cleanly or this is the first start; logs are recovered)');

    // A data directory of the single broker of before issue 13: its logs move to the cluster layout now, its topics are created below.
    const found = await readSingleBrokerLayout(opts.dataDir);
    if (found && found.topics.length > 0 && !oneNode) {
      throw new MqError(
        'INVALID_CONFIG',
        `${opts.dataDir} holds a single broker's topics (${SINGLE_BROKER_TOPICS_FILE}): start it once without cluster settings to migrate them, or use an empty data directory for a cluster member`,
      );
    }
    const oldLayout = oneNode ? found : undefined;
    if (oldLayout) {
      const moved = await moveSingleBrokerLogs(opts.dataDir, oldLayout, log);
      log.info({ topics: oldLayout.topics.length, movedDirectories: moved }, "migrating a single broker's data directory to a one-node cluster's");
    }

    // Safe by default: nothing beyond loopback without allow.insecure=true (no authentication or TLS yet).
    const joiningAt = config.get('controller.raft.address').trim();
    const ownVoter = parseVoters(config.get('controller.quorum.voters')).find((v) => v.id === meta.brokerId) ?? (joiningAt ? parseVoters(`${meta.brokerId}@${joiningAt}`, 'controller.raft.address')[0] : undefined);
    const securityOptions = parseSecurityOptions(config);
    const tls = parseTlsSettings(config);
    // Brokers and controllers prove the cluster secret to each other on the inter-broker and Raft links (cluster/cluster-auth.ts).
    const clusterSecret = oneNode ? undefined : readClusterSecret(config.get('cluster.secret.file'));
    // TLS both ways on the inter-broker and Raft links (inter.broker.tls.enabled; server/tls.ts).
    const interBrokerTls = oneNode ? undefined : parseInterBrokerTls(config);
    checkExposure(
      [
        { what: 'client and HTTP API listeners', host: opts.host, authenticated: securityOptions.authentication, encrypted: tls !== undefined },
        ...(oneNode ? [] : [{ what: 'inter-broker listener', host: opts.host, authenticated: clusterSecret !== undefined || interBrokerTls !== undefined, encrypted: interBrokerTls !== undefined }]),
        ...(ownVoter ? [{ what: 'Raft listener', host: ownVoter.host, authenticated: clusterSecret !== undefined || interBrokerTls !== undefined, encrypted: interBrokerTls !== undefined }] : []),
      ],
      config.bool('allow.insecure'),
      log,
    );
    if (!oneNode && !clusterSecret && !interBrokerTls && !isLoopbackHost(opts.host)) {
      log.warn({ host: opts.host }, 'brokers and controllers do not authenticate each other (no cluster.secret.file): whoever reaches the inter-broker or Raft port is trusted as a cluster member');
    }
    const wsOrigins = parseOriginList('ws.allowed.origins', config.get('ws.allowed.origins'));
    const corsOrigins = parseOriginList('http.cors.allowed.origins', config.get('http.cors.allowed.origins'));
    const advertised = config.get('advertised.host') || (opts.host === '0.0.0.0' || opts.host === '::' ? 'localhost' : opts.host);

    const openLog = components.openLog ?? logStoreFactory(log, clock);
    const timers = components.timers ?? systemTimers;
    const groups = await startGroups({ config, logger: log, clock });
    cleanups.push(async () => groups.close());

    // The metadata log, replication and the cluster's handlers (a one-node cluster's too).
    // A transaction marker written to a __consumer_offsets partition led here: its transactional offset commits apply (or are dropped).
    const onTxnMarker = (topic: string, partition: number, producerId: number, committed: boolean) => {
      if (topic === OFFSETS_TOPIC) groups.coordinator?.completeTxn(partition, producerId, committed);
    };
    const cluster = await startClusterNode(
      { brokerId: meta.brokerId, dataDir: opts.dataDir, config, cleanShutdown: clean, oneNode, ...(clusterSecret ? { clusterSecret } : {}), ...(interBrokerTls ? { interBrokerTls } : {}) },
      { logger: log, clock, timers, openLog, onTxnMarker },
    );
    cleanups.push(() => cluster.close());
    groups.useCluster(cluster);
    // Transactions: the coordinator of a transactional id leads its __transaction_state partition.
    const producerIds = new ProducerIdManager(controllerBlockSource((c) => cluster.controller.submit(c), meta.brokerId));
    const transactions = startTransactions({ config, logger: log, clock, timers, onTxnMarker });
    cleanups.push(async () => transactions.close());
    if (cluster.roles.broker) transactions.useCluster(cluster, producerIds);

    // A controller-only process (process.roles=controller) serves the controller's APIs only: it hosts no partitions or groups.
    // A one-node cluster has no other broker to forward to it: it does not serve ControllerForward at all.
    const { controllerForward, ...withoutForward } = cluster.handlers;
    const clusterApis: HandlerMap = cluster.oneNode ? withoutForward : { ...withoutForward, ...(controllerForward ? { controllerForward } : {}) };
    // Authentication and authorization: one Security for every door; the client-facing handler maps are wrapped once (handlers/authorize.ts).
    const md = cluster.controller.metadata;
    // Delegated logins (HTTP consumer instances) live in the metadata log: every broker accepts them.
    const security = new Security(securityOptions, md, log.child({ component: 'security' }), { brokerId: meta.brokerId, incarnation: cluster.incarnation, submit: (c) => cluster.controller.submit(c), timers });
    const usersExist = () => md.userCount > 0;
    const sasl: HandlerMap = { saslAuthenticate: saslAuthenticate(security) };
    const handlers: HandlerMap = !cluster.roles.broker
      ? { handshake: DEFAULT_HANDLERS.handshake!, ...sasl, ...clusterApis, ...components.handlers }
      : { ...DEFAULT_HANDLERS, ...sasl, ...groups.handlers, ...transactions.handlers(groups.handlers.findCoordinator), ...clusterApis, ...components.handlers };
    // ---- quotas: recorded once a request is authorized, on the client listeners' one handler map (quota/); connection counts per IP and principal.
    const quotaOptions = parseQuotaOptions(config);
    const quotas = new QuotaManager(quotaOptions, { clock, source: md, logger: log.child({ component: 'quotas' }) });
    const connectionQuotas = new ConnectionQuotas(quotaOptions);
    const clientHandlers = secureHandlers(quotaHandlers(clientListenerHandlers(handlers), quotas), security, usersExist);
    const httpGuard = new HttpGuard(security, { tokenLifetimeMs: config.int('http.token.lifetime.ms'), clock });
    const maxFrameBytes = config.int('max.frame.bytes');
    const maxHeaderBytes = config.int('http.max.header.bytes');
    const maxHeaders = config.int('http.max.headers');
    const listener = (port: number, served: HandlerMap, origins?: OriginList, withTls?: TlsSettings, counted?: ConnectionQuotas, secret?: Uint8Array) =>
      new WsServer(
        {
          host: opts.host,
          port,
          maxFrameBytes,
          idleMs: config.int('connections.max.idle.ms'),
          setupTimeoutMs: config.int('connection.setup.timeout.ms'),
          frameTimeoutMs: config.int('connection.frame.timeout.ms'),
          maxHeaderBytes,
          maxHeaders,
          ...(origins ? { origins } : {}),
          ...(withTls ? { tls: withTls } : {}),
          ...(counted ? { connectionQuotas: counted } : {}),
          ...(secret ? { clusterSecret: secret } : {}),
          limits: {
            maxInFlight: config.int('max.in.flight.requests.per.connection'),
            maxFetchesInFlight: config.int('max.in.flight.fetches.per.connection'),
            maxBufferedBytes: config.int('connection.max.buffered.bytes'),
            maxRequestEntries: config.int('request.max.entries'),
          },
        },
        served,
        log,
      );
    // Clients never get what only a broker may ask (cluster/listeners.ts); brokers reach each other on the inter-broker listener (a one-node cluster has no one to reach it).
    const ws = listener(opts.port, clientHandlers, wsOrigins, tls, connectionQuotas);
    const interBroker = cluster.oneNode ? undefined : listener(config.int('inter.broker.port'), handlers, undefined, interBrokerTls, undefined, clusterSecret);
    const port = await ws.listen();
    cleanups.push(() => ws.close(0));
    const interBrokerPort = await interBroker?.listen();
    if (interBroker) cleanups.push(() => interBroker.close(0));
    // The Kafka-protocol listener: the client listener's handlers behind Kafka's wire format (kafka/).
    const kafka = cluster.roles.broker ? await startKafkaListener(opts, config, clientHandlers, cluster.controller.metadata, advertised, cluster.oneNode, log, security, tls, connectionQuotas) : undefined;
    if (kafka) cleanups.push(() => kafka.server.close(0));
    const router = new Router();
    const http = new HttpServer(
      {
        host: opts.host,
        port: opts.httpPort,
        maxBodyBytes: config.int('http.max.body.bytes'),
        headersTimeoutMs: config.int('connection.setup.timeout.ms'),
        requestTimeoutMs: config.int('connection.frame.timeout.ms'),
        maxHeaderBytes,
        maxHeaders,
        corsOrigins,
        advertisedHost: advertised,
        guard: httpGuard,
        tls,
      },
      router,
      log,
    );
    const httpPort = await http.listen();
    cleanups.push(() => http.close());

    const shutdown = new AbortController();
    const ctx: BrokerContext = {
      brokerId: meta.brokerId,
      clusterId: meta.clusterId,
      config,
      logger: log,
      advertisedHost: advertised,
      port,
      httpPort,
      apiVersions: apiVersionsFor(handlers),
      maxFrameBytes,
      softwareVersion: BROKER_VERSION,
      shutdownSignal: shutdown.signal,
      clock,
      metrics: new BrokerMetrics({ clock }),
      readBuffers: new ReadBufferPool(),
      producerIds,
    };
    quotas.registerMetrics(ctx.metrics.registry);
    const topicBackend = clusterHttpBackend(
      cluster,
      handlers,
      ctx,
      security.enabled
        ? {
            authorize: (body, req, rctx) => void authorizeRequest(body, req, rctx, security, usersExist),
            mayDescribe: (topic, rctx) => {
              const p = security.principalOf(rctx);
              return p !== undefined && security.allows(p, 'describe', 'topic', topic);
            },
          }
        : undefined,
      // ---- quotas: the HTTP API's own calls are recorded too (client id "http-api", the HTTP caller's user), whichever broker answers.
      quotaRecorder(quotas),
    );
    registerTokenRoutes(router, () => httpGuard.issue(httpSessions.getStore() ?? newSession(undefined)));
    registerTopicRoutes(router, ctx, topicBackend);
    registerRecordRoutes(router, ctx, topicBackend);
    registerScaleoutRoutes(router, topicBackend);
    registerQuorumRoutes(router, topicBackend);
    registerLogDirRoutes(router, topicBackend, () => cluster.controller.metadata.brokers().filter((b) => !b.fenced).map((b) => b.id));
    const view = clusterPartitionView(cluster);
    registerSystemRoutes(router, ctx, { view });
    registerConsoleRoutes(router, () => ({ port, tls: tls !== undefined, authentication: securityOptions.authentication }));
    const stopNodeMetrics = registerNodeMetrics(ctx.metrics.registry, { connections: () => ws.connectionCount, view, controller: cluster.controller, groups: () => groups.coordinator, forgetTopic: (t) => ctx.metrics.dropTopic(t) });
    cleanups.push(async () => stopNodeMetrics());
    groups.registerRoutes(router, ctx);
    let consumers: ConsumerInstances | undefined;
    if (cluster.roles.broker && config.int('http.consumer.max.instances') > 0) {
      // HTTP consumer instances are clients of this broker's own client listener, reached in process (no socket,
      // no TLS to dial: a TLS-only listener serves them too); other brokers of a cluster (the group's coordinator, a
      // partition's leader) are dialled at their client listener, over wss:// when the listeners speak TLS, and
      // logged in to as the instance's creator (a delegated login every broker accepts).
      const self = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
      const selfAddress = `${self.includes(':') ? `[${self}]` : self}:${port}`;
      const ownAddresses = new Set([selfAddress, `${advertised.includes(':') ? `[${advertised}]` : advertised}:${port}`]);
      const inProcess = connectInProcess(() => ws.connectInProcess());
      const instances = new ConsumerInstances({
        bootstrap: () => selfAddress,
        connect: (o, signal) => (cluster.oneNode || ownAddresses.has(o.address) ? inProcess(o, signal) : connectWebSocket(o, signal)),
        maxInstances: config.int('http.consumer.max.instances'),
        instanceTimeoutMs: config.int('http.consumer.instance.timeout.ms'),
        ...(tls ? { tls: () => peerClientTls(config) } : {}),
        logger: log.child({ component: 'http-consumers' }),
        // With authentication each instance's client logs in as its creator (a token delegated through the metadata log).
        ...(securityOptions.authentication ? { delegation: { delegate: (p: string) => security.delegate(p), revoke: (t: string) => security.revokeDelegation(t) } } : {}),
      });
      consumers = instances;
      cleanups.push(() => instances.close());
      registerConsumerRoutes(router, ctx, instances);
    }
    registerClusterRoutes(router, cluster);
    for (const r of components.routes ?? []) r(router, ctx);

    // Every replica compacts and applies retention to its own log, below its HW.
    const cleaner = startClusterCleaner(cluster.replicas, config, log, clock);
    cleanups.push(() => cleaner.stop());

    const endpoints = {
      host: advertised,
      port,
      httpPort,
      ...(interBrokerPort !== undefined ? { interBrokerPort } : {}),
      ...(kafka ? { kafkaHost: kafka.advertised.host, kafkaPort: kafka.advertised.port } : {}),
    };
    if (cluster.oneNode) {
      // Registered, unfenced and leading its partitions (no network involved) before the first request is served;
      // an old single broker's topics are created now, with their logs already in place.
      await cluster.register(endpoints);
      if (oldLayout) {
        await adoptSingleBrokerTopics(opts.dataDir, oldLayout, meta.brokerId, cluster.controller, log);
        await cluster.replicas.settled();
      }
      // Its group coordinator serves from the first request too (__consumer_offsets created on the first start, as a single broker's was).
      await groups.ready(30_000);
    }
    ws.serve(ctx);
    interBroker?.serve(ctx);
    kafka?.server.serve(ctx);
    // A broker-only process is listening once registered (a second live process with its id is refused here).
    await cluster.register(endpoints);
    http.setReady(true);
    log.info({ port, httpPort, interBrokerPort, kafkaPort: kafka?.port, host: opts.host, brokerId: meta.brokerId, clusterId: meta.clusterId, ...(tls ? { tls: true, clientAuth: tls.clientAuth } : {}) }, 'broker listening');

    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        log.info('broker shutting down');
        await cleaner.stop();
        // HTTP consumer instances leave their groups while the listeners still serve them (their clients stop, not reconnect).
        await consumers?.close();
        shutdown.abort();
        http.setReady(false);
        const timeout = config.int('shutdown.timeout.ms');
        await Promise.all([ws.close(timeout), http.close(), interBroker?.close(timeout), kafka?.server.close(timeout)]);
        await cluster.close();
        groups.close();
        await writeCleanShutdownMarker(opts.dataDir);
        await lock.release();
        log.info('broker stopped');
      })());
    return { port, httpPort, kafkaPort: kafka?.port, brokerId: meta.brokerId, clusterId: meta.clusterId, dataDir: opts.dataDir, close };
  } catch (err) {
    await undo();
    if (err instanceof MqError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      throw new MqError('INVALID_CONFIG', `cannot listen: ${e.message} (is another broker running? pick another --port/--http-port/--kafka-port)`, { cause: err });
    }
    throw err;
  }
}
