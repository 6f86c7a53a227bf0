/**
 * The simulated network between the processes of one simulation. Two kinds
 * of traffic, as in the real cluster:
 *
 * - Connections (clients to brokers, brokers to brokers): the real encoded
 *   mq frames, in order per direction (a TCP stream), each delayed by the
 *   link. A cut link holds back what crosses it (the connection stalls; TCP
 *   retransmits it all, in order, once the link heals) and may reset the
 *   connection; a crashed process's connections close on the other side.
 * - Raft messages between controller voters: the real protobuf Envelope per
 *   message, each dropped, duplicated or delayed (so reordered) on its own,
 *   as the Raft transport must tolerate.
 *
 * Delivery runs in the receiving process's context, so nothing is delivered
 * to a process that crashed.
 */
import { EventEmitter } from 'node:events';
import { decodeEnvelope, encodeEnvelope, type Message, type RaftTransport } from '@mq/consensus';
import type { Rng } from '@mq/consensus/sim';
import type { ClientSocket, ConnectFn, ConnectionOptions } from '@mq/client';
import type { SimProcess, SimTime } from './sim-time.js';

export interface NetworkFaults {
  /** Chance that a Raft message is dropped / duplicated. */
  raftDrop: number;
  raftDuplicate: number;
  /** Chance that a message or frame takes a slow path (10-150 ms instead of 0-3 ms). */
  slow: number;
}

export const NO_NETWORK_FAULTS: NetworkFaults = { raftDrop: 0, raftDuplicate: 0, slow: 0 };

/** What a listener does with a new connection: its server end, in the server process. */
export type Accept = (ws: ServerSocket, remote: { address: string; port: number }) => void;

const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

class Pipe {
  /** When the last frame in each direction arrives: frames never overtake each other. */
  lastArrival = [0, 0];
  client!: SimClientSocket;
  server!: ServerSocket;
  constructor(
    readonly net: SimNetwork,
    readonly clientProc: SimProcess,
    readonly serverProc: SimProcess,
  ) {}

  /** Frames that reached a cut link, in order: TCP retransmits them once the link heals (unless the connection resets). */
  readonly held: [Buffer[], Buffer[]] = [[], []];

  /** Sends from one end (0: client to server, 1: server to client). */
  carry(dir: 0 | 1, data: Buffer): void {
    const from = dir === 0 ? this.clientProc : this.serverProc;
    const to = dir === 0 ? this.serverProc : this.clientProc;
    const time = this.net.time;
    const at = Math.max(this.lastArrival[dir]!, time.now() + this.net.linkDelay(from.name, to.name));
    this.lastArrival[dir] = at;
    const copy = Buffer.from(data);
    time.schedule(at - time.now(), () => this.arrive(dir, copy), to);
  }

  private arrive(dir: 0 | 1, data: Buffer): void {
    const from = dir === 0 ? this.clientProc : this.serverProc;
    const to = dir === 0 ? this.serverProc : this.clientProc;
    if (this.net.isCut(from.name, to.name) || this.held[dir].length > 0) {
      this.held[dir].push(data);
      return;
    }
    this.net.delivered++;
    if (dir === 0) this.server.deliver(data);
    else this.client.deliver(data);
  }

  /** The link healed: what was held back arrives, in order. */
  release(): void {
    for (const dir of [0, 1] as const) {
      const frames = this.held[dir].splice(0);
      const to = dir === 0 ? this.serverProc : this.clientProc;
      if (frames.length === 0) continue;
      this.net.time.schedule(this.net.linkDelay(), () => {
        for (const f of frames) {
          this.net.delivered++;
          if (dir === 0) this.server.deliver(f);
          else this.client.deliver(f);
        }
      }, to);
    }
  }

  /** One end closed: the other end learns it after a link delay (a crashed process's peer gets a reset). */
  closeFrom(dir: 0 | 1, code: number): void {
    const to = dir === 0 ? this.serverProc : this.clientProc;
    const time = this.net.time;
    const at = Math.max(this.lastArrival[dir]!, time.now() + this.net.linkDelay());
    time.schedule(at - time.now(), () => (dir === 0 ? this.server.closed(code) : this.client.closed(code)), to);
  }
}

/** The client's end of a connection: a ClientSocket for @mq/client's Connection. */
class SimClientSocket extends EventEmitter implements ClientSocket {
  readyState = OPEN;
  readonly bufferedAmount = 0;
  constructor(private readonly pipe: Pipe) {
    super();
  }
  send(data: Uint8Array, _options: { binary: boolean }, cb: (err?: Error) => void): void {
    if (this.readyState !== OPEN) {
      queueMicrotask(() => cb(new Error('the connection is closed')));
      return;
    }
    this.pipe.carry(0, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    queueMicrotask(() => cb());
  }
  close(code = 1000): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSED;
    this.pipe.closeFrom(0, code);
    queueMicrotask(() => this.emit('close', code, Buffer.alloc(0)));
  }
  terminate(): void {
    this.close(1006);
  }
  deliver(data: Buffer): void {
    if (this.readyState === OPEN) this.emit('message', data, true);
  }
  closed(code: number): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', code, Buffer.alloc(0));
  }
}

/**
 * The broker's end of a connection: the part of a `ws` WebSocket the
 * broker's server Connection uses (no `_sender`, so fetch responses take the
 * ordinary send path), with pause/resume holding frames back.
 */
export class ServerSocket extends EventEmitter {
  readonly CONNECTING = 0;
  readonly OPEN = OPEN;
  readyState = OPEN;
  readonly bufferedAmount = 0;
  isPaused = false;
  private held: Buffer[] = [];
  constructor(private readonly pipe: Pipe) {
    super();
  }
  send(data: Uint8Array, _options?: { binary: boolean }, cb?: (err?: Error) => void): void {
    if (this.readyState !== OPEN) {
      if (cb) queueMicrotask(() => cb(new Error('the connection is closed')));
      return;
    }
    this.pipe.carry(1, Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    if (cb) queueMicrotask(() => cb());
  }
  close(code = 1000): void {
    if (this.readyState >= CLOSING) return;
    this.readyState = CLOSED;
    this.pipe.closeFrom(1, code);
    queueMicrotask(() => this.emit('close', code, Buffer.alloc(0)));
  }
  terminate(): void {
    this.close(1006);
  }
  pause(): void {
    this.isPaused = true;
  }
  resume(): void {
    this.isPaused = false;
    while (!this.isPaused && this.held.length > 0) this.emit('message', this.held.shift()!, true);
  }
  deliver(data: Buffer): void {
    if (this.readyState !== OPEN) return;
    if (this.isPaused) this.held.push(data);
    else this.emit('message', data, true);
  }
  closed(code: number): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('close', code, Buffer.alloc(0));
  }
}

export class SimNetwork {
  private readonly listeners = new Map<string, { proc: SimProcess; accept: Accept }>();
  private readonly raftHandlers = new Map<number, { proc: SimProcess; handler: (m: Message) => void }>();
  private readonly cut = new Set<string>();
  /** One-way cuts of Raft messages only (connections still carry frames): a voter's metadata freezes. */
  private readonly raftCut = new Set<string>();
  /** Congested links: extra delay of every frame and Raft message from `a` to `b` (`a>b`), a [min, max] range in ms. */
  private readonly slow = new Map<string, { min: number; max: number; raftOnly: boolean }>();
  private readonly pipes = new Set<Pipe>();
  /**
   * Connects waiting for their accept, by the process that runs it: if that process crashes first, the accept never
   * runs, and `crashed` fails them after the connect timeout instead (see connector).
   */
  private readonly accepting = new Map<SimProcess, Set<() => void>>();
  private nextPort = 40000;
  faults: NetworkFaults = NO_NETWORK_FAULTS;
  delivered = 0;
  dropped = 0;

  constructor(
    readonly time: SimTime,
    private readonly rng: Rng,
  ) {}

  /** A message's or frame's delay from `from` to `to` (a congested link's extra delay on top; `raft`: a Raft message). */
  linkDelay(from?: string, to?: string, raft = false): number {
    const base = this.rng.chance(this.faults.slow) ? this.rng.int(10, 150) : this.rng.int(0, 3);
    const extra = from !== undefined && this.slow.size > 0 ? this.slow.get(`${from}>${to}`) : undefined;
    return extra && (raft || !extra.raftOnly) ? base + this.rng.int(extra.min, extra.max) : base;
  }

  isCut(from: string, to: string): boolean {
    return this.cut.has(`${from}>${to}`);
  }

  /** Cuts the link from `a` to `b` (one way). */
  cutLink(a: string, b: string): void {
    this.cut.add(`${a}>${b}`);
  }

  /** Drops Raft messages from `a` to `b` (one way); connections between them still work. */
  cutRaft(a: string, b: string): void {
    this.raftCut.add(`${a}>${b}`);
  }

  /** Lets Raft messages from `a` to `b` through again (undoes cutRaft). */
  healRaft(a: string, b: string): void {
    this.raftCut.delete(`${a}>${b}`);
  }

  /**
   * Congests the link from `a` to `b`: every frame and Raft message (only Raft messages with `raftOnly`: the
   * metadata reaches `b` late while its connections keep up) takes `minMs`-`maxMs` more (frames stay in order).
   */
  slowLink(a: string, b: string, minMs: number, maxMs: number, raftOnly = false): void {
    this.slow.set(`${a}>${b}`, { min: minMs, max: maxMs, raftOnly });
  }

  heal(): void {
    this.cut.clear();
    this.raftCut.clear();
    this.slow.clear();
    for (const p of this.pipes) p.release();
  }

  /** Resets some of the connections a cut crosses (as a TCP reset would), after a random delay. */
  resetCutConnections(): void {
    for (const p of this.pipes) {
      if (!this.isCut(p.clientProc.name, p.serverProc.name) && !this.isCut(p.serverProc.name, p.clientProc.name)) continue;
      if (!this.rng.chance(0.5)) continue;
      const after = this.rng.int(0, 2000);
      this.time.schedule(after, () => p.client.closed(1006), p.clientProc);
      this.time.schedule(after, () => p.server.closed(1006), p.serverProc);
    }
  }

  /** A process crashed: the other end of each of its connections gets a reset. */
  crashed(proc: SimProcess): void {
    for (const p of [...this.pipes]) {
      if (p.clientProc === proc) p.closeFrom(0, 1006);
      else if (p.serverProc === proc) p.closeFrom(1, 1006);
      else continue;
      this.pipes.delete(p);
    }
    const accepting = this.accepting.get(proc);
    this.accepting.delete(proc);
    for (const abandon of accepting ?? []) abandon();
    for (const [id, h] of this.raftHandlers) if (h.proc === proc) this.raftHandlers.delete(id);
    for (const [a, l] of this.listeners) if (l.proc === proc) this.listeners.delete(a);
  }

  /** Listens on `address` (host:port) in the calling process. */
  listen(proc: SimProcess, address: string, accept: Accept): void {
    this.listeners.set(address, { proc, accept });
  }

  unlisten(address: string): void {
    this.listeners.delete(address);
  }

  /** The ConnectFn of the process `proc` (a client, or a broker dialing its peers). */
  connector(proc: SimProcess): ConnectFn {
    return (options: ConnectionOptions, signal?: AbortSignal) =>
      new Promise<ClientSocket>((resolve, reject) => {
        const fail = (why: string) => reject(Object.assign(new Error(`connect ${options.address}: ${why}`), { code: 'ECONNREFUSED' }));
        const l = this.listeners.get(options.address);
        const server = l?.proc;
        if (signal?.aborted) return reject(signal.reason);
        // The handshake takes a round trip; across a cut it times out.
        if (server && (this.isCut(proc.name, server.name) || this.isCut(server.name, proc.name))) {
          this.time.schedule(options.connectTimeoutMs, () => fail(`no answer within ${options.connectTimeoutMs} ms`), proc);
          return;
        }
        if (!l || !server || !server.alive) {
          this.time.schedule(this.linkDelay(), () => fail('connection refused'), proc);
          return;
        }
        const pipe = new Pipe(this, proc, server);
        pipe.client = new SimClientSocket(pipe);
        pipe.server = new ServerSocket(pipe);
        const port = this.nextPort++;
        // The accept runs in the server's process: if that process crashes first, it never runs. A real connect is
        // bounded all the same (ws's handshakeTimeout is connectTimeoutMs, the TCP connect included); without this the
        // connect never settled and what waited on it (a consumer's fetch, sim seed 240) hung for good.
        const started = this.time.elapsed();
        const abandon = () => {
          this.time.schedule(started + options.connectTimeoutMs - this.time.elapsed(), () => fail(`no answer within ${options.connectTimeoutMs} ms`), proc);
        };
        let accepting = this.accepting.get(server);
        if (!accepting) this.accepting.set(server, (accepting = new Set()));
        accepting.add(abandon);
        this.time.schedule(this.linkDelay(), () => {
          accepting.delete(abandon);
          if (!server.alive || this.listeners.get(options.address) !== l) return this.time.schedule(0, () => fail('connection refused'), proc);
          this.pipes.add(pipe);
          l.accept(pipe.server, { address: proc.name, port });
          this.time.schedule(this.linkDelay(), () => resolve(pipe.client), proc);
        }, server);
      });
  }

  /** The Raft transport of voter `id`, running in `proc`. */
  raftTransport(id: number, proc: SimProcess): RaftTransport {
    let closed = false;
    return {
      send: (messages) => {
        if (closed) return;
        for (const m of messages) {
          const to = this.raftHandlers.get(m.to);
          const bytes = encodeEnvelope([m]);
          if (!to || this.isCut(proc.name, to.proc.name) || this.raftCut.has(`${proc.name}>${to.proc.name}`) || this.rng.chance(this.faults.raftDrop)) {
            this.dropped++;
            continue;
          }
          const copies = this.rng.chance(this.faults.raftDuplicate) ? 2 : 1;
          for (let i = 0; i < copies; i++) {
            this.time.schedule(this.linkDelay(proc.name, to.proc.name, true), () => {
              const h = this.raftHandlers.get(m.to);
              if (h !== to || this.isCut(proc.name, to.proc.name)) return;
              this.delivered++;
              for (const back of decodeEnvelope(bytes)) h.handler(back);
            }, to.proc);
          }
        }
      },
      listen: (handler) => {
        this.raftHandlers.set(id, { proc, handler });
      },
      close: async () => {
        closed = true;
        if (this.raftHandlers.get(id)?.proc === proc) this.raftHandlers.delete(id);
      },
    };
  }
}
