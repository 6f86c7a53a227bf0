/**
 * The HTTP API listener (node:http): routing, JSON bodies with a size limit,
 * each request checked by its route's validator (request-validator.ts) after
 * authentication and before its handler, typed JSON errors, one log line
 * per refusal. Browser hygiene before any
 * route runs: CORS for allowed origins (http.cors.allowed.origins, own
 * origin included) with answered preflights; a POST/PUT/PATCH/DELETE from
 * another origin is refused (403), and one with a body that is not
 * `application/json` too (415), so a page's no-cors form post does nothing;
 * request heads are bounded (http.max.header.bytes, http.max.headers: 431).
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createListenerServer, watchCertificates, type TlsSettings } from '../server/tls.js';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { toMqError } from '../errors.js';
import { guard } from '../guard.js';
import { originVerdict, ownHttpOrigins, type OriginList } from '../server/origins.js';
import { refuseBadHead } from '../server/request-head.js';
import { httpSessions } from '../security/http-auth.js';
import type { Session } from '../security/session.js';
import { isDocumented } from './route-spec.js';
import { errorBody, httpStatusFor, type HttpRequest, type HttpResponse, type Method, type Router } from './router.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Destroy a connection whose request headers are not complete within this long (connection.setup.timeout.ms). */
  headersTimeoutMs: number;
  /** Destroy a connection whose whole request (headers and body) is not received within this long (connection.frame.timeout.ms). */
  requestTimeoutMs: number;
  /** Largest request head (http.max.header.bytes) and most header lines (http.max.headers). */
  maxHeaderBytes: number;
  maxHeaders: number;
  /** Browser origins allowed besides the broker's own (http.cors.allowed.origins). */
  corsOrigins: OriginList;
  /** The host clients are told (advertised.host); its origin is the broker's own too. */
  advertisedHost: string;
  /** Authenticates and authorizes each routed request (security/http-auth.ts); its session is kept for the request's handler. */
  /** Serve HTTPS (tls.cert.file, ...). */
  tls?: TlsSettings | undefined;
  guard?: { check(req: IncomingMessage, method: string, pattern: string, params: Readonly<Record<string, string>>): Promise<Session | undefined> };
}

/** Methods a cross-origin page may not use without an allowed origin (they change things). */
const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A refusal with its own HTTP status (403, 415, 431) rather than the one its error code maps to. */
class Refusal extends Error {
  constructor(
    readonly status: number,
    readonly error: MqError,
  ) {
    super(error.message);
  }
}

function isJsonContentType(value: string | undefined): boolean {
  return value !== undefined && /^application\/json\s*(;|$)/i.test(value.trim());
}

function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? '0') > 0;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new MqError('MESSAGE_TOO_LARGE', `request body of ${declared} bytes is over the limit of ${limit} (http.max.body.bytes)`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(new MqError('MESSAGE_TOO_LARGE', `request body is over the limit of ${limit} bytes (http.max.body.bytes)`));
        return;
      }
      chunks.push(c);
    });
    req.once('end', () => resolve(Buffer.concat(chunks, size)));
    req.once('error', reject);
  });
}

export class HttpServer {
  private readonly server: Server;
  private readonly stopReload: () => void;
  private ready = false;
  private readonly closing = new AbortController();
  private readonly firstRequest = new WeakMap<Socket, () => void>();
  /** The broker's own HTTP origins, known once listening. */
  private ownOrigins: string[] = [];

  constructor(
    private readonly options: HttpServerOptions,
    private readonly router: Router,
    private readonly logger: Logger,
  ) {
    // handle() answers its own errors; what escapes it (a failed write) is logged, never an unhandled rejection.
    // Slow and silent connections (slowloris) are bounded as on the WebSocket port: headers within
    // the setup timeout, the whole request within the frame timeout, checked often enough to matter.
    const { headersTimeoutMs, requestTimeoutMs } = options;
    this.server = createListenerServer(
      options.tls,
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
        maxHeaderSize: options.maxHeaderBytes,
        ...(options.tls ? { handshakeTimeout: headersTimeoutMs } : {}),
      },
      guard(logger, 'http request', (req: IncomingMessage, res: ServerResponse) => this.handle(req, res)),
      logger,
      'HTTP API',
    );
    this.stopReload = watchCertificates(this.server, options.tls, logger, 'HTTP API');
    this.server.keepAliveTimeout = 5000;
    // node:http would drop headers past maxHeadersCount silently (the Host header too: a bare 400): every header
    // is kept, bounded by maxHeaderSize, and a request with more than maxHeaders is refused in checkHead.
    this.server.maxHeadersCount = 0;
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => refuseBadHead(err, socket, logger));
    // node:http times headers from their first byte: a socket that sends nothing gets the same bound
    // (with TLS, from the end of the handshake: requests arrive on the TLS socket).
    this.server.on(options.tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      const silent = setTimeout(() => socket.destroy(), headersTimeoutMs);
      silent.unref();
      const done = () => clearTimeout(silent);
      socket.once('close', done);
      this.firstRequest.set(socket, done);
    });
    this.server.on('request', (req: IncomingMessage) => {
      this.firstRequest.get(req.socket)?.();
      this.firstRequest.delete(req.socket);
    });
  }

  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', reject);
        const port = (this.server.address() as AddressInfo).port;
        this.ownOrigins = ownHttpOrigins([this.options.host, this.options.advertisedHost], port, this.options.tls ? 'https' : 'http');
        resolve(port);
      });
    });
  }

  /** Requests are answered 503 until the broker is ready. */
  setReady(ready: boolean): void {
    this.ready = ready;
  }

  async close(): Promise<void> {
    this.stopReload();
    this.ready = false;
    this.closing.abort(new MqError('BROKER_NOT_AVAILABLE', 'the broker is shutting down'));
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    const timer = setTimeout(() => this.server.closeAllConnections(), 5000);
    await closed;
    clearTimeout(timer);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = (req.method ?? 'GET').toUpperCase();
    let path = '/';
    let response: HttpResponse;
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      path = url.pathname;
      if (!this.ready) throw new MqError('BROKER_NOT_AVAILABLE', 'the broker is not serving requests (starting or shutting down)');
      this.checkHead(req, method, res);
      const match = this.router.match(method, path);
      if (method === 'OPTIONS') {
        response = this.answerOptions(req, path, match.kind === 'method-not-allowed' ? match.allowed : undefined, res);
      } else if (match.kind === 'not-found') {
        response = { status: 404, body: errorBody(new MqError('INVALID_REQUEST', `no route ${method} ${path} (see /openapi.json)`)) };
      } else if (match.kind === 'method-not-allowed') {
        response = {
          status: 405,
          body: errorBody(new MqError('INVALID_REQUEST', `${method} is not allowed on ${path} (allowed: ${match.allowed.join(', ')})`)),
        };
        res.setHeader('allow', match.allowed.join(', '));
      } else {
        const { route, params } = match;
        const gone = new AbortController();
        res.once('close', () => {
          if (!res.writableFinished) gone.abort(new MqError('CONNECTION_CLOSED', 'the HTTP client went away'));
        });
        // Who may call it first, then the body (only for a route that declares one) and the one validation.
        const session = await this.options.guard?.check(req, method, route.pattern, params);
        const body = isDocumented(route.spec) && route.spec.body && hasBody(req) ? await this.readJson(req) : undefined;
        const request: HttpRequest = {
          signal: AbortSignal.any([gone.signal, this.closing.signal]),
          method: method as Method,
          path,
          params,
          query: url.searchParams,
          raw: req,
          input: route.validate ? route.validate({ params, query: url.searchParams, body }) : { params, query: {}, body: undefined },
        };
        response = session ? await httpSessions.run(session, () => route.handler(request)) : await route.handler(request);
      }
    } catch (err) {
      const e = err instanceof Refusal ? err.error : toMqError(err);
      const status = err instanceof Refusal ? err.status : httpStatusFor(e.code, e.retriable);
      if (status === 401) res.setHeader('www-authenticate', 'Basic realm="mq", charset="UTF-8"');
      if (status >= 500 && e.code === 'UNKNOWN') this.logger.error({ err, method, path }, 'http request failed');
      else if (e.audited) {
        // Its audit line (security/) is its one log line.
      } else this.logger.warn({ method, path, status, code: e.code, err: e.message }, 'http request refused');
      response = { status, body: errorBody(e) };
      // The body was not read: the connection is not reused.
      if (status === 413 || err instanceof Refusal) res.setHeader('connection', 'close');
    }
    this.write(res, response);
  }

  /** The JSON body: undefined when empty, INVALID_REQUEST when not JSON, MESSAGE_TOO_LARGE over http.max.body.bytes. */
  private async readJson(req: IncomingMessage): Promise<unknown> {
    const buf = await readBody(req, this.options.maxBodyBytes);
    if (buf.length === 0) return undefined;
    try {
      return JSON.parse(buf.toString('utf8')) as unknown;
    } catch (err) {
      throw new MqError('INVALID_REQUEST', `the body is not valid JSON: ${(err as Error).message}`);
    }
  }

  /**
   * Before routing: the header count, the browser origin (CORS headers for an
   * allowed one; an unsafe method from another is refused) and the body's
   * content type (a body of a POST/PUT/PATCH/DELETE must be JSON).
   */
  private checkHead(req: IncomingMessage, method: string, res: ServerResponse): void {
    const headers = req.rawHeaders.length / 2;
    if (headers > this.options.maxHeaders) {
      throw new Refusal(431, new MqError('INVALID_REQUEST', `the request has more than ${this.options.maxHeaders} headers (http.max.headers)`));
    }
    const origin = req.headers.origin;
    const verdict = originVerdict(this.options.corsOrigins, this.ownOrigins, origin);
    if (origin !== undefined) res.setHeader('vary', 'origin');
    if (verdict === 'allowed') res.setHeader('access-control-allow-origin', origin as string);
    if (verdict === 'refused' && (UNSAFE.has(method) || method === 'OPTIONS')) {
      throw new Refusal(403, new MqError('INVALID_REQUEST', `origin ${String(origin)} may not call this API from a browser (allowed: the broker's own origin and http.cors.allowed.origins)`));
    }
    if (UNSAFE.has(method) && hasBody(req) && !isJsonContentType(req.headers['content-type'])) {
      throw new Refusal(415, new MqError('INVALID_REQUEST', `a ${method} body must be JSON with content-type: application/json (got ${req.headers['content-type'] ?? 'none'})`));
    }
  }

  /** OPTIONS: the path's methods; for a browser's preflight from an allowed origin, what it may send. */
  private answerOptions(req: IncomingMessage, path: string, allowed: readonly string[] | undefined, res: ServerResponse): HttpResponse {
    if (allowed === undefined || allowed.length === 0) {
      return { status: 404, body: errorBody(new MqError('INVALID_REQUEST', `no route ${path} (see /openapi.json)`)) };
    }
    const methods = [...new Set(allowed)].join(', ');
    res.setHeader('allow', `${methods}, OPTIONS`);
    if (req.headers.origin !== undefined) {
      res.setHeader('access-control-allow-methods', methods);
      res.setHeader('access-control-allow-headers', 'content-type');
      res.setHeader('access-control-max-age', '600');
    }
    return { status: 204 };
  }

  private write(res: ServerResponse, r: HttpResponse): void {
    if (r.status === 204) {
      res.writeHead(204).end();
      return;
    }
    const payload = r.text ?? JSON.stringify(r.body ?? null);
    res.writeHead(r.status, {
      ...r.headers,
      'content-type': r.contentType ?? (r.text !== undefined ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8'),
      'content-length': Buffer.byteLength(payload),
    });
    res.end(payload);
  }
}
