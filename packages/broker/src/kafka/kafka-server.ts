/**
 * The Kafka listener: a TCP server speaking Kafka's wire protocol on its own
 * port (kafka.listener.port), in front of the same core handlers as the
 * WebSocket listener (the client listener's: no ControllerForward, no
 * replica fetches). It holds no broker logic: each connection decodes,
 * calls an adapter (kafka/apis/) and encodes.
 */
import type { AddressInfo, Server, Socket } from 'node:net';
import { createSocketServer, watchCertificates, type TlsSettings } from '../server/tls.js';
import type { Logger } from 'pino';
import type { BrokerContext } from '../context.js';
import { guard, guardedInterval } from '../guard.js';
import type { HandlerMap } from '../handlers/types.js';
import { servedKafkaApis } from './apis/index.js';
import { KafkaConnection, type KafkaConnectionLimits } from './kafka-connection.js';
import type { AnyKafkaApi, KafkaEndpoint, KafkaSaslView } from './types.js';
import type { ConnectionQuotas } from '../quota/connection-limits.js';

export interface KafkaServerOptions {
  host: string;
  port: number;
  idleMs: number;
  /** A connection with no complete frame for this long (none yet, or one begun) is closed. */
  frameTimeoutMs: number;
  limits: KafkaConnectionLimits;
  /** Serve Kafka over TLS (tls.cert.file, ...): Kafka's SSL security protocol; a verified client certificate names the principal. */
  tls?: TlsSettings | undefined;
  /** ---- quotas: connection counts per IP and principal, shared with the WebSocket port (max.connections.per.ip, ...). */
  connectionQuotas?: ConnectionQuotas;
  /** SASL (SaslHandshake/SaslAuthenticate): the mechanisms offered and whether a connection must log in first. */
  sasl: KafkaSaslView;
}

export class KafkaServer {
  private readonly server: Server;
  private readonly connections = new Set<KafkaConnection>();
  private readonly apis: Map<number, AnyKafkaApi>;
  private readonly apiVersions: Array<{ apiKey: number; minVersion: number; maxVersion: number }>;
  private context: BrokerContext | undefined;
  private nextId = 1;
  private readonly idleSweep: NodeJS.Timeout;
  private readonly stopReload: () => void;

  constructor(
    private readonly options: KafkaServerOptions,
    private readonly core: HandlerMap,
    private readonly endpoint: (brokerId: number) => KafkaEndpoint | undefined,
    private readonly logger: Logger,
  ) {
    this.apis = servedKafkaApis(core);
    this.apiVersions = [...this.apis.values()].map((a) => ({ apiKey: a.api.key, minVersion: a.api.minVersion, maxVersion: a.api.maxVersion })).sort((a, b) => a.apiKey - b.apiKey);
    this.server = createSocketServer(options.tls, guard(logger, 'accepting a kafka connection', (socket: Socket) => this.accept(socket)), logger, 'Kafka', options.frameTimeoutMs);
    this.stopReload = watchCertificates(this.server, options.tls, logger, 'Kafka');
    this.server.on('error', (err) => {
      if (this.context) this.logger.error({ err }, 'kafka listener error');
    });
    this.idleSweep = guardedInterval(
      logger,
      'kafka idle connection sweep',
      () => {
        const now = Date.now();
        for (const c of this.connections) if (!c.closeIfIdle(now, options.idleMs)) c.closeIfStalled(now, options.frameTimeoutMs);
      },
      Math.max(100, Math.min(30_000, Math.floor(Math.min(options.idleMs, options.frameTimeoutMs) / 4))),
    );
  }

  /** The API keys and versions this listener advertises in ApiVersions. */
  get advertised(): ReadonlyArray<{ apiKey: number; minVersion: number; maxVersion: number }> {
    return this.apiVersions;
  }

  private accept(socket: Socket): void {
    const ctx = this.context;
    if (!ctx) {
      socket.destroy();
      return;
    }
    ctx.metrics.connectionsAccepted++;
    const quotas = this.options.connectionQuotas;
    if (quotas) {
      const ip = socket.remoteAddress ?? '?';
      const refused = quotas.acceptIp(ip);
      if (refused !== undefined) {
        this.logger.warn({ remote: `${ip}:${socket.remotePort ?? '?'}` }, `kafka connection closed: ${refused}`);
        socket.destroy();
        return;
      }
      socket.once('close', () => quotas.releaseIp(ip));
    }
    const conn = new KafkaConnection(this.nextId++, socket, {
      broker: ctx,
      core: this.core,
      apis: this.apis,
      door: { endpoint: this.endpoint, apiVersions: this.apiVersions, sasl: this.options.sasl },
      limits: this.options.limits,
      logger: this.logger,
      ...(quotas ? { connectionQuotas: quotas } : {}),
    });
    this.connections.add(conn);
    socket.once('close', () => this.connections.delete(conn));
    conn.checkPrincipalLimit();
  }

  /** Listens; returns the real port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Starts serving requests with `ctx` (connections before this are refused). */
  serve(ctx: BrokerContext): void {
    this.context = ctx;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Stops accepting, finishes in-flight requests, closes every connection. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.idleSweep);
    this.stopReload();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.connections].map((c) => c.drainAndClose(timeoutMs)));
    for (const c of this.connections) c.closeIfIdle(Number.MAX_SAFE_INTEGER, 0);
    await closed;
  }
}
