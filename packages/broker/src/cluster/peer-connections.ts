/**
 * Connections from this broker to the others (follower fetches,
 * OffsetForLeaderEpoch, controller forwarding), over the same WebSocket
 * protocol clients use, with @mq/client's Connection. One pooled
 * connection per broker, reopened after a failure. A peer's address comes
 * from its registration in the metadata, unless `cluster.peer.addresses`
 * overrides it (the fault-injection tests route links through a proxy).
 */
import type { RequestBody } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { Connection, type ConnectFn, type RequestPayload, type ResponseOf } from '@mq/client/internal';
import type { TlsOptions } from '@mq/client';
import { clusterAuthConnect, type ClusterAuthDial } from './cluster-auth.js';

export interface PeerConnectionsOptions {
  brokerId: number;
  /** id → host:port overrides. */
  overrides: ReadonlyMap<number, string>;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxResponseBytes: number;
  /** Opens a connection's socket (default: a WebSocket to the peer). */
  connect?: ConnectFn;
  /** Prove the cluster secret on every connection, and check that the broker dialled proves it too (cluster.secret.file). */
  clusterAuth?: ClusterAuthDial | undefined;
  /** TLS of each new connection (inter.broker.tls.enabled): this broker's certificate, the CA that signs the peers'. */
  dialTls?: (() => TlsOptions) | undefined;
}

/** Parses `2@127.0.0.1:7002,3@127.0.0.1:7003`. */
export function parsePeerAddresses(text: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const part of text.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(\d+)@(.+:\d+)$/.exec(part);
    if (!m) throw new MqError('INVALID_CONFIG', `cluster.peer.addresses: "${part}" is not id@host:port`);
    out.set(Number(m[1]), m[2]!);
  }
  return out;
}

export class PeerConnections {
  private readonly pool = new Map<number, Promise<Connection>>();
  private closed = false;

  constructor(
    private readonly options: PeerConnectionsOptions,
    private readonly addressOf: (id: number) => string | undefined,
  ) {}

  private connection(id: number, signal?: AbortSignal): Promise<Connection> {
    if (this.closed) return Promise.reject(new MqError('CLOSED', 'the broker is shutting down'));
    const cached = this.pool.get(id);
    if (cached) return cached;
    const address = this.options.overrides.get(id) ?? this.addressOf(id);
    if (!address) return Promise.reject(new MqError('BROKER_NOT_AVAILABLE', `broker ${id} is not registered in the cluster metadata`));
    const p = Connection.open(
      {
        address,
        clientId: `broker-${this.options.brokerId}`,
        connectTimeoutMs: this.options.connectTimeoutMs,
        requestTimeoutMs: this.options.requestTimeoutMs,
        maxResponseBytes: this.options.maxResponseBytes,
        ...(this.options.dialTls ? { tls: this.options.dialTls() } : {}),
      },
      signal,
      this.options.clusterAuth ? clusterAuthConnect(this.options.clusterAuth, this.options.connect, id) : this.options.connect,
    ).then(
      (conn) => {
        if (this.closed) {
          conn.close();
          throw new MqError('CLOSED', 'the broker is shutting down');
        }
        conn.onClose(() => {
          if (this.pool.get(id) === p) this.pool.delete(id);
        });
        return conn;
      },
      (err: unknown) => {
        if (this.pool.get(id) === p) this.pool.delete(id);
        throw err;
      },
    );
    this.pool.set(id, p);
    return p;
  }

  async request<B extends RequestBody>(
    id: number,
    body: B,
    payload: RequestPayload<B>,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<ResponseOf<B>> {
    const conn = await this.connection(id, options.signal);
    try {
      return await conn.request(body, payload, options);
    } catch (err) {
      // A timed-out request may leave the socket wedged (a paused peer), a failed write one that is closing: start over next time.
      const code = (err as MqError).code;
      if (code === 'REQUEST_TIMED_OUT' || code === 'CONNECTION_ERROR' || code === 'CONNECTION_CLOSED') {
        if (this.pool.get(id) !== undefined) this.pool.delete(id);
        conn.close();
      }
      throw err;
    }
  }

  /** Drops the pooled connection to `id` (its address changed). */
  forget(id: number): void {
    const p = this.pool.get(id);
    this.pool.delete(id);
    void p?.then((c) => c.close(), () => undefined);
  }

  close(): void {
    this.closed = true;
    for (const p of this.pool.values()) void p.then((c) => c.close(), () => undefined);
    this.pool.clear();
  }
}
