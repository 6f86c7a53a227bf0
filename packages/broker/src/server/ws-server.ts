/**
 * The WebSocket listener: binary frames only, permessage-deflate off (record
 * batches carry their own compression), `maxPayload` = max.frame.bytes (a
 * larger message closes that connection with 1009). `bufferutil` is picked
 * up by ws for native masking when installed. A browser's upgrade (one with
 * an Origin header) is refused with 403 unless its origin is allowed
 * (ws.allowed.origins, origins.ts); request heads are bounded
 * (http.max.header.bytes, http.max.headers: 431).
 */
import { createServer as createPlainServer, type IncomingMessage, type Server } from 'node:http';
import { createListenerServer, watchCertificates, type TlsSettings } from './tls.js';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { WebSocketServer, type WebSocket } from 'ws';
import { guard, guardedInterval } from '../guard.js';
import type { BrokerContext } from '../context.js';
import type { HandlerMap } from '../handlers/types.js';
import { CLOSE_POLICY_VIOLATION, Connection, type ConnectionLimits } from './connection.js';
import type { ConnectionQuotas } from '../quota/connection-limits.js';
import { refuseBadHead } from './request-head.js';
import { originVerdict, ownHttpOrigins, type OriginList } from './origins.js';
import { inProcessPair, isInProcess, type InProcessSocket } from './in-process-socket.js';

export interface WsServerOptions {
  host: string;
  port: number;
  maxFrameBytes: number;
  limits: ConnectionLimits;
  /** Close connections that sent nothing for this long. */
  idleMs: number;
  /** Destroy a TCP connection that has not completed the WebSocket upgrade within this long (connection.setup.timeout.ms). */
  setupTimeoutMs: number;
  /** Close a connection that sent no complete frame for this long: none since the upgrade, or one begun and not finished (connection.frame.timeout.ms). */
  frameTimeoutMs: number;
  /** Largest request head of the upgrade (http.max.header.bytes) and most header lines (http.max.headers). */
  maxHeaderBytes: number;
  maxHeaders: number;
  /** Browser origins allowed besides the broker's own HTTP origin (ws.allowed.origins); absent: none at all (the inter-broker listener). */
  origins?: OriginList;
  /** Serve wss:// (tls.cert.file, ...); the HTTP API's scheme follows. */
  tls?: TlsSettings | undefined;
  /** ---- quotas: connection counts per IP and principal (max.connections.per.ip, max.connections.per.principal); absent: no limit (the inter-broker listener). */
  connectionQuotas?: ConnectionQuotas;
  /** The inter-broker listener with cluster.secret.file: every connection proves this secret before any other frame (cluster/cluster-auth.ts). */
  clusterSecret?: Uint8Array | undefined;
}

export class WsServer {
  private readonly http: Server;
  /** Parses the upgrades of in-process connections (connectInProcess); never listens. */
  private readonly inProcess: Server;
  private readonly stopReload: () => void;
  private readonly wss: WebSocketServer;
  private readonly connections = new Set<Connection>();
  private nextId = 1;
  private context?: BrokerContext;
  private readonly idleSweep: NodeJS.Timeout;
  /** Sockets that completed the WebSocket upgrade (the others are destroyed after setupTimeoutMs). */
  private readonly upgraded = new WeakSet<Socket>();
  /** The broker's own HTTP origins, known once serving. */
  private ownOrigins: string[] = [];

  constructor(
    private readonly options: WsServerOptions,
    private readonly handlers: HandlerMap,
    private readonly logger: Logger,
  ) {
    this.http = createListenerServer(
      options.tls,
      { maxHeaderSize: options.maxHeaderBytes, ...(options.tls ? { handshakeTimeout: options.setupTimeoutMs } : {}) },
      (_req, res) => {
        res.writeHead(426, { 'content-type': 'text/plain', upgrade: 'websocket' });
        res.end('this port speaks the mq protocol over WebSocket; the HTTP API has its own port\n');
      },
      logger,
      'WebSocket',
    );
    this.stopReload = watchCertificates(this.http, options.tls, logger, 'WebSocket');
    this.wss = new WebSocketServer({
      server: this.http,
      maxPayload: options.maxFrameBytes,
      perMessageDeflate: false,
      clientTracking: false,
      verifyClient: (info, done) => this.verifyUpgrade(info.req, done),
    });
    // Every header is kept (bounded by maxHeaderSize) so verifyUpgrade sees the real count (see http-server.ts).
    this.http.maxHeadersCount = 0;
    this.http.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => refuseBadHead(err, socket, logger));
    this.idleSweep = guardedInterval(
      logger,
      'idle connection sweep',
      () => {
        const now = Date.now();
        for (const c of this.connections) {
          if (!c.closeIfIdle(now, options.idleMs)) c.closeIfStalled(now, options.frameTimeoutMs);
        }
      },
      Math.max(100, Math.min(30_000, Math.floor(Math.min(options.idleMs, options.frameTimeoutMs) / 4))),
    );
    // A socket that never completes the upgrade (silent, or HTTP headers trickling in) is destroyed.
    this.http.on(
      // With TLS the upgrade arrives on the TLS socket, made once the handshake is done (bounded by handshakeTimeout).
      options.tls ? 'secureConnection' : 'connection',
      guard(logger, 'accepting a socket', (socket: Socket) => {
        const timer = setTimeout(() => {
          if (this.upgraded.has(socket) || socket.destroyed) return;
          this.logger.warn({ remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`, setupTimeoutMs: options.setupTimeoutMs }, 'closing a socket that did not complete the WebSocket upgrade in time');
          socket.destroy();
        }, options.setupTimeoutMs);
        timer.unref();
        socket.once('close', () => clearTimeout(timer));
      }),
    );
    this.wss.on('connection', guard(logger, 'accepting a connection', (ws: WebSocket, req: IncomingMessage) => {
      const ctx = this.context;
      if (!ctx) {
        ws.close(1013, 'broker is starting');
        return;
      }
      ctx.metrics.connectionsAccepted++;
      const socket = req.socket as Socket;
      this.upgraded.add(socket);
      socket.setNoDelay(true);
      const quotas = this.options.connectionQuotas;
      const ip = socket.remoteAddress ?? '?';
      // The broker's own in-process clients come from no IP (their principal's connection count still applies).
      if (quotas && !isInProcess(socket)) {
        const refused = quotas.acceptIp(ip);
        if (refused !== undefined) {
          this.logger.warn({ remote: `${ip}:${socket.remotePort ?? '?'}` }, `connection closed: ${refused}`);
          ws.close(CLOSE_POLICY_VIOLATION, refused.slice(0, 120));
          return;
        }
        ws.once('close', () => quotas.releaseIp(ip));
      }
      const conn = new Connection(this.nextId++, ws, socket, ctx, this.handlers, this.options.limits, this.logger, quotas, this.options.clusterSecret);
      this.connections.add(conn);
      ws.once('close', () => this.connections.delete(conn));
      conn.checkPrincipalLimit();
    }));
    // The broker's own clients: an upgrade over an in-process pair joins the listener's WebSocket server (verifyUpgrade included).
    this.inProcess = createPlainServer({ maxHeaderSize: options.maxHeaderBytes });
    this.inProcess.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
      this.wss.handleUpgrade(req, socket, head, (ws) => this.wss.emit('connection', ws, req));
    });
    // Listen errors reject listen(); later server errors are logged.
    this.wss.on('error', (err) => {
      if (this.context) this.logger.error({ err }, 'websocket server error');
    });
  }

  /** Listens; returns the real port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.http.once('error', reject);
      this.http.listen(this.options.port, this.options.host, () => {
        this.http.off('error', reject);
        resolve((this.http.address() as AddressInfo).port);
      });
    });
  }

  /** Starts serving requests with `ctx`. */
  serve(ctx: BrokerContext): void {
    if (this.options.origins) this.ownOrigins = ownHttpOrigins([this.options.host, ctx.advertisedHost], ctx.httpPort, this.options.tls ? 'https' : 'http');
    this.context = ctx;
  }

  /** The upgrade's checks before any connection exists: header count and the browser origin. */
  private verifyUpgrade(req: IncomingMessage, done: (ok: boolean, code?: number, message?: string) => void): void {
    const remote = `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`;
    if (req.rawHeaders.length / 2 > this.options.maxHeaders) {
      this.logger.warn({ remote, headers: req.rawHeaders.length / 2, limit: this.options.maxHeaders }, 'refused a WebSocket upgrade with too many headers (http.max.headers)');
      done(false, 431, 'Request Header Fields Too Large');
      return;
    }
    const origin = req.headers.origin;
    const verdict = this.options.origins ? originVerdict(this.options.origins, this.ownOrigins, origin) : origin === undefined ? 'no-origin' : 'refused';
    if (verdict === 'refused') {
      this.logger.warn({ remote, origin }, this.options.origins ? 'refused a WebSocket upgrade from a browser origin that is not allowed (ws.allowed.origins)' : 'refused a WebSocket upgrade from a browser on the inter-broker port');
      done(false, 403, 'Origin Not Allowed');
      return;
    }
    done(true);
  }

  /**
   * A connection to this listener from inside the process (the broker's own
   * clients): the client's end of an in-process pair whose other end this
   * listener serves as it serves a socket, through the same upgrade checks,
   * Connection and handler map (authentication, authorization, quotas), with
   * no TLS (nothing leaves the process). Write the WebSocket upgrade on it.
   */
  connectInProcess(): InProcessSocket {
    const [client, server] = inProcessPair();
    this.inProcess.emit('connection', server);
    return client;
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Stops accepting, finishes in-flight requests, closes every connection. */
  async close(timeoutMs: number): Promise<void> {
    clearInterval(this.idleSweep);
    this.stopReload();
    const closed = new Promise<void>((resolve) => this.http.close(() => resolve()));
    await Promise.all([...this.connections].map((c) => c.drainAndClose(timeoutMs)));
    this.wss.close();
    this.http.closeAllConnections();
    await closed;
  }
}
