/**
 * startBroker: wires the data directory, the topic manager, the WebSocket
 * protocol server and the HTTP API together, and shuts them down in order.
 */
import { pino, type Logger } from 'pino';
import { ReadBufferPool } from '@mq/log-store';
import { systemTimers, type Timers } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { BrokerConfig } from './config/broker-config.js';
import { guardedInterval } from './guard.js';
import type { BrokerContext } from './context.js';
import { apiVersionsFor, DEFAULT_HANDLERS } from './handlers/index.js';
import { ProducerIdManager, controllerBlockSource, fileBlockSource } from './producers/producer-ids.js';
import type { HandlerMap } from './handlers/types.js';
import { HttpServer } from './http/http-server.js';
import { Router } from './http/router.js';
import { registerRecordRoutes } from './http/routes/records.js';
import { registerSystemRoutes } from './http/routes/system.js';
import { registerTopicRoutes } from './http/routes/topics.js';
import { startGroups } from './group/broker-groups.js';
import { isClusterConfig, startClusterNode, type ClusterNode } from './cluster/cluster-node.js';
import { clusterHttpBackend, clusterPartitionView, registerClusterRoutes } from './cluster/routes.js';
import { startClusterCleaner } from './cluster/cluster-cleaner.js';
import { singleBrokerBackend } from './http/backends/single-broker.js';
import { logStoreFactory, type LogOpener } from './log-factory.js';
import { BrokerMetrics } from './metrics.js';
import { parseBrokerOptions, type BrokerOptions } from './options.js';
import { WsServer } from './server/ws-server.js';
import { clientListenerHandlers } from './cluster/listeners.js';
import {
  loadOrCreateMeta,
  lockDataDir,
  readPersistedBrokerConfig,
  takeCleanShutdownMarker,
  writeCleanShutdownMarker,
  writePersistedBrokerConfig,
  type DataDirLock,
} from './storage/data-dir.js';
import { TopicManager } from './topics/topic-manager.js';

export const BROKER_VERSION = '0.1.0';

export interface Broker {
  readonly port: number;
  readonly httpPort: number;
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
    const meta = await loadOrCreateMeta(opts.dataDir, opts.brokerId);
    const persisted = await readPersistedBrokerConfig(opts.dataDir);
    const config = new BrokerConfig({ ...persisted, ...opts.config });
    if (JSON.stringify(persisted) !== JSON.stringify({ ...config.explicit })) {
      await writePersistedBrokerConfig(opts.dataDir, config.explicit);
    }
    const log = logger.child({ broker: meta.brokerId });
    log.info({ dataDir: opts.dataDir, cleanShutdown: clean }, clean ? 'starting after a clean shutdown' : 'starting (previous run did not shut down cleanly or this is the first start; logs are recovered)');

    const openLog = components.openLog ?? logStoreFactory(log, clock);
    const timers = components.timers ?? systemTimers;
    const topics = new TopicManager(
      { dataDir: opts.dataDir, brokerId: meta.brokerId, brokerCount: 1, config },
      { openLog, logger: log, clock },
    );
    await topics.load();
    cleanups.push(() => topics.close());
    const groups = await startGroups({ config, topics, logger: log, clock });
    cleanups.push(async () => groups.close());

    // Cluster mode (controller.quorum.voters set): the metadata log, replication and the cluster's handlers.
    let cluster: ClusterNode | undefined;
    if (isClusterConfig(config)) {
      cluster = await startClusterNode({ brokerId: meta.brokerId, dataDir: opts.dataDir, config, cleanShutdown: clean }, { logger: log, clock, timers, openLog });
      cleanups.push(() => cluster!.close());
      groups.useCluster(cluster);
    }

    // A controller-only process (process.roles=controller) serves the controller's APIs only: it hosts no partitions or groups.
    const handlers: HandlerMap =
      cluster && !cluster.roles.broker
        ? { handshake: DEFAULT_HANDLERS.handshake!, ...cluster.handlers, ...components.handlers }
        : { ...DEFAULT_HANDLERS, ...groups.handlers, ...cluster?.handlers, ...components.handlers };
    const maxFrameBytes = config.int('max.frame.bytes');
    const listener = (port: number, served: HandlerMap) =>
      new WsServer(
        {
          host: opts.host,
          port,
          maxFrameBytes,
          idleMs: config.int('connections.max.idle.ms'),
          setupTimeoutMs: config.int('connection.setup.timeout.ms'),
          frameTimeoutMs: config.int('connection.frame.timeout.ms'),
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
    // Clients never get what only a broker may ask (cluster/listeners.ts); in a cluster, brokers reach each other on the inter-broker listener.
    const ws = listener(opts.port, clientListenerHandlers(handlers));
    const interBroker = cluster ? listener(config.int('inter.broker.port'), handlers) : undefined;
    const port = await ws.listen();
    cleanups.push(() => ws.close(0));
    const interBrokerPort = await interBroker?.listen();
    if (interBroker) cleanups.push(() => interBroker.close(0));
    const router = new Router();
    const http = new HttpServer({ host: opts.host, port: opts.httpPort, maxBodyBytes: config.int('http.max.body.bytes'), headersTimeoutMs: config.int('connection.setup.timeout.ms'), requestTimeoutMs: config.int('connection.frame.timeout.ms') }, router, log);
    const httpPort = await http.listen();
    cleanups.push(() => http.close());

    const shutdown = new AbortController();
    const advertised = config.get('advertised.host') || (opts.host === '0.0.0.0' || opts.host === '::' ? 'localhost' : opts.host);
    const ctx: BrokerContext = {
      brokerId: meta.brokerId,
      clusterId: meta.clusterId,
      config,
      topics,
      logger: log,
      advertisedHost: advertised,
      port,
      httpPort,
      apiVersions: apiVersionsFor(handlers),
      maxFrameBytes,
      softwareVersion: BROKER_VERSION,
      shutdownSignal: shutdown.signal,
      clock,
      metrics: new BrokerMetrics(),
      readBuffers: new ReadBufferPool(),
      producerIds: new ProducerIdManager(
        cluster ? controllerBlockSource((c) => cluster.controller.submit(c), meta.brokerId) : await fileBlockSource(opts.dataDir),
      ),
    };
    // The topic and record routes serve the cluster's topics in cluster mode, the local ones otherwise.
    const topicBackend = cluster ? clusterHttpBackend(cluster, handlers, ctx) : singleBrokerBackend(topics);
    registerTopicRoutes(router, ctx, topicBackend);
    registerRecordRoutes(router, ctx, topicBackend);
    registerSystemRoutes(router, ctx, { connections: () => ws.connectionCount, ...(cluster ? { view: clusterPartitionView(cluster) } : {}) });
    groups.registerRoutes(router, ctx);
    if (cluster) registerClusterRoutes(router, cluster);
    for (const r of components.routes ?? []) r(router, ctx);

    const retention = guardedInterval(
      log,
      'retention',
      async () => {
        const r = await topics.applyRetention();
        if (r.deletedSegments > 0) log.info(r, 'retention deleted old segments');
      },
      config.int('log.retention.check.interval.ms'),
    );
    const cleaner = guardedInterval(log, 'compaction', () => topics.compactTopics(), config.int('log.cleaner.interval.ms'));
    // Cluster partitions: every replica compacts and applies retention to its own log, below its HW.
    const clusterCleaner = cluster ? startClusterCleaner(cluster.replicas, config, log, clock) : undefined;
    if (clusterCleaner) cleanups.push(() => clusterCleaner.stop());

    ws.serve(ctx);
    interBroker?.serve(ctx);
    // A broker-only process is listening once registered (a second live process with its id is refused here).
    await cluster?.register({ host: advertised, port, httpPort, ...(interBrokerPort !== undefined ? { interBrokerPort } : {}) });
    http.setReady(true);
    log.info({ port, httpPort, interBrokerPort, host: opts.host, brokerId: meta.brokerId, clusterId: meta.clusterId }, 'broker listening');

    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        log.info('broker shutting down');
        clearInterval(retention);
        clearInterval(cleaner);
        await clusterCleaner?.stop();
        shutdown.abort();
        http.setReady(false);
        const timeout = config.int('shutdown.timeout.ms');
        await Promise.all([ws.close(timeout), http.close(), interBroker?.close(timeout)]);
        await cluster?.close();
        groups.close();
        await topics.close();
        await writeCleanShutdownMarker(opts.dataDir);
        await lock.release();
        log.info('broker stopped');
      })());
    return { port, httpPort, brokerId: meta.brokerId, clusterId: meta.clusterId, dataDir: opts.dataDir, close };
  } catch (err) {
    await undo();
    if (err instanceof MqError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'EADDRINUSE') {
      throw new MqError('INVALID_CONFIG', `cannot listen: ${e.message} (is another broker running? pick another --port/--http-port)`, { cause: err });
    }
    throw err;
  }
}
