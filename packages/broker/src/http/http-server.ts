/** The HTTP API listener (node:http): routing, JSON bodies with a size limit, typed JSON errors, one log line per refusal. */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import { toMqError } from '../errors.js';
import { guard } from '../guard.js';
import { errorBody, httpStatusFor, type HttpRequest, type HttpResponse, type Method, type Router } from './router.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  maxBodyBytes: number;
  /** Destroy a connection whose request headers are not complete within this long (connection.setup.timeout.ms). */
  headersTimeoutMs: number;
  /** Destroy a connection whose whole request (headers and body) is not received within this long (connection.frame.timeout.ms). */
  requestTimeoutMs: number;
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
  private ready = false;
  private readonly closing = new AbortController();
  private readonly firstRequest = new WeakMap<Socket, () => void>();

  constructor(
    private readonly options: HttpServerOptions,
    private readonly router: Router,
    private readonly logger: Logger,
  ) {
    // handle() answers its own errors; what escapes it (a failed write) is logged, never an unhandled rejection.
    // Slow and silent connections (slowloris) are bounded as on the WebSocket port: headers within
    // the setup timeout, the whole request within the frame timeout, checked often enough to matter.
    const { headersTimeoutMs, requestTimeoutMs } = options;
    this.server = createServer(
      {
        headersTimeout: headersTimeoutMs,
        requestTimeout: Math.max(requestTimeoutMs, headersTimeoutMs),
        connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersTimeoutMs / 4))),
      },
      guard(logger, 'http request', (req: IncomingMessage, res: ServerResponse) => this.handle(req, res)),
    );
    this.server.keepAliveTimeout = 5000;
    // node:http times headers from their first byte: a socket that sends nothing gets the same bound.
    this.server.on('connection', (socket: Socket) => {
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
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Requests are answered 503 until the broker is ready. */
  setReady(ready: boolean): void {
    this.ready = ready;
  }

  async close(): Promise<void> {
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
      const match = this.router.match(method, path);
      if (match.kind === 'not-found') {
        response = { status: 404, body: errorBody(new MqError('INVALID_REQUEST', `no route ${method} ${path} (see /openapi.json)`)) };
      } else if (match.kind === 'method-not-allowed') {
        response = {
          status: 405,
          body: errorBody(new MqError('INVALID_REQUEST', `${method} is not allowed on ${path} (allowed: ${match.allowed.join(', ')})`)),
        };
        res.setHeader('allow', match.allowed.join(', '));
      } else {
        let bodyPromise: Promise<unknown> | undefined;
        const gone = new AbortController();
        res.once('close', () => {
          if (!res.writableFinished) gone.abort(new MqError('CONNECTION_CLOSED', 'the HTTP client went away'));
        });
        const request: HttpRequest = {
          signal: AbortSignal.any([gone.signal, this.closing.signal]),
          method: method as Method,
          path,
          params: match.params,
          query: url.searchParams,
          raw: req,
          json: () =>
            (bodyPromise ??= readBody(req, this.options.maxBodyBytes).then((buf) => {
              if (buf.length === 0) throw new MqError('INVALID_REQUEST', 'the request needs a JSON body');
              try {
                return JSON.parse(buf.toString('utf8')) as unknown;
              } catch (err) {
                throw new MqError('INVALID_REQUEST', `the body is not valid JSON: ${(err as Error).message}`);
              }
            })),
        };
        response = await match.handler(request);
      }
    } catch (err) {
      const e = toMqError(err);
      const status = httpStatusFor(e.code, e.retriable);
      if (status >= 500 && e.code === 'UNKNOWN') this.logger.error({ err, method, path }, 'http request failed');
      else this.logger.warn({ method, path, status, code: e.code, err: e.message }, 'http request refused');
      response = { status, body: errorBody(e) };
      if (status === 413) res.setHeader('connection', 'close');
    }
    this.write(res, response);
  }

  private write(res: ServerResponse, r: HttpResponse): void {
    if (r.status === 204) {
      res.writeHead(204).end();
      return;
    }
    const payload = r.text ?? JSON.stringify(r.body ?? null);
    res.writeHead(r.status, {
      'content-type': r.contentType ?? (r.text !== undefined ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8'),
      'content-length': Buffer.byteLength(payload),
    });
    res.end(payload);
  }
}
