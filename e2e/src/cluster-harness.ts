/**
 * Real-process cluster harness: N `mq broker start` processes on loopback,
 * each a controller voter with its own data directory, and a fault-injecting
 * TCP proxy on every broker-to-broker link (Raft and the inter-broker
 * WebSocket connection alike), so a test can cut the network between chosen
 * brokers. Brokers can be killed (SIGKILL), paused (SIGSTOP), resumed,
 * restarted and restarted with a wiped disk. `cleanup()` (from harness.ts)
 * kills every process; `cluster.close()` also stops the proxies.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { makeTempDir, startBroker, waitFor, type BrokerProcess } from './harness.js';

import { freePort, freePortRange } from '../../tools/free-port.mjs';

export { freePort, freePortRange };

/**
 * One directed link's proxy: accepts on its own port and pipes to `target`.
 * `cut()` destroys every open connection and refuses new ones until `heal()`.
 */
export class LinkProxy {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private down = false;
  port = 0;

  constructor(readonly from: number, readonly to: number, private readonly target: number) {
    this.server = net.createServer((client) => {
      if (this.down) {
        client.destroy();
        return;
      }
      const upstream = net.connect(this.target, '127.0.0.1');
      this.sockets.add(client);
      this.sockets.add(upstream);
      const done = () => {
        client.destroy();
        upstream.destroy();
        this.sockets.delete(client);
        this.sockets.delete(upstream);
      };
      client.on('error', done).on('close', done);
      upstream.on('error', done).on('close', done);
      client.pipe(upstream);
      upstream.pipe(client);
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) => this.server.listen(0, '127.0.0.1', () => {
      this.port = (this.server.address() as net.AddressInfo).port;
      resolve();
    }));
  }

  get isCut(): boolean {
    return this.down;
  }

  cut(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  heal(): void {
    this.down = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

export interface ClusterOptions {
  /** Brokers: combined broker+controller voters, or broker-only processes when `controllers` is set. */
  brokers?: number;
  /**
   * Dedicated controllers (process.roles=controller, ids 1..controllers); the
   * brokers then get ids controllers+1.. and run process.roles=broker, following
   * the metadata log through controller.quorum.bootstrap.servers. No link proxies.
   */
  controllers?: number;
  /**
   * Broker-only processes added to a combined cluster (ids brokers+1..): they
   * follow the metadata log from the combined voters (controller.quorum.bootstrap.servers).
   * Their links are not proxied.
   */
  observers?: number;
  /** Broker config for every broker (key → value). */
  config?: Record<string, string>;
  /**
   * Dedicated controllers only: more controller.quorum.bootstrap.servers
   * entries (host:inter-broker port) beside the controllers started, e.g. a
   * controller the test adds to the quorum later.
   */
  extraBootstrap?: string[];
  /** Route broker-to-broker links through proxies (for isolate/cut). Default true. */
  proxies?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface ClusterBroker {
  readonly id: number;
  /** 'broker,controller' (combined), 'controller' or 'broker'. */
  readonly role: string;
  readonly process: BrokerProcess;
  readonly raftPort: number;
  /** The inter-broker listener (inter.broker.port): replica fetches and ControllerForward go here, never to the client port. */
  readonly interBrokerPort: number;
  readonly dataDir: string;
}

export interface ClusterStatus {
  brokerId: number;
  controllerId: number;
  activeController: boolean;
  brokers: Array<{ id: number; fenced: boolean; brokerEpoch: number }>;
  partitions: number;
  underReplicated: Array<{ topic: string; partition: number; replicas: number[]; isr: number[] }>;
  offline: Array<{ topic: string; partition: number }>;
  hosted: Array<{ topic: string; partition: number; topicId: string; role: string; leaderEpoch: number; logEndOffset: number; highWatermark: number }>;
}

export class TestCluster {
  readonly brokers = new Map<number, ClusterBroker>();
  /** proxies[from][to] for raft and for the broker protocol. */
  private readonly links: LinkProxy[] = [];

  constructor(private readonly options: ClusterOptions) {}

  get ids(): number[] {
    return [...this.brokers.keys()];
  }

  /** The processes that host partitions (all of them unless the controllers are dedicated). */
  get brokerIds(): number[] {
    return [...this.brokers.values()].filter((b) => b.role !== 'controller').map((b) => b.id).sort((a, b) => a - b);
  }

  /** The controller voters. */
  get controllerIds(): number[] {
    return [...this.brokers.values()].filter((b) => b.role !== 'broker').map((b) => b.id).sort((a, b) => a - b);
  }

  /** Every broker's client address, for `bootstrap`. */
  get bootstrap(): string[] {
    return [...this.brokers.values()].filter((b) => b.role !== 'controller').map((b) => b.process.bootstrap);
  }

  broker(id: number): ClusterBroker {
    const b = this.brokers.get(id);
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  async start(): Promise<void> {
    if (this.options.controllers) return this.startDedicated(this.options.controllers);
    const n = this.options.brokers ?? 3;
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    const ports = new Map<number, { raft: number; client: number; http: number; interBroker: number }>();
    for (const id of ids) ports.set(id, { raft: await freePort(), client: await freePort(), http: await freePort(), interBroker: await freePort() });
    const useProxies = this.options.proxies ?? true;
    const via = new Map<string, { raft: number; client: number }>();
    if (useProxies) {
      for (const from of ids) {
        for (const to of ids) {
          if (from === to) continue;
          const raft = new LinkProxy(from, to, ports.get(to)!.raft);
          // Brokers reach each other on the inter-broker listener.
          const client = new LinkProxy(from, to, ports.get(to)!.interBroker);
          await raft.listen();
          await client.listen();
          this.links.push(raft, client);
          via.set(`${from}>${to}`, { raft: raft.port, client: client.port });
        }
      }
    }
    await Promise.all(
      ids.map(async (id) => {
        const p = ports.get(id)!;
        const voters = ids.map((o) => `${o}@127.0.0.1:${o === id ? p.raft : (via.get(`${id}>${o}`)?.raft ?? ports.get(o)!.raft)}`).join(',');
        const peers = useProxies ? ids.filter((o) => o !== id).map((o) => `${o}@127.0.0.1:${via.get(`${id}>${o}`)!.client}`).join(',') : '';
        const config: Record<string, string> = {
          'controller.quorum.voters': voters,
          'inter.broker.port': String(p.interBroker),
          ...(peers ? { 'cluster.peer.addresses': peers } : {}),
          ...this.options.config,
        };
        const dataDir = await makeTempDir(`mq-cluster-${id}-`);
        const args = ['--broker-id', String(id), ...Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])];
        const proc = await startBroker({ dataDir, port: p.client, httpPort: p.http, args, env: this.options.env, startTimeoutMs: 30_000 });
        this.brokers.set(id, { id, role: 'broker,controller', process: proc, raftPort: p.raft, interBrokerPort: p.interBroker, dataDir });
      }),
    );
    const bootstrap = ids.map((id) => `127.0.0.1:${ports.get(id)!.interBroker}`).join(',');
    await Promise.all(
      Array.from({ length: this.options.observers ?? 0 }, (_, i) => n + i + 1).map(async (id) => {
        const interBrokerPort = await freePort();
        const config: Record<string, string> = {
          'process.roles': 'broker',
          'controller.quorum.bootstrap.servers': bootstrap,
          'inter.broker.port': String(interBrokerPort),
          ...this.options.config,
        };
        const dataDir = await makeTempDir(`mq-cluster-${id}-`);
        const args = ['--broker-id', String(id), ...Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])];
        const proc = await startBroker({ dataDir, port: await freePort(), httpPort: await freePort(), args, env: this.options.env, startTimeoutMs: 30_000 });
        this.brokers.set(id, { id, role: 'broker', process: proc, raftPort: 0, interBrokerPort, dataDir });
      }),
    );
  }

  /** `controllers` dedicated controller processes and `brokers` broker-only processes. */
  private async startDedicated(controllers: number): Promise<void> {
    const n = this.options.brokers ?? 3;
    const cids = Array.from({ length: controllers }, (_, i) => i + 1);
    const bids = Array.from({ length: n }, (_, i) => controllers + i + 1);
    const ports = new Map<number, { raft: number; client: number; http: number; interBroker: number }>();
    for (const id of [...cids, ...bids]) ports.set(id, { raft: cids.includes(id) ? await freePort() : 0, client: await freePort(), http: await freePort(), interBroker: await freePort() });
    const voters = cids.map((id) => `${id}@127.0.0.1:${ports.get(id)!.raft}`).join(',');
    const bootstrap = [...cids.map((id) => `127.0.0.1:${ports.get(id)!.interBroker}`), ...(this.options.extraBootstrap ?? [])].join(',');
    await Promise.all(
      [...cids, ...bids].map(async (id) => {
        const p = ports.get(id)!;
        const role = cids.includes(id) ? 'controller' : 'broker';
        const config: Record<string, string> = {
          'process.roles': role,
          // Controllers get the bootstrap servers too: a non-active one forwards commands (e.g. HTTP topic admin) through them.
          ...(role === 'controller' ? { 'controller.quorum.voters': voters } : {}),
          'controller.quorum.bootstrap.servers': bootstrap,
          'inter.broker.port': String(p.interBroker),
          ...this.options.config,
        };
        const dataDir = await makeTempDir(`mq-cluster-${id}-`);
        const args = ['--broker-id', String(id), ...Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])];
        const proc = await startBroker({ dataDir, port: p.client, httpPort: p.http, args, env: this.options.env, startTimeoutMs: 30_000 });
        this.brokers.set(id, { id, role, process: proc, raftPort: p.raft, interBrokerPort: p.interBroker, dataDir });
      }),
    );
  }

  /** The active controller as the running controller voters report it (waits for one). */
  async activeController(exclude: number[] = []): Promise<number> {
    return waitFor(
      async () => {
        for (const id of this.controllerIds) {
          if (exclude.includes(id) || this.broker(id).process.exited) continue;
          const s = await this.status(id).catch(() => undefined);
          if (s?.activeController) return id;
        }
        return 0;
      },
      { timeout: 20_000, interval: 100, message: 'an active controller' },
    );
  }

  /** GET /cluster of one broker. */
  async status(id: number): Promise<ClusterStatus> {
    const res = await fetch(`${this.broker(id).process.httpUrl}/cluster`, { signal: AbortSignal.timeout(3000) });
    if (!res.ok) throw new Error(`GET /cluster on broker ${id}: ${res.status}`);
    return (await res.json()) as ClusterStatus;
  }

  /** The status from some running, unpaused broker that knows the active controller. */
  async anyStatus(exclude: number[] = []): Promise<ClusterStatus> {
    let last: unknown;
    for (const id of this.ids) {
      if (exclude.includes(id) || this.broker(id).process.exited) continue;
      try {
        const s = await this.status(id);
        if (s.controllerId > 0) return s;
      } catch (err) {
        last = err;
      }
    }
    throw new Error(`no broker answered with a controller: ${String(last)}`);
  }

  /**
   * Waits until every broker is registered and unfenced and every partition
   * has its full ISR, as the active controller sees it. Any other broker's view
   * can be stale: a broker just restarted replays its metadata log and reports
   * the state from before it was killed until it catches up.
   */
  async waitHealthy(timeout = 30_000, topics?: string[]): Promise<ClusterStatus> {
    return waitFor<ClusterStatus | undefined>(
      async () => {
        const any = await this.anyStatus();
        const ctl = any.controllerId;
        if (!this.ids.includes(ctl) || this.broker(ctl).process.exited) return undefined;
        const s = ctl === any.brokerId ? any : await this.status(ctl).catch(() => undefined);
        if (!s?.activeController) return undefined;
        const all = this.brokerIds.every((id) => s.brokers.some((b) => b.id === id && !b.fenced));
        const relevant = (x: { topic: string }) => !topics || topics.includes(x.topic);
        return all && s.underReplicated.filter(relevant).length === 0 && s.offline.filter(relevant).length === 0 ? s : undefined;
      },
      { timeout, interval: 200, message: 'cluster healthy (all brokers unfenced, full ISRs)' },
    ) as Promise<ClusterStatus>;
  }

  /** Cuts (both directions) every link between `a` and `b`. */
  cut(a: number, b: number): void {
    for (const l of this.links) if ((l.from === a && l.to === b) || (l.from === b && l.to === a)) l.cut();
  }

  /** Cuts `id` off from every other broker (clients still reach it). */
  isolate(id: number): void {
    for (const other of this.ids) if (other !== id) this.cut(id, other);
  }

  healAll(): void {
    for (const l of this.links) l.heal();
  }

  kill(id: number): Promise<void> {
    return this.broker(id).process.kill();
  }

  pause(id: number): void {
    this.broker(id).process.pause();
  }

  resume(id: number): void {
    this.broker(id).process.resume();
  }

  restart(id: number): Promise<void> {
    return this.broker(id).process.restart();
  }

  /**
   * Kills the broker, deletes its data directory, and starts it again. The
   * Raft metadata log (`__cluster_metadata`) is kept unless `metadataToo`:
   * a Raft voter that forgets what it acknowledged breaks Raft's
   * assumptions (the leader never re-sends entries it believes the voter
   * has), and bringing back such a voter needs a membership change, which
   * mq does not do yet. Partition logs, checkpoints and broker metadata go.
   */
  async wipeAndRestart(id: number, metadataToo = false): Promise<void> {
    const b = this.broker(id);
    await b.process.kill();
    for (const entry of await readdir(b.dataDir)) {
      if (!metadataToo && entry === '__cluster_metadata') continue;
      await rm(path.join(b.dataDir, entry), { recursive: true, force: true });
    }
    await mkdir(b.dataDir, { recursive: true });
    await b.process.restart();
  }

  async close(): Promise<void> {
    await Promise.all([...this.brokers.values()].map((b) => b.process.kill()));
    await Promise.all(this.links.map((l) => l.close()));
  }
}

/**
 * Starts a cluster. Ports are picked free and then handed to the brokers, so
 * another process on the machine can take one in between: a cluster whose
 * broker fails to listen is torn down and started once more on new ports.
 */
export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  for (let attempt = 1; ; attempt++) {
    const c = new TestCluster(options);
    try {
      await c.start();
      return c;
    } catch (err) {
      await c.close();
      if (attempt >= 2 || !/EADDRINUSE|address already in use/.test(String(err))) throw err;
    }
  }
}

/** Broker settings that make failure detection quick enough for tests (seconds, not the production defaults). */
export const FAST_FAILOVER_CONFIG: Readonly<Record<string, string>> = {
  'broker.session.timeout.ms': '2000',
  'controller.tick.ms': '50',
  'replica.lag.time.max.ms': '2000',
  'replica.fetch.max.wait.ms': '200',
  'leader.imbalance.check.interval.ms': '2000',
  'log.flush.policy': 'os',
  'controller.fsync': 'false',
};

/** The broker that currently leads `topic`-`partition` by its own account (waits for one). */
export async function leaderFor(c: TestCluster, topic: string, partition: number, exclude: number[] = []): Promise<number> {
  return waitFor(
    async () => {
      for (const id of c.ids) {
        if (exclude.includes(id) || c.broker(id).process.exited) continue;
        const s = await c.status(id).catch(() => undefined);
        if (s?.hosted.some((x) => x.topic === topic && x.partition === partition && x.role === 'leader')) return id;
      }
      return 0;
    },
    { timeout: 20_000, interval: 100, message: `a leader for ${topic}-${partition}` },
  );
}

/** Every batch of a stopped broker's replica of a partition: base offset → the batch's bytes (base64). */
export async function replicaBatches(dataDir: string, topic: string, partition: number): Promise<Map<number, string>> {
  const { openLog } = await import('@mq/log-store');
  const { iterateBatches } = await import('@mq/protocol/batch');
  const root = path.join(dataDir, 'cluster-logs');
  const dir = (await readdir(root).catch(() => [] as string[])).find((d) => d.startsWith(`${topic}-${partition}.`) && !d.endsWith('.hw'));
  const out = new Map<number, string>();
  if (!dir) return out;
  const log = await openLog(path.join(root, dir));
  try {
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const { records } = await log.read(offset, 1024 * 1024);
      if (records.length === 0) break;
      for (const b of iterateBatches(records)) {
        // Followers append the leader's exact bytes (offsets, leader epoch, CRC), so whole batches must match.
        out.set(b.header.baseOffset, records.subarray(b.position, b.position + b.size).toString('base64'));
        offset = b.header.baseOffset + b.header.lastOffsetDelta + 1;
      }
    }
  } finally {
    await log.close();
  }
  return out;
}

/** Stops every broker and checks that no offset holds two different batches on two replicas; returns the batch counts. */
export async function expectReplicasAgree(c: TestCluster, topic: string, partitions: number[]): Promise<number[][]> {
  for (const id of c.ids) await c.broker(id).process.stop();
  const counts: number[][] = [];
  for (const p of partitions) {
    const logs = await Promise.all(c.ids.map((id) => replicaBatches(c.broker(id).dataDir, topic, p)));
    counts.push(logs.map((l) => l.size));
    for (const o of new Set(logs.flatMap((l) => [...l.keys()]))) {
      const versions = new Set(logs.map((l) => l.get(o)).filter((v) => v !== undefined));
      if (versions.size !== 1) throw new Error(`${topic}-${p} offset ${o}: the replicas hold ${versions.size} different batches`);
    }
  }
  return counts;
}

/** A record an AckedPump had acknowledged: where, which (`v${seq}` is its value), and when. */
export interface AckedRecord {
  partition: number;
  offset: number;
  seq: number;
  at: number;
}

export interface AckedPump {
  /** Acknowledged records, in the order their acks arrived. */
  readonly acked: AckedRecord[];
  /** Stops sending and waits for the sends in flight to settle. */
  stop(): Promise<void>;
}

/**
 * Sends `v0, v1, …` round robin over `partitions` with up to `window` sends
 * in flight until stopped, recording every acknowledgement; refused sends
 * are dropped (only acknowledged records must survive).
 */
export function startAckedPump(
  producer: { send(topic: string, record: { value: string; partition: number }): Promise<{ offset: number }> },
  topic: string,
  partitions: number,
  window = 32,
): AckedPump {
  const acked: AckedRecord[] = [];
  let stopped = false;
  const running = (async () => {
    const inFlight: Array<Promise<void>> = [];
    for (let seq = 0; !stopped; seq++) {
      const partition = seq % partitions;
      const s = seq;
      inFlight.push(
        producer.send(topic, { value: `v${s}`, partition }).then(
          (m) => void acked.push({ partition, offset: m.offset, seq: s, at: Date.now() }),
          () => undefined,
        ),
      );
      if (inFlight.length >= window) await inFlight.shift();
      // Let timers and I/O run even when sends settle at once (a refused send must not starve the event loop).
      if (seq % window === 0) await new Promise((r) => setImmediate(r));
    }
    await Promise.all(inFlight);
  })();
  return {
    acked,
    stop: () => {
      stopped = true;
      return running;
    },
  };
}
