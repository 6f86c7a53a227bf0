import { MqError } from '@mq/protocol/errors';
import { ClusterAuthDialer, ClusterAuthListener } from '@mq/protocol/cluster-auth';
import { lookup } from 'node:dns/promises';
import { createServer as createHttpsServer } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import { raft as pb } from '../gen/raft.js';
import type { Message } from '../core/types.js';
import { silentLogger, type Logger } from '@mq/protocol/components';
import type { RaftTransport } from '../node/types.js';
import { fromWire, toWire } from './envelope.js';

export { fromWire, toWire } from './envelope.js';

export interface WsTransportOptions {
  /** This node's id. */
  id: number;
  /** Connections from another cluster are refused. */
  clusterId?: string;
  host?: string;
  /** Port to listen on (0 = any free port; see `port` after start). */
  port?: number;
  /** Peer id -> WebSocket URL (ws://host:port). */
  peers?: Record<number, string>;
  /** Per-peer cap on bytes buffered in the socket; beyond it messages are dropped (Raft re-sends). */
  maxBufferedBytes?: number;
  /** Largest frame accepted. */
  maxFrameBytes?: number;
  /** Delay before reconnecting to a peer after a failure. */
  reconnectMs?: number;
  /**
   * An incoming connection that has not introduced itself (its Hello, and with a secret its proof) within this
   * long is closed with one log line: a silent or half-finished connection holds nothing for long.
   */
  introductionTimeoutMs?: number;
  /**
   * Refuse a connection whose Hello names a peer unless it comes from one of
   * that peer's addresses (its URL's host, resolved). Until peers
   * authenticate each other this is what stops another process from
   * claiming to be a voter. Default true; turn off only where a peer's
   * outgoing address differs from the one it is dialled at (NAT, several
   * interfaces).
   */
  verifyPeerAddress?: boolean;
  /**
   * The cluster secret (@mq/protocol/cluster-auth). With it, every
   * connection proves it in both directions before any Raft message: the
   * dialer's Hello carries a nonce, the listener answers with a Challenge
   * (its nonce and proof), the dialer sends its proof. A connection that
   * skips or fails a step is closed with a reason. Absent: no proof.
   */
  secret?: Uint8Array;
  /**
   * TLS both ways (wss://): the listener presents `cert` and requires a
   * peer certificate signed by `ca`; dials verify the peer's certificate
   * against `ca` (and the host name of its URL) and present `cert`. A
   * handshake that fails is one log line. Peer URLs must then be wss://.
   */
  tls?: WsTransportTls;
}

/** PEM certificate (chain), its key, and the CA(s) that sign every peer's certificate. */
export interface WsTransportTls {
  cert: Buffer | string;
  key: Buffer | string;
  ca: Buffer | string;
}

export const DEFAULT_MAX_BUFFERED_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_FRAME_BYTES = 64 * 1024 * 1024;
export const DEFAULT_RECONNECT_MS = 200;
export const DEFAULT_INTRODUCTION_TIMEOUT_MS = 10_000;
/** Messages to one peer are packed into frames of about this size. */
const FRAME_TARGET_BYTES = 1024 * 1024;

export interface WsTransport extends RaftTransport {
  readonly port: number;
  addPeer(id: number, url: string): void;
  removePeer(id: number): void;
  /**
   * Calls `fn(id, false)` when dialling a peer is refused (ECONNREFUSED:
   * nothing listens on its port, so its process is gone, e.g. killed, even
   * though a paused one would still be accepted by the kernel), and
   * `fn(id, true)` when a connection to it opens again. A lost connection is
   * redialled at once, so a killed peer is reported within a round trip.
   * Returns the unsubscribe function.
   */
  onPeerReachability(fn: (id: number, reachable: boolean) => void): () => void;
  /** New TLS material (a reloaded certificate): new connections, both ways, use it; open ones keep theirs. */
  setSecureContext(tls: WsTransportTls): void;
  /** Counters: messages sent, received, dropped (no connection or buffer full), refused connections. */
  stats(): { sent: number; received: number; dropped: number; refused: number };
}

export type ParsedWsTransportOptions = Required<Omit<WsTransportOptions, 'peers' | 'secret' | 'tls'>> & { peers: Map<number, string>; secret: Uint8Array | undefined; tls: WsTransportTls | undefined };

/** How long a dialer waits for the listener's Challenge before it gives the connection up. */
const AUTH_TIMEOUT_MS = 5000;

export function parseWsTransportOptions(o: WsTransportOptions): ParsedWsTransportOptions {
  if (!Number.isSafeInteger(o.id) || o.id <= 0) throw new MqError('INVALID_ARGUMENT', `transport id must be a positive integer, got ${o.id}`);
  const peers = new Map<number, string>();
  for (const [k, v] of Object.entries(o.peers ?? {})) {
    const id = Number(k);
    if (!Number.isSafeInteger(id) || id <= 0) throw new MqError('INVALID_ARGUMENT', `peer id ${k} must be a positive integer`);
    if (!(o.tls ? /^wss:\/\// : /^ws:\/\//).test(v)) throw new MqError('INVALID_ARGUMENT', `peer ${k} address "${v}" must be a ${o.tls ? 'wss' : 'ws'}:// URL`);
    if (id !== o.id) peers.set(id, v);
  }
  return {
    id: o.id,
    clusterId: o.clusterId ?? 'mq',
    host: o.host ?? '127.0.0.1',
    port: o.port ?? 0,
    peers,
    maxBufferedBytes: o.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES,
    maxFrameBytes: o.maxFrameBytes ?? DEFAULT_MAX_FRAME_BYTES,
    reconnectMs: o.reconnectMs ?? DEFAULT_RECONNECT_MS,
    introductionTimeoutMs: o.introductionTimeoutMs ?? DEFAULT_INTRODUCTION_TIMEOUT_MS,
    verifyPeerAddress: o.verifyPeerAddress ?? true,
    secret: o.secret,
    tls: o.tls,
  };
}

/** An address as sockets report it, IPv4-mapped IPv6 as plain IPv4. */
function normalizeAddress(a: string): string {
  const plain = a.startsWith('::ffff:') && isIP(a.slice(7)) === 4 ? a.slice(7) : a;
  return plain.toLowerCase();
}

/** The addresses a peer URL's host stands for. */
async function addressesOf(url: string): Promise<Set<string>> {
  const host = new URL(url).hostname.replace(/^\[(.*)\]$/, '$1');
  if (isIP(host)) return new Set([normalizeAddress(host)]);
  const all = await lookup(host, { all: true });
  return new Set(all.map((x) => normalizeAddress(x.address)));
}


interface Peer {
  id: number;
  url: string;
  ws: WebSocket | undefined;
  open: boolean;
  retryAt: number;
  /** Frames waiting for the connection to open (bounded by PENDING_BYTES). */
  pending: Uint8Array[];
  pendingBytes: number;
  timer: NodeJS.Timeout | undefined;
  /** Last dial was refused and no connection has opened since. */
  unreachable: boolean;
  /** When a lost connection was last redialled without waiting. */
  redialedAt: number;
  /** Redials left at QUICK_REDIAL_MS steps after a lost connection (see `down`). */
  quickRedials: number;
  /** With a secret: the connection's exchange until the listener proved the secret (frames wait in `pending`). */
  auth: ClusterAuthDialer | undefined;
}

/** While a connection is being (re)established, up to this many bytes of frames wait for it. */
const PENDING_BYTES = 4 * 1024 * 1024;
/**
 * A dying process's kernel may close its connections a moment before its
 * listening socket, so the redial right after a lost connection can be reset
 * instead of refused. Such a redial is tried again this many times, this far
 * apart, before the usual reconnectMs: the refusal (the hint that the process
 * is gone) then comes within tens of ms, not one reconnect step later.
 */
const QUICK_REDIALS = 4;
const QUICK_REDIAL_MS = 20;

/**
 * Raft messages over WebSocket + protobuf. Each node dials every peer it
 * sends to (one outgoing connection per peer) and accepts connections that
 * introduce themselves with a Hello of the right cluster and a known node id.
 * Sending never blocks: with no open connection, or more than
 * maxBufferedBytes queued in the socket, messages are dropped and counted.
 */
export async function createWsTransport(options: WsTransportOptions, components: { logger?: Logger } = {}): Promise<WsTransport> {
  const o = parseWsTransportOptions(options);
  const logger = components.logger ?? silentLogger;
  const peers = new Map<number, Peer>();
  for (const [id, url] of o.peers) peers.set(id, newPeer(id, url));
  let handler: ((m: Message) => void) | undefined;
  let closed = false;
  const counters = { sent: 0, received: 0, dropped: 0, refused: 0 };
  const incoming = new Set<WebSocket>();
  const reachability = new Set<(id: number, reachable: boolean) => void>();
  const report = (p: Peer, reachable: boolean): void => {
    if (p.unreachable === !reachable) return;
    p.unreachable = !reachable;
    for (const fn of [...reachability]) {
      try {
        fn(p.id, reachable);
      } catch (err) {
        logger.error({ err, peer: p.id }, 'raft transport: a reachability listener failed');
      }
    }
  };

  let dialTls = o.tls;
  // With TLS the WebSocket server runs on an HTTPS server that requires a peer certificate signed by the CA.
  const https = o.tls ? createHttpsServer({ ...o.tls, requestCert: true, rejectUnauthorized: true, minVersion: 'TLSv1.2' }) : undefined;
  https?.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    counters.refused++;
    logger.warn({ remote: normalizeAddress(socket.remoteAddress ?? ''), code: err.code, err: err.message }, 'raft transport: TLS handshake failed: connection closed');
  });
  const server = new WebSocketServer({
    ...(https ? { server: https } : { host: o.host, port: o.port }),
    maxPayload: o.maxFrameBytes,
    // Peers never send an Origin header; a browser always does: no web page gets to open a Raft connection.
    verifyClient: (info, done) => {
      if (info.req.headers.origin === undefined) return done(true);
      counters.refused++;
      logger.warn({ remote: normalizeAddress(info.req.socket.remoteAddress ?? ''), origin: info.req.headers.origin }, 'raft transport: refused a WebSocket upgrade from a browser (Origin header)');
      done(false, 403, 'Origin Not Allowed');
    },
  });
  await new Promise<void>((resolve, reject) => {
    const listening = https ?? server;
    listening.once('listening', resolve);
    listening.once('error', reject);
    https?.listen(o.port, o.host);
  });
  const port = ((https ?? server).address() as AddressInfo).port;

  server.on('connection', (ws, req) => {
    incoming.add(ws);
    const remote = normalizeAddress(req.socket.remoteAddress ?? '');
    let from = 0;
    let refused = false;
    /** With a secret: the exchange after the Hello, until the dialer's proof arrives. */
    let auth: ClusterAuthListener | undefined;
    let claimedFrom = 0;
    // Frames are handled in order; the Hello's address check may wait for a name lookup.
    let chain: Promise<void> = Promise.resolve();
    const refuse = (code: number, reason: string, fields: Record<string, unknown>) => {
      refused = true;
      counters.refused++;
      logger.warn({ remote, ...fields }, `raft transport: connection refused: ${reason}`);
      ws.close(code, reason);
    };
    // A connection that never finishes introducing itself (nothing sent, a Hello and then nothing) is closed.
    const introduction = setTimeout(() => {
      if (from === 0 && !refused) refuse(4005, `REQUEST_TIMED_OUT: no ${auth ? 'proof of the cluster secret' : 'hello'} within ${o.introductionTimeoutMs} ms`, { from: claimedFrom || undefined });
    }, o.introductionTimeoutMs);
    introduction.unref?.();
    ws.on('close', () => {
      clearTimeout(introduction);
      incoming.delete(ws);
    });
    ws.on('error', () => undefined);
    const hello = async (h: pb.IHello | null | undefined): Promise<void> => {
      const claimed = Number(h?.from ?? 0);
      if (!h || h.clusterId !== o.clusterId || Number(h.to) !== o.id) {
        refuse(4001, `INVALID_REQUEST: expected a hello for cluster ${o.clusterId} node ${o.id}`, { clusterId: h?.clusterId, to: h?.to, from: claimed });
        return;
      }
      const peer = peers.get(claimed);
      if (!peer) {
        refuse(4002, `UNKNOWN_NODE: node ${claimed} is not a known peer of node ${o.id}`, { from: claimed });
        return;
      }
      if (o.verifyPeerAddress) {
        const allowed = await addressesOf(peer.url).catch(() => new Set<string>());
        if (!allowed.has(remote)) {
          refuse(4003, `UNKNOWN_NODE: node ${claimed} is at ${[...allowed].join(', ') || new URL(peer.url).host}, not ${remote}`, { from: claimed, allowed: [...allowed] });
          return;
        }
      }
      if (o.secret) {
        auth = new ClusterAuthListener(o.secret, 'raft', o.id);
        try {
          const c = auth.challenge(claimed, h.nonce);
          ws.send(pb.Envelope.encode({ challenge: { nonce: c.nonce, proof: c.proof } }).finish());
        } catch (err) {
          refuse(4004, `CLUSTER_AUTHENTICATION_FAILED: ${(err as Error).message}`, { from: claimed });
          return;
        }
        claimedFrom = claimed;
        return;
      }
      from = claimed;
    };
    /** The dialer's proof, the frame after the Challenge. */
    const proof = (env: pb.Envelope, a: ClusterAuthListener): void => {
      try {
        if (env.proof.length === 0) throw new Error(`a frame ${env.messages.length > 0 ? 'of Raft messages ' : ''}before the proof of the cluster secret`);
        a.verify(env.proof);
      } catch (err) {
        refuse(4004, `CLUSTER_AUTHENTICATION_FAILED: ${(err as Error).message}`, { from: claimedFrom, messages: env.messages.length });
        return;
      }
      auth = undefined;
      from = claimedFrom;
    };
    const handle = async (data: Buffer): Promise<void> => {
      if (refused) return;
      let env: pb.Envelope;
      try {
        env = pb.Envelope.decode(data);
      } catch (err) {
        refuse(4000, 'CORRUPT_MESSAGE: undecodable frame', { err, from });
        return;
      }
      if (from === 0) {
        if (auth) proof(env, auth);
        else await hello(env.hello);
        if (from === 0 || refused) return;
      }
      for (const w of env.messages) {
        const m = fromWire(w);
        if (m.from !== from || m.to !== o.id) {
          counters.refused++;
          continue; // a message must come from the node that introduced itself
        }
        counters.received++;
        handler?.(m);
      }
    };
    ws.on('message', (data: RawData) => {
      const buf = toBuffer(data);
      chain = chain.then(() => handle(buf)).catch((err: unknown) => logger.error({ err, remote }, 'raft transport: handling a frame failed'));
    });
  });

  const connect = (p: Peer): void => {
    if (closed || p.ws || peers.get(p.id) !== p) return;
    const wait = p.retryAt - Date.now();
    if (wait > 0) {
      // Reconnect on a timer, not only when the next message comes: a peer
      // that restarted must hear the next vote request.
      p.timer ??= setTimeout(() => {
        p.timer = undefined;
        // Nothing thrown in a timer may end the process (a peer URL the ws library refuses, say).
        try {
          connect(p);
        } catch (err) {
          logger.error({ err, peer: p.id }, 'raft transport: reconnecting to a peer failed');
        }
      }, wait);
      return;
    }
    const ws = new WebSocket(p.url, {
      maxPayload: o.maxFrameBytes,
      perMessageDeflate: false,
      ...(dialTls ? { cert: dialTls.cert, key: dialTls.key, ca: dialTls.ca, rejectUnauthorized: true } : {}),
    });
    p.ws = ws;
    const ready = () => {
      p.open = true;
      for (const f of p.pending.splice(0)) ws.send(f);
      p.pendingBytes = 0;
    };
    let authTimer: NodeJS.Timeout | undefined;
    const authFailed = (reason: string) => {
      clearTimeout(authTimer);
      logger.warn({ peer: p.id, url: p.url }, `raft transport: connection to peer given up: CLUSTER_AUTHENTICATION_FAILED: ${reason}`);
      ws.close(4004, `CLUSTER_AUTHENTICATION_FAILED: ${reason}`.slice(0, 120));
    };
    ws.on('open', () => {
      if (p.ws !== ws) return;
      p.quickRedials = 0;
      report(p, true);
      if (!o.secret) {
        ws.send(pb.Envelope.encode({ hello: { clusterId: o.clusterId, from: o.id, to: p.id } }).finish());
        ready();
        return;
      }
      const dialer = new ClusterAuthDialer(o.secret, 'raft', o.id);
      p.auth = dialer;
      ws.send(pb.Envelope.encode({ hello: { clusterId: o.clusterId, from: o.id, to: p.id, nonce: dialer.nonce } }).finish());
      authTimer = setTimeout(() => {
        if (p.ws === ws && p.auth === dialer) authFailed(`node ${p.id} sent no challenge within ${AUTH_TIMEOUT_MS} ms (does it have cluster.secret.file?)`);
      }, AUTH_TIMEOUT_MS);
      authTimer.unref?.();
    });
    // The listener speaks on this connection only to answer the Hello with its Challenge.
    ws.on('message', (data: RawData) => {
      const dialer = p.auth;
      if (p.ws !== ws || !dialer) return;
      try {
        const env = pb.Envelope.decode(toBuffer(data));
        if (!env.challenge) throw new Error('the first frame from the listener is not a challenge');
        const own = dialer.answer({ id: p.id, nonce: env.challenge.nonce, proof: env.challenge.proof }, p.id);
        clearTimeout(authTimer);
        p.auth = undefined;
        ws.send(pb.Envelope.encode({ proof: own }).finish());
        ready();
      } catch (err) {
        p.auth = undefined;
        authFailed((err as Error).message);
      }
    });
    const down = (why: string, refused: boolean) => {
      if (p.ws !== ws) return;
      clearTimeout(authTimer);
      p.auth = undefined;
      const wasOpen = p.open;
      if (wasOpen) logger.info({ peer: p.id, why }, 'raft transport: connection to peer lost');
      if (refused) report(p, false);
      p.ws = undefined;
      p.open = false;
      // A connection that was up is redialled at once (at most once per reconnectMs, so a peer that
      // keeps closing it is not redialled in a loop): a refusal then says the peer's process is gone.
      const now = Date.now();
      const quick = wasOpen && now - p.redialedAt >= o.reconnectMs;
      if (quick) {
        p.redialedAt = now;
        p.quickRedials = QUICK_REDIALS;
        p.retryAt = 0;
      } else if (!wasOpen && !refused && p.quickRedials > 0) {
        // The redial was reset, not refused: the process may be going away right now (QUICK_REDIALS).
        p.quickRedials--;
        p.retryAt = now + QUICK_REDIAL_MS;
      } else {
        if (refused) p.quickRedials = 0;
        p.retryAt = now + o.reconnectMs;
      }
      connect(p);
    };
    ws.on('close', (code, reason) => down(`closed ${code} ${reason.toString()}`, false));
    ws.on('error', (err) => {
      down(err.message, (err as NodeJS.ErrnoException).code === 'ECONNREFUSED');
      ws.terminate();
    });
  };

  return {
    port,
    send(messages: Message[]): void {
      if (closed) return;
      // One frame per peer per call, split so that no frame grows past FRAME_TARGET_BYTES.
      const frames: [number, pb.IMessage[]][] = [];
      const open = new Map<number, { list: pb.IMessage[]; bytes: number }>();
      for (const m of messages) {
        const size = 64 + m.snapData.length + m.context.length + m.entries.reduce((n, e) => n + e.data.length + 24, 0);
        let f = open.get(m.to);
        if (!f || (f.bytes > 0 && f.bytes + size > FRAME_TARGET_BYTES)) {
          f = { list: [], bytes: 0 };
          open.set(m.to, f);
          frames.push([m.to, f.list]);
        }
        f.list.push(toWire(m));
        f.bytes += size;
      }
      for (const [to, list] of frames) {
        const p = peers.get(to);
        if (!p) {
          counters.dropped += list.length;
          continue;
        }
        if (!p.open || !p.ws) {
          const frame = pb.Envelope.encode({ messages: list }).finish();
          if (p.pendingBytes + frame.length > PENDING_BYTES) counters.dropped += list.length;
          else {
            p.pending.push(frame);
            p.pendingBytes += frame.length;
            counters.sent += list.length;
          }
          connect(p);
          continue;
        }
        if (p.ws.bufferedAmount > o.maxBufferedBytes) {
          counters.dropped += list.length;
          continue;
        }
        p.ws.send(pb.Envelope.encode({ messages: list }).finish());
        counters.sent += list.length;
      }
    },
    listen(h) {
      handler = h;
      // Dial everyone up front so the first election does not lose its votes.
      for (const p of peers.values()) connect(p);
    },
    addPeer(id, url) {
      if (id === o.id) return;
      const old = peers.get(id);
      if (old?.url === url) return;
      old?.ws?.terminate();
      if (old?.timer) clearTimeout(old.timer);
      peers.set(id, newPeer(id, url));
    },
    removePeer(id) {
      const p = peers.get(id);
      if (p?.timer) clearTimeout(p.timer);
      p?.ws?.terminate();
      peers.delete(id);
    },
    onPeerReachability(fn) {
      reachability.add(fn);
      return () => reachability.delete(fn);
    },
    setSecureContext(tls) {
      dialTls = tls;
      https?.setSecureContext({ ...tls, minVersion: 'TLSv1.2' });
    },
    stats: () => ({ ...counters }),
    async close() {
      if (closed) return;
      closed = true;
      reachability.clear();
      for (const p of peers.values()) {
        if (p.timer) clearTimeout(p.timer);
        p.ws?.terminate();
      }
      for (const ws of incoming) ws.terminate();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (https) {
        https.closeAllConnections();
        await new Promise<void>((resolve) => https.close(() => resolve()));
      }
    },
  };
}

function newPeer(id: number, url: string): Peer {
  return { id, url, ws: undefined, open: false, retryAt: 0, pending: [], pendingBytes: 0, timer: undefined, unreachable: false, redialedAt: 0, quickRedials: 0, auth: undefined };
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
