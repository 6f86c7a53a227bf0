/**
 * One simulated broker process: the real cluster node (controller voter,
 * replica manager, replication, the partition handlers) from
 * startClusterNode, serving the real request path through the broker's own
 * server Connection, with only its components swapped: the simulated clock
 * and timers, the in-memory network (connections and Raft), the in-memory
 * disk with crash semantics. What startBroker adds around it and the
 * simulator leaves out: the data directory's meta and lock files, the
 * WebSocket and HTTP listeners (their sockets), the HTTP API, the cleaner.
 * Groups run as startBroker wires them (startGroups, useCluster).
 */
import { EventEmitter } from 'node:events';
import { pino, type Logger } from 'pino';
import { openLog, ReadBufferPool } from '@mq/log-store';
import {
  apiVersionsFor,
  BrokerConfig,
  BrokerMetrics,
  clientListenerHandlers,
  controllerBlockSource,
  DEFAULT_HANDLERS,
  ProducerIdManager,
  ServerConnection,
  startClusterNode,
  startGroups,
  startTransactions,
  OFFSETS_TOPIC,
  type BrokerContext,
  type ClusterNode,
  type HandlerMap,
} from '@mq/broker/internal';
import type { Rng } from '@mq/consensus/sim';
import { MemoryFileSystem } from './memory-fs.js';
import { RaftDisk } from './raft-disk.js';
import type { ServerSocket, SimNetwork } from './sim-network.js';
import type { SimProcess, SimTime } from './sim-time.js';

export const CLIENT_PORT = 9092;
export const INTER_BROKER_PORT = 9093;

export function brokerHost(id: number): string {
  return `b${id}`;
}

/** The broker settings of every simulated run (topic-level ones are set per topic). */
export function simBrokerConfig(ids: readonly number[], extra: Record<string, string> = {}): BrokerConfig {
  return new BrokerConfig({
    'process.roles': 'broker,controller',
    'controller.quorum.voters': ids.map((b) => `${b}@${brokerHost(b)}:9094`).join(','),
    'inter.broker.port': String(INTER_BROKER_PORT),
    'log.flush.policy': 'always',
    'min.insync.replicas': '2',
    'default.replication.factor': '3',
    'replica.lag.time.max.ms': '3000',
    'broker.session.timeout.ms': '3000',
    'unclean.recovery.wait.ms': '2000',
    'offsets.topic.num.partitions': '3',
    'group.initial.rebalance.delay.ms': '500',
    'group.min.session.timeout.ms': '1000',
    'transaction.state.log.num.partitions': '3',
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': '1000',
    ...extra,
  });
}

export interface SimBrokerDeps {
  time: SimTime;
  net: SimNetwork;
  rng: Rng;
  /** Where broker log lines go (warn and above); undefined: nowhere. */
  logLine?: (line: string) => void;
}

/** A broker's machine: its disks outlive its processes. */
export class SimBroker {
  readonly fs: MemoryFileSystem;
  readonly raftDisk: RaftDisk;
  proc: SimProcess;
  node: ClusterNode | undefined;
  /** Starts of this broker's processes (1 for the first). */
  runs = 0;
  private connId = 0;

  constructor(
    readonly id: number,
    private readonly ids: readonly number[],
    private readonly deps: SimBrokerDeps,
    private readonly extraConfig: Record<string, string> = {},
  ) {
    const { time, rng } = deps;
    const delay = () => (rng.chance(0.05) ? rng.int(5, 40) : rng.int(0, 1));
    this.fs = new MemoryFileSystem({ delayMs: delay, now: () => time.now(), sleep: (ms) => time.sleep(ms) });
    this.raftDisk = new RaftDisk(delay, (ms) => time.sleep(ms));
    this.proc = { name: brokerHost(id), alive: false };
  }

  get alive(): boolean {
    return this.proc.alive;
  }

  /** Starts a process of this broker (in its own context); resolves once it has started listening. */
  start(): Promise<void> {
    this.proc = { name: brokerHost(this.id), alive: true };
    this.runs++;
    this.node = undefined;
    return this.deps.time.within(this.proc, () => this.boot(this.proc));
  }

  private async boot(proc: SimProcess): Promise<void> {
    const { time, net } = this.deps;
    const id = this.id;
    const logLine = this.deps.logLine;
    const logger: Logger = pino(
      {
        level: logLine ? 'warn' : 'silent',
        base: { b: id },
        timestamp: () => `,"t":${time.elapsed()}`,
        // `err` is an Error or, in some log lines (the produce handler's refusals), its message.
        serializers: { err: (e: string | { code?: string; message?: string }) => (typeof e === 'string' ? e : { code: e?.code, message: e?.message }) },
      },
      { write: (s: string) => logLine?.(s.trimEnd()) },
    );
    const config = simBrokerConfig(this.ids, this.extraConfig);
    const dataDir = `/data/${brokerHost(id)}`;
    await this.fs.mkdir(dataDir);
    const fs = this.fs.view();
    // As startBroker wires them: a marker written to a __consumer_offsets partition led here settles its transactional offset commits.
    const started: { groups?: Awaited<ReturnType<typeof startGroups>> } = {};
    const onTxnMarker = (topic: string, partition: number, producerId: number, committed: boolean) => {
      if (topic === OFFSETS_TOPIC) started.groups?.coordinator?.completeTxn(partition, producerId, committed);
    };
    const node = await startClusterNode(
      { brokerId: id, dataDir, config, cleanShutdown: false },
      {
        logger,
        clock: time.clock,
        timers: time,
        openLog: (dir, options) => openLog(dir, options, { logger, clock: time.clock, fs }),
        connect: net.connector(proc),
        raft: { transport: net.raftTransport(id, proc), storage: this.raftDisk.reopen() },
        replicaStorage: { checkpointFor: (file) => this.fs.checkpoint(file), dirs: this.fs.dirView() },
        onTxnMarker,
      },
    );
    if (!proc.alive) return;
    this.node = node;
    // Member ids from the run's seeded random numbers (Math.random is the seeded RNG while a run is installed), so a seed replays them.
    const seededId = () => Math.floor(Math.random() * 2 ** 48).toString(16).padStart(12, '0');
    const groups = await startGroups({ config, logger, clock: time.clock, newMemberId: (clientId) => `${clientId || 'member'}-${seededId()}${seededId()}` });
    started.groups = groups;
    groups.useCluster(node);
    const producerIds = new ProducerIdManager(controllerBlockSource((c) => node.controller.submit(c), id));
    const transactions = startTransactions({ config, logger, clock: time.clock, timers: time, onTxnMarker });
    transactions.useCluster(node, producerIds);
    const handlers: HandlerMap = { ...DEFAULT_HANDLERS, ...groups.handlers, ...transactions.handlers(groups.handlers.findCoordinator), ...node.handlers };
    const ctx: BrokerContext = {
      brokerId: id,
      clusterId: 'sim',
      config,
      logger,
      advertisedHost: brokerHost(id),
      port: CLIENT_PORT,
      httpPort: 0,
      apiVersions: apiVersionsFor(handlers),
      maxFrameBytes: config.int('max.frame.bytes'),
      softwareVersion: 'sim',
      shutdownSignal: new AbortController().signal,
      clock: time.clock,
      metrics: new BrokerMetrics({ processMetrics: false }),
      readBuffers: new ReadBufferPool(),
      producerIds,
      // Simulated time stands still within a step: no slice runs out on the wall clock, so a seed replays exactly.
      sliceClock: { now: time.clock, nextTurn: (resume) => void time.setTimeout(resume, 0) },
    };
    const limits = {
      maxInFlight: config.int('max.in.flight.requests.per.connection'),
      maxFetchesInFlight: config.int('max.in.flight.fetches.per.connection'),
      maxBufferedBytes: config.int('connection.max.buffered.bytes'),
      maxRequestEntries: config.int('request.max.entries'),
    };
    const serve = (served: HandlerMap) => (ws: ServerSocket, remote: { address: string; port: number }) => {
      type Args = ConstructorParameters<typeof ServerConnection>;
      // The connection marks each socket read on it ('data'); the simulator's reads are its events, and its slicer never runs out within one.
      const socket = Object.assign(new EventEmitter(), { remoteAddress: remote.address, remotePort: remote.port, destroyed: false }) as unknown as Args[2];
      new ServerConnection(++this.connId, ws as unknown as Args[1], socket, ctx, served, limits, logger);
    };
    net.listen(proc, `${brokerHost(id)}:${CLIENT_PORT}`, serve(clientListenerHandlers(handlers)));
    net.listen(proc, `${brokerHost(id)}:${INTER_BROKER_PORT}`, serve(handlers));
    await node.register({ host: brokerHost(id), port: CLIENT_PORT, httpPort: 0, interBrokerPort: INTER_BROKER_PORT });
  }

  /** Kills the process: its pending work never runs, its connections reset, what its disks had not synced is lost. */
  crash(tornChance: number): { filesLost: number } {
    this.proc.alive = false;
    this.deps.net.crashed(this.proc);
    const filesLost = this.fs.crash(this.deps.rng, tornChance);
    this.raftDisk.crash(this.deps.rng);
    this.node = undefined;
    return { filesLost };
  }
}
