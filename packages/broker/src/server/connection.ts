/**
 * One client connection: decodes frames, runs handlers (many in flight,
 * answered by correlation id, possibly out of order), and applies
 * backpressure both ways: at most `maxInFlight` requests run at once, and
 * when the unsent response bytes exceed `maxBufferedBytes` the broker stops
 * reading from the socket until it drains. Nothing here grows without bound.
 */
import { ReadThrottle } from '../quota/read-throttle.js';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import type WebSocket from 'ws';
import { MqError, errorNumber, isMqError } from '@mq/protocol/errors';
import { encodeSlicedResponse } from './sliced-response.js';
import { BODY_API, decodeRequest, encodeResponse, type mq, type RequestBody, type ResponseFrame } from '@mq/protocol/wire';
import type { BrokerContext, ConnectionInfo, RequestContext } from '../context.js';
import { toMqError } from '../errors.js';
import { newSession } from '../security/session.js';
import { isTlsSocket, tlsPrincipal } from './tls.js';
import { guard } from '../guard.js';
import { Slicer } from '../slicer.js';
import { clientIdProblem } from '../request-limits.js';
import { limitRequestEntries, REQUEST_VALUES_PER_ENTRY } from './request-entries.js';
import { NO_RESPONSE, type Handler, type HandlerMap } from '../handlers/types.js';
import { releaseFetchRecords } from '../handlers/fetch.js';
import { encodeFetchResponseFrame, wsBinaryFrameHeader } from './fetch-frame.js';
import type { ConnectionQuotas } from '../quota/connection-limits.js';
import { ClusterAuthListener } from '@mq/protocol/cluster-auth';

/** The parts of ws's Sender that tell whether it holds frames back (compression or Blob reads in progress). */
interface WsSenderState {
  _state?: number;
  _queue?: unknown[];
}

/** The parts of ws's Receiver that tell whether a frame has begun and not ended (state 0: waiting for a new frame). */
interface WsReceiverState {
  _state?: number;
  _bufferedBytes?: number;
  _fragments?: unknown[];
  /** ws's `allowSynchronousEvents`: false makes the receiver emit the next message from a setImmediate (then it reads on). */
  _allowSynchronousEvents?: boolean;
}

/** How long a connection closed for sending no complete frame has to read the close frame before its socket is destroyed. */
const STALLED_CLOSE_GRACE_MS = 1000;

export interface ConnectionLimits {
  /** Requests processed at once. */
  maxInFlight: number;
  /** Fetches processed at once (each may build a response of up to fetch.max.bytes). */
  maxFetchesInFlight: number;
  /** Unsent response bytes above which no further request is started or read. */
  maxBufferedBytes: number;
  /** Most entries (topics, partitions, groups) one request may name, after its repeats are merged. */
  maxRequestEntries: number;
  /** Longest step of frame intake (decoding and starting requests) before the connection yields to the event loop; default SLICE_MS. */
  sliceMs?: number;
}

/** WebSocket close codes used by the broker. */
export const CLOSE_UNSUPPORTED_DATA = 1003;
export const CLOSE_INVALID_PAYLOAD = 1007;
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_POLICY_VIOLATION = 1008;

export class Connection {
  readonly info: ConnectionInfo;
  private readonly abort = new AbortController();
  private inFlight = 0;
  private fetchesInFlight = 0;
  /**
   * Decoded frames waiting for a slot, in arrival order (bounded: reading is
   * paused while anything waits, so only what ws had already buffered lands here).
   */
  private readonly queue: mq.RequestFrame[] = [];
  private pausedForBuffer = false;
  private draining = false;
  /**
   * Frame intake in slices (issue 22): one socket read can carry thousands of
   * frames, which ws emits one after another in one step. Once a slice has
   * run, the receiver emits its next frame from a setImmediate and queued
   * frames are started from one (reading stays paused while any wait).
   */
  private readonly slicer: Slicer;
  private intakeDeferred = false;
  /** Queued frames are started from the next turn of the event loop (reading stays paused while they wait). */
  private readonly pumpLater: () => void;
  private idleWaiters: Array<() => void> = [];
  private readonly versions: Map<string, { min: number; max: number }>;
  /** When the connection was accepted or its last complete frame arrived (for the idle and stalled sweeps). */
  lastActivity: number;
  private framesReceived = 0;
  // ---- quotas: reading paused until a throttle time given in an answer has passed (KIP-219), and the principal counted against its connection limit
  private readonly readThrottle = new ReadThrottle({ pause: () => this.updateReading(), resume: () => this.pump() });
  private countedPrincipal: string | undefined;
  /**
   * The inter-broker listener with a cluster secret: the exchange that must
   * come before any other frame (cluster-auth); undefined once it succeeded,
   * or when none is required.
   */
  private clusterAuth: ClusterAuthListener | undefined;
  /** The exchange failed (or timed out): its one log line is written, the connection is closing. */
  private refusedAuth = false;
  private readonly acceptedAt: number;

  constructor(
    readonly id: number,
    private readonly ws: WebSocket,
    private readonly socket: Socket,
    private readonly broker: BrokerContext,
    private readonly handlers: HandlerMap,
    private readonly limits: ConnectionLimits,
    private readonly logger: Logger,
    private readonly connectionQuotas?: ConnectionQuotas,
    /** The cluster secret every peer must prove first (the inter-broker listener with cluster.secret.file). */
    clusterSecret?: Uint8Array,
  ) {
    const remote = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    this.info = { id, remote, clientId: '', signal: this.abort.signal, session: newSession(socket.remoteAddress, tlsPrincipal(socket), isTlsSocket(socket)) };
    this.lastActivity = Date.now();
    this.acceptedAt = this.lastActivity;
    if (clusterSecret) this.clusterAuth = new ClusterAuthListener(clusterSecret, 'broker', broker.brokerId);
    this.slicer = new Slicer(limits.sliceMs, broker.sliceClock);
    this.pumpLater = guard(logger, 'starting queued requests', () => this.pump(), { conn: id });
    // Each socket read starts a new slice (a step of the event loop).
    socket.prependListener('data', () => this.slicer.restart());
    this.versions = new Map();
    const byApi = new Map(broker.apiVersions.map((r) => [r.api, r]));
    for (const body of Object.keys(handlers)) {
      const api = BODY_API[body as RequestBody];
      const r = api === undefined ? undefined : byApi.get(api);
      if (r) this.versions.set(body, { min: r.minVersion, max: r.maxVersion });
    }
    // A throw here would escape into ws's socket handler and end the process: it ends this connection instead.
    ws.on(
      'message',
      guard(logger, 'request dispatch', (data: Buffer, isBinary: boolean) => {
        try {
          if (this.intakeDeferred) this.resumeIntake();
          this.onMessage(data, isBinary);
          if (this.slicer.due && !this.intakeDeferred) this.deferIntake();
        } catch (err) {
          this.ws.terminate();
          throw err;
        }
      }, { conn: id, remote }),
    );
    ws.on('error', (err: Error & { code?: string }) => {
      broker.metrics.badFrames++;
      this.logger.warn({ conn: id, remote, code: err.code, err: err.message }, 'bad frame: connection closed');
    });
    ws.once('close', (code: number, reason: Buffer) => {
      this.readThrottle.close();
      if (this.countedPrincipal !== undefined) this.connectionQuotas?.releasePrincipal(this.countedPrincipal);
      this.abort.abort(new MqError('CONNECTION_CLOSED', `the client connection closed (${code}) before the answer`));
      this.queue.length = 0;
      // A peer that stops after the challenge: its own check of this broker's proof failed (another secret), or it is not a broker.
      if (this.clusterAuth && !this.refusedAuth && this.framesReceived > 0) {
        this.logger.warn(
          { conn: id, remote, code, reason: reason.toString(), claimedBroker: this.clusterAuth.dialerId || undefined },
          'inter-broker connection closed before it proved the cluster secret (a peer with another cluster.secret.file, or not a broker)',
        );
      }
      this.logger.debug({ conn: id, remote, code, reason: reason.toString() }, 'connection closed');
    });
  }

  /**
   * Counts the connection's principal against max.connections.per.principal once it has one (mutual TLS: when it
   * connects; SASL: once authenticated); beyond the limit the connection is closed with the reason. Returns false then.
   */
  checkPrincipalLimit(): boolean {
    const principal = this.info.session?.principal;
    if (!this.connectionQuotas || principal === undefined || this.countedPrincipal !== undefined) return true;
    const refused = this.connectionQuotas.acceptPrincipal(principal);
    if (refused === undefined) {
      this.countedPrincipal = principal;
      return true;
    }
    this.logger.warn({ conn: this.id, remote: this.info.remote, principal }, `connection closed: ${refused}`);
    // Frames after this are dropped (the socket is closing); reading goes on, so the client's close frame is read.
    this.queue.length = 0;
    this.ws.close(CLOSE_POLICY_VIOLATION, refused.replace(/[^\x20-\x7e]/g, '?').slice(0, 120));
    return false;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    // Frames ws had buffered before a close began are dropped.
    if (this.draining || this.ws.readyState !== this.ws.OPEN) return;
    this.lastActivity = Date.now();
    this.framesReceived++;
    this.broker.metrics.bytesIn += data.length;
    if (!isBinary) {
      this.badInput(CLOSE_UNSUPPORTED_DATA, 'text frames are not mq frames: send binary protobuf frames');
      return;
    }
    let frame: mq.RequestFrame;
    try {
      frame = decodeRequest(data, this.limits.maxRequestEntries * REQUEST_VALUES_PER_ENTRY);
    } catch (err) {
      // A well-formed frame with a value the broker cannot hold is answered; garbage closes the connection.
      const correlationId = (err as { correlationId?: unknown }).correlationId;
      if (isMqError(err) && typeof correlationId === 'number') this.refuse(correlationId, err);
      else this.badInput(CLOSE_INVALID_PAYLOAD, (err as Error).message);
      return;
    }
    if (this.clusterAuth) {
      this.authenticatePeer(frame, this.clusterAuth);
      return;
    }
    this.queue.push(frame);
    this.pump();
  }

  /** ws emits the next frame of this read from a setImmediate: the step ends here. */
  private deferIntake(): void {
    const receiver = (this.ws as unknown as { _receiver?: WsReceiverState })._receiver;
    if (receiver?._allowSynchronousEvents === undefined) return;
    receiver._allowSynchronousEvents = false;
    this.intakeDeferred = true;
    this.slicer.yielding();
  }

  /** The deferred frame arrived from the event loop: a new slice, frames emitted at once again. */
  private resumeIntake(): void {
    const receiver = (this.ws as unknown as { _receiver?: WsReceiverState })._receiver;
    if (receiver) receiver._allowSynchronousEvents = true;
    this.intakeDeferred = false;
    this.slicer.restart();
  }

  /** Starts queued requests while the limits allow, in slices; pauses reading while any wait. */
  private pump(): void {
    while (this.queue.length > 0 && !this.draining && !this.pausedForBuffer && !this.readThrottle.paused && this.inFlight < this.limits.maxInFlight) {
      if (this.queue[0]!.body === 'fetch' && this.fetchesInFlight >= this.limits.maxFetchesInFlight) break;
      if (this.slicer.due) {
        this.slicer.resumeLater(this.pumpLater);
        break;
      }
      this.process(this.queue.shift()!);
    }
    this.updateReading();
    if (this.inFlight === 0 && this.queue.length === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  /**
   * One step of the cluster authentication exchange (cluster-auth.ts): a
   * hello is answered with this broker's nonce and proof, a proof ends the
   * exchange. Anything else, or a wrong proof, closes the connection with
   * the reason and one log line; nothing it sent is applied.
   */
  private authenticatePeer(frame: mq.RequestFrame, auth: ClusterAuthListener): void {
    const correlationId = frame.correlationId;
    const req = frame.clusterAuth;
    try {
      if (frame.body !== 'clusterAuth' || !req) {
        throw new MqError('CLUSTER_AUTHENTICATION_FAILED', `${frame.body ?? 'a frame without a body'} before cluster authentication: this listener serves only brokers and controllers that prove the cluster secret (cluster.secret.file)`);
      }
      if (req.step === 1) {
        const c = auth.challenge(req.brokerId ?? 0, req.nonce);
        this.send({ correlationId, clusterAuth: { brokerId: c.id, nonce: c.nonce, proof: c.proof } });
        return;
      }
      if (req.step !== 2) throw new MqError('CLUSTER_AUTHENTICATION_FAILED', `cluster authentication step ${req.step} is not 1 (hello) or 2 (proof)`);
      auth.verify(req.proof);
      this.clusterAuth = undefined;
      this.logger.debug({ conn: this.id, remote: this.info.remote, broker: auth.dialerId }, 'inter-broker connection authenticated');
      this.send({ correlationId, clusterAuth: {} });
    } catch (err) {
      const e = toMqError(err);
      this.refusedAuth = true;
      this.broker.metrics.refusal(e.code, frame.body ?? undefined);
      this.logger.warn({ conn: this.id, remote: this.info.remote, api: frame.body, claimedBroker: req?.brokerId, code: e.code }, `inter-broker connection refused: ${e.message}`);
      this.send({ correlationId, errorCode: errorNumber(e.code), errorMessage: e.message });
      this.queue.length = 0;
      this.ws.close(CLOSE_POLICY_VIOLATION, `${e.code}: ${e.message}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 120));
    }
  }

  private badInput(code: number, reason: string): void {
    this.broker.metrics.badFrames++;
    this.logger.warn({ conn: this.id, remote: this.info.remote, closeCode: code, reason }, 'bad frame: connection closed');
    this.queue.length = 0;
    // A close reason is at most 123 bytes: keep it short and ASCII.
    this.ws.close(code, reason.replace(/[^\x20-\x7e]/g, '?').slice(0, 120));
  }

  private process(frame: mq.RequestFrame): void {
    const correlationId = frame.correlationId;
    const body = frame.body as RequestBody | undefined;
    if (frame.clientId) {
      const bad = clientIdProblem(frame.clientId);
      if (bad) {
        this.refuse(correlationId, new MqError(bad.code, bad.message), body);
        return;
      }
      if (!this.info.clientId) (this.info as { clientId: string }).clientId = frame.clientId;
    }
    if (!body) {
      this.refuse(correlationId, new MqError('INVALID_REQUEST', 'the request frame has no body this broker knows (unknown API or missing body)'));
      return;
    }
    const handler = this.handlers[body] as Handler<RequestBody> | undefined;
    const range = this.versions.get(body);
    if (!handler || !range) {
      this.refuse(correlationId, new MqError('UNSUPPORTED_VERSION', `API "${body}" is not supported by this broker`), body);
      return;
    }
    const version = frame.apiVersion ?? 0;
    if (version < range.min || version > range.max) {
      this.refuse(
        correlationId,
        new MqError('UNSUPPORTED_VERSION', `API "${body}" version ${version} is not supported (this broker speaks ${range.min}..${range.max})`),
        body,
      );
      return;
    }
    try {
      limitRequestEntries(body, frame[body] as never, this.limits.maxRequestEntries);
    } catch (err) {
      this.refuse(correlationId, toMqError(err), body);
      return;
    }
    const ctx: RequestContext = {
      broker: this.broker,
      connection: this.info,
      apiVersion: version,
      logger: this.logger,
    };
    if (body === 'produce' && frame.produce?.partialAnswers) ctx.answerPart = (part) => this.send({ correlationId, partial: true, produce: part } as ResponseFrame);
    const startedAt = this.broker.metrics.request(body);
    this.inFlight++;
    const isFetch = body === 'fetch';
    if (isFetch) this.fetchesInFlight++;
    let result: Promise<unknown>;
    try {
      result = handler(frame[body] as never, ctx);
    } catch (err) {
      result = Promise.reject(err);
    }
    // One reaction per request (not then + finally: a promise less on every round trip).
    result.then(
      (response) => {
        const throttleMs = ctx.throttleMs ?? 0;
        const frame = response === NO_RESPONSE ? undefined : throttleMs > 0 ? ({ correlationId, throttleMs, [body]: response } as ResponseFrame) : ({ correlationId, [body]: response } as ResponseFrame);
        // A large Metadata/DescribeConfigs/DescribeGroups answer is encoded in slices, yielding to other connections.
        const sliced = frame && encodeSlicedResponse(frame, body, this.broker.sliceClock);
        if (sliced) {
          sliced
            .then(
              ({ bytes }) => this.sendBytes(bytes),
              (err: unknown) => this.sendEncodeFailure(correlationId, err),
            )
            .catch((err: unknown) => this.logger.error({ conn: this.id, api: body, err }, 'response not sent'))
            .finally(() => {
              if (throttleMs > 0) this.readThrottle.throttle(throttleMs);
              this.broker.metrics.requestDone(body, startedAt);
              this.finished(isFetch);
            });
          return;
        }
        try {
          if (frame) this.send(frame);
          if (throttleMs > 0) this.readThrottle.throttle(throttleMs);
          if (body === 'saslAuthenticate') this.checkPrincipalLimit();
        } finally {
          this.broker.metrics.requestDone(body, startedAt);
          this.finished(isFetch);
        }
      },
      (err: unknown) => {
        try {
          const e = toMqError(err);
          if (e.code === 'UNKNOWN') this.logger.error({ conn: this.id, api: body, err }, 'request failed');
          else if (e.audited) {
            // Its audit line (security/) is its one log line.
          } else this.logger.warn({ conn: this.id, api: body, code: e.code, err: e.message }, 'request refused');
          this.broker.metrics.refusal(e.code, body);
          const throttleMs = ctx.throttleMs ?? 0;
          this.send({ correlationId, errorCode: errorNumber(e.code), errorMessage: e.message, ...(throttleMs > 0 ? { throttleMs } : {}) });
          if (throttleMs > 0) this.readThrottle.throttle(throttleMs);
        } finally {
          this.broker.metrics.requestDone(body, startedAt);
          this.finished(isFetch);
        }
      },
    );
  }

  /** A request is answered (or failed): free its slot and start what waits. */
  private finished(isFetch: boolean): void {
    this.inFlight--;
    if (isFetch) this.fetchesInFlight--;
    this.pump();
  }

  private refuse(correlationId: number, err: MqError, api?: string): void {
    this.broker.metrics.refusal(err.code, api);
    this.logger.warn({ conn: this.id, remote: this.info.remote, correlationId, api, code: err.code, err: err.message }, 'bad request');
    this.send({ correlationId, errorCode: errorNumber(err.code), errorMessage: err.message });
  }

  private send(frame: ResponseFrame): void {
    if (this.ws.readyState !== this.ws.OPEN) {
      if (frame.fetch) releaseFetchRecords(frame.fetch, this.broker.readBuffers);
      return;
    }
    if (frame.fetch && this.sendFetch(frame.correlationId ?? 0, frame.fetch, frame.throttleMs ?? 0)) {
      this.afterSend();
      return;
    }
    let bytes: Uint8Array;
    try {
      bytes = encodeResponse(frame);
      // The encoded frame holds a copy of the records.
      if (frame.fetch) releaseFetchRecords(frame.fetch, this.broker.readBuffers);
    } catch (err) {
      this.sendEncodeFailure(frame.correlationId ?? 0, err);
      return;
    }
    this.sendBytes(bytes);
  }

  /** An encoded response frame. */
  private sendBytes(bytes: Uint8Array): void {
    if (this.ws.readyState !== this.ws.OPEN) return;
    this.broker.metrics.bytesOut += bytes.length;
    this.ws.send(bytes, { binary: true });
    this.afterSend();
  }

  /** A response that does not encode: one log line, and the request answered with an internal error. */
  private sendEncodeFailure(correlationId: number, err: unknown): void {
    this.logger.error({ conn: this.id, err }, 'response does not encode');
    this.sendBytes(
      encodeResponse({
        correlationId,
        errorCode: errorNumber('UNKNOWN'),
        errorMessage: `internal error: response does not encode: ${(err as Error).message}`,
      }),
    );
  }

  /**
   * A fetch response goes out as one WebSocket frame written straight to the
   * socket from a list of buffers, the log's record buffers among them (no
   * copy into a new frame). That is only in order with ws's own frames while
   * ws's sender writes synchronously (no compression, no Blob data pending),
   * which this connection's server guarantees (perMessageDeflate off) and
   * which is checked here; otherwise, or when the frame does not encode, the
   * ordinary path sends it. Returns whether the frame was sent.
   */
  private sendFetch(correlationId: number, body: NonNullable<ResponseFrame['fetch']>, throttleMs: number): boolean {
    const sender = (this.ws as unknown as { _sender?: WsSenderState })._sender;
    if (!sender || sender._state !== 0 || (sender._queue?.length ?? 0) > 0 || this.socket.destroyed) return false;
    let parts: Buffer[];
    try {
      parts = encodeFetchResponseFrame(correlationId, body, throttleMs);
    } catch {
      return false;
    }
    let length = 0;
    for (const p of parts) length += p.length;
    this.broker.metrics.bytesOut += length;
    this.socket.cork();
    this.socket.write(wsBinaryFrameHeader(length));
    const pool = this.broker.readBuffers;
    const last = parts.length - 1;
    for (let i = 0; i < last; i++) this.socket.write(parts[i]!);
    // Writes complete in order: once the last part is written (or the socket
    // failed), no part is read again and the pooled record buffers go back.
    this.socket.write(parts[last]!, () => {
      for (const p of parts) pool.release(p);
    });
    this.socket.uncork();
    return true;
  }


  /** Stops reading requests while the client is not reading its responses. */
  private afterSend(): void {
    if (!this.pausedForBuffer && this.ws.bufferedAmount > this.limits.maxBufferedBytes) {
      this.pausedForBuffer = true;
      this.logger.debug({ conn: this.id, buffered: this.ws.bufferedAmount }, 'client is not reading: paused reading its requests');
      this.updateReading();
      this.socket.once('drain', () => {
        this.pausedForBuffer = false;
        this.logger.debug({ conn: this.id }, 'client drained: reading its requests again');
        this.pump();
      });
    }
  }

  private updateReading(): void {
    const pause = this.draining || this.pausedForBuffer || this.readThrottle.paused || this.queue.length > 0;
    if (pause && !this.ws.isPaused) this.ws.pause();
    else if (!pause && this.ws.isPaused) this.ws.resume();
  }

  /** Closes the connection if it sent nothing for `idleMs` and has nothing in flight. */
  closeIfIdle(now: number, idleMs: number): boolean {
    if (this.inFlight > 0 || now - this.lastActivity < idleMs) return false;
    this.logger.info({ conn: this.id, remote: this.info.remote, idleMs }, 'closing idle connection');
    this.ws.close(CLOSE_GOING_AWAY, 'idle for too long');
    return true;
  }

  /** Whether the client has sent part of a frame and not the rest (ws delivers whole messages only). */
  private get frameInProgress(): boolean {
    const r = (this.ws as unknown as { _receiver?: WsReceiverState })._receiver;
    return r !== undefined && ((r._state ?? 0) !== 0 || (r._bufferedBytes ?? 0) > 0 || (r._fragments?.length ?? 0) > 0);
  }

  /**
   * Closes a connection that sent no complete frame for `frameTimeoutMs`:
   * none at all since it was accepted, or one begun and not finished (a
   * slowloris trickling bytes). Its socket is destroyed shortly after, since
   * such a client may not read the close either.
   */
  closeIfStalled(now: number, frameTimeoutMs: number): boolean {
    if (this.clusterAuth && !this.refusedAuth && now - this.acceptedAt >= frameTimeoutMs && this.ws.readyState === this.ws.OPEN) {
      this.refusedAuth = true;
      this.logger.warn({ conn: this.id, remote: this.info.remote, frameTimeoutMs }, `inter-broker connection refused: cluster authentication not completed within ${frameTimeoutMs} ms of connecting`);
      this.ws.close(CLOSE_POLICY_VIOLATION, 'CLUSTER_AUTHENTICATION_FAILED: not completed in time');
      setTimeout(() => this.ws.terminate(), STALLED_CLOSE_GRACE_MS).unref();
      return true;
    }
    if (this.inFlight > 0 || this.ws.isPaused || now - this.lastActivity < frameTimeoutMs) return false;
    if (this.framesReceived > 0 && !this.frameInProgress) return false;
    const reason = this.framesReceived === 0 ? `no frame within ${frameTimeoutMs} ms of connecting` : `a frame not completed within ${frameTimeoutMs} ms`;
    this.logger.warn({ conn: this.id, remote: this.info.remote, frameTimeoutMs }, `closing a stalled connection: ${reason}`);
    this.ws.close(CLOSE_POLICY_VIOLATION, reason);
    setTimeout(() => this.ws.terminate(), STALLED_CLOSE_GRACE_MS).unref();
    return true;
  }

  /** Whether reading is paused (for tests and metrics). */
  get isPaused(): boolean {
    return this.ws.isPaused;
  }

  /**
   * Graceful end: stop reading, let in-flight requests finish (up to
   * `timeoutMs`), then close with 1001.
   */
  async drainAndClose(timeoutMs: number): Promise<void> {
    this.draining = true;
    this.queue.length = 0;
    this.updateReading();
    if (this.inFlight > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    this.abort.abort(new MqError('CONNECTION_CLOSED', 'the broker is closing this connection (shutting down)'));
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.ws.terminate();
          resolve();
        }, 2000);
        this.ws.once('close', () => {
          clearTimeout(timer);
          resolve();
        });
        this.ws.close(CLOSE_GOING_AWAY, 'broker shutting down');
      });
    }
  }
}
