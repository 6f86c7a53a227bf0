/**
 * Real-process cluster harness: N `mq broker start` processes on loopback,
 * each a controller voter with its own data directory, and a fault-injecting
 * TCP proxy on every broker-to-broker link (Raft and the inter-broker
 * WebSocket connection alike), so a test can cut the network between chosen
 * brokers. Brokers can be killed (SIGKILL), paused (SIGSTOP), resumed,
 * restarted and restarted with a wiped disk. `cleanup()` (from harness.ts)
 * kills every process; `cluster.close()` also stops the proxies.
 */
import { mkdir, rm } from 'node:fs/promises';
import net from 'node:net';
import { makeTempDir, startBroker, waitFor, type BrokerProcess } from './harness.js';

/** A free TCP port on loopback (closed again at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

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
  brokers?: number;
  /** Broker config for every broker (key → value). */
  config?: Record<string, string>;
  /** Route broker-to-broker links through proxies (for isolate/cut). Default true. */
  proxies?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface ClusterBroker {
  readonly id: number;
  readonly process: BrokerProcess;
  readonly raftPort: number;
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
  hosted: Array<{ topic: string; partition: number; role: string; leaderEpoch: number; logEndOffset: number; highWatermark: number }>;
}

export class TestCluster {
  readonly brokers = new Map<number, ClusterBroker>();
  /** proxies[from][to] for raft and for the broker protocol. */
  private readonly links: LinkProxy[] = [];

  constructor(private readonly options: ClusterOptions) {}

  get ids(): number[] {
    return [...this.brokers.keys()];
  }

  /** Every broker's client address, for `bootstrap`. */
  get bootstrap(): string[] {
    return [...this.brokers.values()].map((b) => b.process.bootstrap);
  }

  broker(id: number): ClusterBroker {
    const b = this.brokers.get(id);
    if (!b) throw new Error(`no broker ${id}`);
    return b;
  }

  async start(): Promise<void> {
    const n = this.options.brokers ?? 3;
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    const ports = new Map<number, { raft: number; client: number; http: number }>();
    for (const id of ids) ports.set(id, { raft: await freePort(), client: await freePort(), http: await freePort() });
    const useProxies = this.options.proxies ?? true;
    const via = new Map<string, { raft: number; client: number }>();
    if (useProxies) {
      for (const from of ids) {
        for (const to of ids) {
          if (from === to) continue;
          const raft = new LinkProxy(from, to, ports.get(to)!.raft);
          const client = new LinkProxy(from, to, ports.get(to)!.client);
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
          ...(peers ? { 'cluster.peer.addresses': peers } : {}),
          ...this.options.config,
        };
        const dataDir = await makeTempDir(`mq-cluster-${id}-`);
        const args = ['--broker-id', String(id), ...Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])];
        const proc = await startBroker({ dataDir, port: p.client, httpPort: p.http, args, env: this.options.env, startTimeoutMs: 30_000 });
        this.brokers.set(id, { id, process: proc, raftPort: p.raft, dataDir });
      }),
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

  /** Waits until every broker is registered and unfenced and every partition has its full ISR. */
  async waitHealthy(timeout = 30_000, topics?: string[]): Promise<ClusterStatus> {
    return waitFor(
      async () => {
        const s = await this.anyStatus();
        const all = this.ids.every((id) => s.brokers.some((b) => b.id === id && !b.fenced));
        const relevant = (x: { topic: string }) => !topics || topics.includes(x.topic);
        return all && s.underReplicated.filter(relevant).length === 0 && s.offline.filter(relevant).length === 0 ? s : undefined;
      },
      { timeout, interval: 200, message: 'cluster healthy (all brokers unfenced, full ISRs)' },
    );
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

  /** Kills the broker, deletes everything in its data directory, and starts it again. */
  async wipeAndRestart(id: number): Promise<void> {
    const b = this.broker(id);
    await b.process.kill();
    await rm(b.dataDir, { recursive: true, force: true });
    await mkdir(b.dataDir, { recursive: true });
    await b.process.restart();
  }

  async close(): Promise<void> {
    await Promise.all([...this.brokers.values()].map((b) => b.process.kill()));
    await Promise.all(this.links.map((l) => l.close()));
  }
}

export async function startCluster(options: ClusterOptions = {}): Promise<TestCluster> {
  const c = new TestCluster(options);
  try {
    await c.start();
  } catch (err) {
    await c.close();
    throw err;
  }
  return c;
}
