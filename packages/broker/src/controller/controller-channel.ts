/**
 * How a broker-only process reaches the active controller: WebSocket
 * connections to the controllers listed in `controller.quorum.bootstrap.servers`
 * (their client ports). The handshake tells which controller id answers at
 * each address; a voter that is not the active controller answers
 * NOT_CONTROLLER with the active one's id, and the next request goes there.
 * With no hint, the addresses are tried in turn: the bootstrap servers and
 * every controller registered in the metadata (`registered`), so a broker
 * still reaches the quorum once controllers added later have replaced all
 * the ones it was started with.
 */
import { MqError, errorCodeFromNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { Connection } from '@mq/client/internal';
import type { TlsOptions } from '@mq/client';
import { clusterAuthConnect, type ClusterAuthDial } from '../cluster/cluster-auth.js';
import { encodeCommand, type CommandResult, type MetadataCommand } from './commands.js';

export interface ControllerChannelOptions {
  brokerId: number;
  /** host:port of the controllers' client ports. */
  servers: readonly string[];
  connectTimeoutMs: number;
  maxResponseBytes: number;
  /** Prove the cluster secret on every connection and check the controller's proof (cluster.secret.file). */
  clusterAuth?: ClusterAuthDial | undefined;
  /** TLS of each new connection (inter.broker.tls.enabled). */
  dialTls?: (() => TlsOptions) | undefined;
  /** The controllers' inter-broker listeners as the metadata records them (registerController), read at each choice. */
  registered?: (() => readonly { id: number; host: string; port: number }[]) | undefined;
}

/** Opens a connection to `address` (injected in tests). */
export type ConnectFn = (address: string, signal?: AbortSignal) => Promise<ChannelConnection>;

export interface ChannelConnection {
  readonly brokerId: number;
  readonly closed: boolean;
  request(payload: mq.IControllerForwardRequest, timeoutMs: number, signal?: AbortSignal): Promise<mq.IControllerForwardResponse>;
  close(): void;
}

export function wsConnect(o: ControllerChannelOptions): ConnectFn {
  return async (address, signal) => {
    const conn = await Connection.open(
      { address, clientId: `broker-${o.brokerId}`, connectTimeoutMs: o.connectTimeoutMs, requestTimeoutMs: 30_000, maxResponseBytes: o.maxResponseBytes, ...(o.dialTls ? { tls: o.dialTls() } : {}) },
      signal,
      o.clusterAuth ? clusterAuthConnect(o.clusterAuth) : undefined,
    );
    return {
      get brokerId() {
        return conn.brokerId;
      },
      get closed() {
        return conn.closed;
      },
      request: (payload, timeoutMs, sig) => conn.request('controllerForward', payload as never, { timeoutMs, ...(sig ? { signal: sig } : {}) }) as Promise<mq.IControllerForwardResponse>,
      close: () => conn.close(),
    };
  };
}

export class ControllerChannel {
  private readonly conns = new Map<string, Promise<ChannelConnection>>();
  private readonly addressOf = new Map<number, string>();
  /** The active controller as last told (-1: unknown). */
  private hint = -1;
  private next = 0;
  private closed = false;

  constructor(
    private readonly options: ControllerChannelOptions,
    private readonly connect: ConnectFn = wsConnect(options),
  ) {
    if (options.servers.length === 0) throw new MqError('INVALID_CONFIG', 'controller.quorum.bootstrap.servers is empty');
  }

  /** The active controller's id as this channel last learned it, -1 when unknown. */
  get controllerHint(): number {
    return this.hint;
  }

  private target(): string {
    const registered = this.options.registered?.() ?? [];
    if (this.hint > 0) {
      const r = registered.find((c) => c.id === this.hint);
      const known = this.addressOf.get(this.hint) ?? (r ? `${r.host}:${r.port}` : undefined);
      if (known) return known;
    }
    const all = [...new Set([...this.options.servers, ...registered.map((c) => `${c.host}:${c.port}`)])];
    const s = all[this.next % all.length]!;
    this.next++;
    return s;
  }

  private connection(address: string, signal?: AbortSignal): Promise<ChannelConnection> {
    const cached = this.conns.get(address);
    if (cached) return cached;
    const p = this.connect(address, signal).then(
      (c) => {
        if (this.closed) {
          c.close();
          throw new MqError('CLOSED', 'the broker is shutting down');
        }
        if (c.brokerId > 0) this.addressOf.set(c.brokerId, address);
        return c;
      },
      (err: unknown) => {
        this.conns.delete(address);
        throw err;
      },
    );
    this.conns.set(address, p);
    return p;
  }

  private drop(address: string): void {
    const p = this.conns.get(address);
    this.conns.delete(address);
    void p?.then((c) => c.close(), () => undefined);
    if (this.hint > 0 && this.addressOf.get(this.hint) === address) this.hint = -1;
  }

  /**
   * Sends one ControllerForward request to the controller believed active.
   * NOT_CONTROLLER answers are returned (with the hint updated) for the
   * caller's retry loop; connection failures throw a retriable MqError.
   */
  async request(payload: mq.IControllerForwardRequest, timeoutMs: number, signal?: AbortSignal): Promise<mq.IControllerForwardResponse> {
    if (this.closed) throw new MqError('CLOSED', 'the broker is shutting down');
    const address = this.target();
    let conn: ChannelConnection;
    try {
      conn = await this.connection(address, signal);
      if (conn.closed) {
        this.drop(address);
        conn = await this.connection(address, signal);
      }
    } catch (err) {
      this.drop(address);
      // A controller that does not prove the cluster secret (or refuses this one's) keeps its code: it is a configuration error, not a network one.
      const code = (err as MqError).code === 'CLUSTER_AUTHENTICATION_FAILED' ? 'CLUSTER_AUTHENTICATION_FAILED' : 'CONNECTION_ERROR';
      throw new MqError(code, `cannot reach controller at ${address}: ${(err as Error).message}`, { cause: err });
    }
    let r: mq.IControllerForwardResponse;
    try {
      r = await conn.request(payload, timeoutMs, signal);
    } catch (err) {
      const code = (err as MqError).code;
      if (code === 'REQUEST_TIMED_OUT' || code === 'CONNECTION_ERROR' || code === 'CONNECTION_CLOSED' || code === 'UNSUPPORTED_VERSION') this.drop(address);
      throw err;
    }
    const code = r.errorCode ? errorCodeFromNumber(r.errorCode) : 'NONE';
    if (code === 'NOT_CONTROLLER') {
      const id = r.controllerId ?? -1;
      // Told where to go: go there next (or try the next address when this one does not know either).
      this.hint = id > 0 && id !== conn.brokerId ? id : -1;
    } else if (conn.brokerId > 0) {
      this.hint = conn.brokerId; // it answered as the active controller
    }
    return r;
  }

  /** Sends one metadata command to the controller believed active (one attempt: the caller retries) and answers its result. */
  async forward(brokerId: number, command: MetadataCommand, timeoutMs: number): Promise<CommandResult> {
    return commandResultOf(await this.request({ brokerId, command: encodeCommand(command), timeoutMs }, timeoutMs + 2000));
  }

  close(): void {
    this.closed = true;
    for (const p of this.conns.values()) void p.then((c) => c.close(), () => undefined);
    this.conns.clear();
  }
}

/** A ControllerForward answer as the command's result: its JSON value, or the refusal's code and message. */
export function commandResultOf(r: mq.IControllerForwardResponse): CommandResult {
  if (!r.errorCode) return { ok: true, value: r.result && r.result.length > 0 ? JSON.parse(Buffer.from(r.result).toString('utf8')) : undefined };
  return { ok: false, code: errorCodeFromNumber(r.errorCode), message: r.errorMessage || 'refused by the controller' };
}
