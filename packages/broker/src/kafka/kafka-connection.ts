/**
 * One Kafka client connection: cuts the byte stream into frames (each at
 * most max.frame.bytes), decodes each request, runs it through its adapter
 * (up to max.in.flight.requests.per.connection at once) and writes the
 * answers in request order, as Kafka clients expect. Reading pauses while
 * requests wait for a slot or while unsent answer bytes exceed
 * connection.max.buffered.bytes. An unknown API or version is answered
 * UNSUPPORTED_VERSION (ApiVersions in its v0 form, as Kafka does); a frame
 * that does not decode closes this connection with one log line.
 *
 * With authentication.enabled, a connection without a principal (no login,
 * no verified client certificate) may send only ApiVersions, SaslHandshake
 * and SaslAuthenticate, one at a time; any other request closes it with one
 * log line, as Kafka does, and so does a failed login once its answer is out.
 */
import { ReadThrottle } from '../quota/read-throttle.js';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiVersionsApi, FetchApi, decodeRequest, encodeResponse, FrameSplitter, kafkaErrorCode, type RequestHeader } from '@mq/kafka-protocol';
import { SaslAuthenticateApi, SaslHandshakeApi } from '@mq/kafka-protocol/messages';
import { MqError } from '@mq/protocol/errors';
import type { BrokerContext, ConnectionInfo, RequestContext } from '../context.js';
import { toMqError } from '../errors.js';
import { NO_RESPONSE, type HandlerMap } from '../handlers/types.js';
import { newSession } from '../security/session.js';
import { isTlsSocket, tlsPrincipal } from '../server/tls.js';
import { clientIdProblem } from '../request-limits.js';
import { guard } from '../guard.js';
import { Slicer } from '../slicer.js';
import type { AnyKafkaApi, KafkaCall, KafkaDoorView, KafkaSaslState } from './types.js';
import { kafkaCodeOf } from './errors.js';
import { encodeSlicedAnswer } from './sliced-answer.js';
import type { ConnectionQuotas } from '../quota/connection-limits.js';

export interface KafkaConnectionLimits {
  maxFrameBytes: number;
  maxInFlight: number;
  /** Fetches processed at once (each answer may hold up to fetch.max.bytes of pooled buffers until it is written). */
  maxFetchesInFlight: number;
  maxBufferedBytes: number;
  /** Longest step of starting requests before the connection yields to the event loop; default SLICE_MS. */
  sliceMs?: number;
}

export interface KafkaConnectionDeps {
  broker: BrokerContext;
  core: HandlerMap;
  apis: ReadonlyMap<number, AnyKafkaApi>;
  door: KafkaDoorView;
  limits: KafkaConnectionLimits;
  logger: Logger;
  /** ---- quotas: connection counts per principal (max.connections.per.principal); absent: no limit. */
  connectionQuotas?: ConnectionQuotas;
}

/** An answer slot, filled when its request is done; written once every earlier one is. */
interface Slot {
  parts: Buffer[] | null | undefined;
  after: Array<() => void>;
}

const UNSUPPORTED_VERSION = kafkaErrorCode('UNSUPPORTED_VERSION');
/** What a connection that must authenticate may send before it has. */
const BEFORE_LOGIN: ReadonlySet<number> = new Set([ApiVersionsApi.key, SaslHandshakeApi.key, SaslAuthenticateApi.key]);

/** Whether a request frame is a Fetch (its API key, the frame's first two bytes). */
function isFetch(frame: Buffer): boolean {
  return frame.length >= 2 && frame.readInt16BE(0) === FetchApi.key;
}

export class KafkaConnection {
  readonly info: ConnectionInfo;
  private readonly abort = new AbortController();
  private readonly splitter: FrameSplitter;
  private readonly queue: Buffer[] = [];
  private readonly slots: Slot[] = [];
  private inFlight = 0;
  private fetchesInFlight = 0;
  private closed = false;
  private waitingForDrain = false;
  private idleWaiters: Array<() => void> = [];
  private readonly groupProtocols = new Map<string, string>();
  /** Requests are started in slices (issue 22): one socket read can carry many frames; the rest start from a setImmediate. */
  private readonly slicer: Slicer;
  private readonly pumpLater: () => void;
  private readonly sasl: KafkaSaslState = { mechanism: undefined, rawTokens: false };
  lastActivity: number;
  /** When the connection was accepted or its last complete frame arrived (for the stalled sweep). */
  private lastFrameAt: number;
  private framesReceived = 0;
  // ---- quotas: reading paused while a throttle time given in an answer runs (KIP-219); the principal counted against its limit
  private readonly readThrottle = new ReadThrottle({ pause: () => this.updateReading(), resume: () => this.pump() });
  private countedPrincipal: string | undefined;

  constructor(
    readonly id: number,
    private readonly socket: Socket,
    private readonly deps: KafkaConnectionDeps,
  ) {
    this.info = { id, remote: `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`, clientId: '', signal: this.abort.signal, session: newSession(socket.remoteAddress, tlsPrincipal(socket), isTlsSocket(socket)) };
    this.splitter = new FrameSplitter(deps.limits.maxFrameBytes);
    this.slicer = new Slicer(deps.limits.sliceMs, deps.broker.sliceClock);
    this.pumpLater = guard(deps.logger, 'starting queued Kafka requests', () => this.pump(), { conn: id });
    this.lastActivity = this.lastFrameAt = Date.now();
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err: Error & { code?: string }) => deps.logger.debug({ conn: id, remote: this.info.remote, code: err.code, err: err.message }, 'kafka connection error'));
    socket.once('close', () => this.onClose());
  }

  /** Authentication is required and this connection has no principal yet. */
  private get mustLogIn(): boolean {
    return this.deps.door.sasl.required && this.info.session?.principal === undefined;
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  private onData(chunk: Buffer): void {
    if (this.closed) return;
    this.slicer.restart();
    this.lastActivity = Date.now();
    this.deps.broker.metrics.bytesIn += chunk.length;
    let frames: Buffer[];
    try {
      frames = this.splitter.push(chunk);
    } catch (err) {
      this.badFrame(err);
      return;
    }
    if (frames.length > 0) {
      this.lastFrameAt = this.lastActivity;
      this.framesReceived += frames.length;
    }
    for (const f of frames) this.queue.push(f);
    this.pump();
  }

  private pump(): void {
    while (!this.closed && !this.readThrottle.paused && this.queue.length > 0 && this.inFlight < this.deps.limits.maxInFlight) {
      if (isFetch(this.queue[0]!) && this.fetchesInFlight >= this.deps.limits.maxFetchesInFlight) break;
      // Before the login, one request at a time: one pipelined behind SaslAuthenticate is judged once the login is done.
      if (this.inFlight > 0 && this.mustLogIn) break;
      if (this.slicer.due) {
        this.slicer.resumeLater(this.pumpLater);
        break;
      }
      this.start(this.queue.shift()!);
    }
    this.updateReading();
    if (this.inFlight === 0 && this.queue.length === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const w of waiters) w();
    }
  }

  private updateReading(): void {
    const pause = this.closed || this.readThrottle.paused || this.queue.length > 0 || this.waitingForDrain || this.inFlight >= this.deps.limits.maxInFlight;
    if (pause && !this.socket.isPaused()) this.socket.pause();
    else if (!pause && this.socket.isPaused()) this.socket.resume();
  }

  private requestContext(): RequestContext {
    return {
      broker: this.deps.broker,
      connection: this.info,
      // The core's version semantics are mq's: a Kafka answer carries what an mq v0 answer does (one base offset per partition).
      apiVersion: 0,
      logger: this.deps.logger,
    };
  }

  private start(frame: Buffer): void {
    if (this.sasl.rawTokens) {
      this.rawToken(frame);
      return;
    }
    if (this.mustLogIn && frame.length >= 2 && !BEFORE_LOGIN.has(frame.readInt16BE(0))) {
      this.beforeLogin(frame.readInt16BE(0));
      return;
    }
    let header: RequestHeader | undefined;
    let unsupported = false;
    let decoded;
    try {
      decoded = decodeRequest(frame, (h) => {
        header = h;
        unsupported = true;
      });
    } catch (err) {
      this.badFrame(err);
      return;
    }
    if (unsupported || !decoded) {
      this.answerUnsupported(header!);
      return;
    }
    const { header: h, api, body } = decoded;
    const adapter = this.deps.apis.get(h.apiKey);
    if (!adapter) {
      this.answerUnsupported(h);
      return;
    }
    if (h.clientId && !this.info.clientId) {
      const bad = clientIdProblem(h.clientId);
      if (!bad) (this.info as { clientId: string }).clientId = h.clientId;
    }
    const slot: Slot = { parts: undefined, after: [] };
    this.slots.push(slot);
    this.inFlight++;
    const fetch = h.apiKey === FetchApi.key;
    if (fetch) this.fetchesInFlight++;
    const ctx = this.requestContext();
    const call: KafkaCall = { version: h.apiVersion, ctx, core: this.deps.core, door: this.deps.door, groupProtocols: this.groupProtocols, sasl: this.sasl, afterWrite: (fn) => slot.after.push(fn) };
    if (h.apiKey === SaslAuthenticateApi.key) slot.after.push(() => this.closeIfLoginFailed());
    this.deps.broker.metrics.request(`kafka.${api.name}`);
    let result: Promise<unknown>;
    try {
      result = adapter.handle(body, call);
    } catch (err) {
      result = Promise.reject(err);
    }
    result
      .then(
        (answer) => {
          // A quota's throttle time (quota/): in the answer's throttle_time_ms (where its version has one).
          if (ctx.throttleMs && typeof answer === 'object' && answer !== null) (answer as { throttleTimeMs?: number }).throttleTimeMs = ctx.throttleMs;
          if (answer === NO_RESPONSE) return null;
          // A large Metadata/DescribeConfigs/DescribeGroups answer is encoded in slices, yielding to other connections.
          const sliced = encodeSlicedAnswer(api, h.apiVersion, h.correlationId, answer as never, this.deps.broker.sliceClock);
          return sliced ? sliced.then((a) => a.parts) : encodeResponse(api, h.apiVersion, h.correlationId, answer as never);
        },
        (err: unknown) => {
          const e = toMqError(err);
          if (e.code === 'UNKNOWN') this.deps.logger.error({ conn: this.id, api: api.name, err }, 'kafka request failed');
          else if (!e.audited) this.deps.logger.warn({ conn: this.id, api: api.name, code: e.code, err: e.message }, 'kafka request refused');
          this.deps.broker.metrics.refusal(e.code);
          return encodeResponse(api, h.apiVersion, h.correlationId, adapter.refused(body, kafkaCodeOf(e), e.message, h.apiVersion) as never);
        },
      )
      .then(
        (parts) => {
          slot.parts = parts;
        },
        (err: unknown) => {
          // The answer does not encode: nothing sensible can be sent for this correlation id.
          this.deps.logger.error({ conn: this.id, api: api.name, err }, 'kafka response does not encode: connection closed');
          slot.parts = null;
          this.close();
        },
      )
      .finally(() => {
        this.inFlight--;
        if (fetch) this.fetchesInFlight--;
        this.flush();
        if (ctx.throttleMs) this.readThrottle.throttle(ctx.throttleMs);
        if (this.countedPrincipal === undefined && this.info.session?.principal !== undefined) this.checkPrincipalLimit();
        this.pump();
      });
  }

  /**
   * Counts the connection's principal against max.connections.per.principal once it has one (mutual TLS: when it
   * connects; SASL: once authenticated); beyond the limit the connection is closed, with one log line. False then.
   */
  checkPrincipalLimit(): boolean {
    const quotas = this.deps.connectionQuotas;
    const principal = this.info.session?.principal;
    if (!quotas || principal === undefined || this.countedPrincipal !== undefined) return true;
    const refused = quotas.acceptPrincipal(principal);
    if (refused === undefined) {
      this.countedPrincipal = principal;
      return true;
    }
    this.deps.logger.warn({ conn: this.id, remote: this.info.remote, principal }, `kafka connection closed: ${refused}`);
    this.close();
    return false;
  }

  /**
   * An API key or version this listener does not serve: UNSUPPORTED_VERSION.
   * ApiVersions answers in v0 with the versions served (KIP-511), so the
   * client can retry with one; any other API gets a header and the error
   * code (nothing else about it is known), and the connection stays open.
   */
  private answerUnsupported(h: RequestHeader): void {
    this.deps.broker.metrics.refusal('UNSUPPORTED_VERSION');
    this.deps.logger.warn({ conn: this.id, remote: this.info.remote, apiKey: h.apiKey, apiVersion: h.apiVersion }, 'kafka request refused: unsupported API or version');
    let parts: Buffer[];
    if (h.apiKey === ApiVersionsApi.key) {
      parts = encodeResponse(ApiVersionsApi, 0, h.correlationId, { errorCode: UNSUPPORTED_VERSION, apiKeys: this.deps.door.apiVersions });
    } else {
      const b = Buffer.alloc(10);
      b.writeInt32BE(6, 0);
      b.writeInt32BE(h.correlationId, 4);
      b.writeInt16BE(UNSUPPORTED_VERSION, 8);
      parts = [b];
    }
    this.slots.push({ parts, after: [] });
    this.flush();
  }

  /** Writes the answers that are ready, in request order. */
  private flush(): void {
    while (this.slots.length > 0 && this.slots[0]!.parts !== undefined) {
      const slot = this.slots.shift()!;
      const done = () => {
        for (const fn of slot.after) fn();
      };
      if (!slot.parts || this.closed || this.socket.destroyed) {
        done();
        continue;
      }
      const parts = slot.parts;
      this.socket.cork();
      for (let i = 0; i < parts.length - 1; i++) {
        this.deps.broker.metrics.bytesOut += parts[i]!.length;
        this.socket.write(parts[i]!);
      }
      const last = parts[parts.length - 1]!;
      this.deps.broker.metrics.bytesOut += last.length;
      // Writes complete in order: once the last part is out, none is read again.
      this.socket.write(last, done);
      this.socket.uncork();
    }
    if (!this.waitingForDrain && this.socket.writableLength > this.deps.limits.maxBufferedBytes) {
      this.waitingForDrain = true;
      this.socket.once('drain', () => {
        this.waitingForDrain = false;
        this.pump();
      });
    }
  }

  /**
   * A SASL token in the pre-KIP-152 framing (after a SaslHandshake v0): the
   * frame is the token itself, no Kafka header, and so is the answer. It runs
   * the same core step as SaslAuthenticate; a failure (its audit line written
   * by the core) closes the connection without an answer, as Kafka does.
   */
  private rawToken(frame: Buffer): void {
    const slot: Slot = { parts: undefined, after: [] };
    this.slots.push(slot);
    this.inFlight++;
    const login = this.deps.core.saslAuthenticate;
    this.deps.broker.metrics.request('kafka.SaslAuthenticate');
    Promise.resolve()
      .then(() => {
        if (!login) throw new MqError('UNSUPPORTED_SASL_MECHANISM', 'this listener does not authenticate');
        return login({ mechanism: this.sasl.mechanism ?? '', authBytes: frame }, this.requestContext());
      })
      .then(
        (r) => {
          const token = r === NO_RESPONSE || !r.authBytes ? Buffer.alloc(0) : Buffer.from(r.authBytes.buffer, r.authBytes.byteOffset, r.authBytes.byteLength);
          const size = Buffer.alloc(4);
          size.writeInt32BE(token.length, 0);
          slot.parts = [size, token];
          if (this.info.session?.principal !== undefined) this.sasl.rawTokens = false;
        },
        (err: unknown) => {
          const e = toMqError(err);
          if (!e.audited) this.deps.logger.warn({ conn: this.id, remote: this.info.remote, code: e.code, err: e.message }, 'kafka SASL token refused: connection closed');
          slot.parts = null;
          this.close();
        },
      )
      .finally(() => {
        this.inFlight--;
        this.flush();
        this.pump();
      });
  }

  /** A request other than ApiVersions/SaslHandshake/SaslAuthenticate before the login: closed, as Kafka does. */
  private beforeLogin(apiKey: number): void {
    this.deps.broker.metrics.refusal('SASL_AUTHENTICATION_FAILED');
    this.deps.logger.warn(
      { conn: this.id, remote: this.info.remote, apiKey, code: 'SASL_AUTHENTICATION_FAILED' },
      'kafka request before authentication: connection closed (authentication.enabled=true: log in with SaslHandshake and SaslAuthenticate first)',
    );
    this.close();
  }

  /** After a failed SaslAuthenticate (its answer written): Kafka closes the connection; the client logs in anew on another. */
  private closeIfLoginFailed(): void {
    const s = this.info.session;
    if (s && s.saslEnded && s.principal === undefined) this.close();
  }

  private badFrame(err: unknown): void {
    this.deps.broker.metrics.badFrames++;
    this.deps.logger.warn({ conn: this.id, remote: this.info.remote, err: (err as Error).message }, 'bad kafka frame: connection closed');
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    this.socket.destroy();
  }

  private onClose(): void {
    this.closed = true;
    this.readThrottle.close();
    if (this.countedPrincipal !== undefined) this.deps.connectionQuotas?.releasePrincipal(this.countedPrincipal);
    this.countedPrincipal = undefined;
    this.queue.length = 0;
    this.abort.abort(new MqError('CONNECTION_CLOSED', 'the client connection closed before the answer'));
    // Answers still to come give their buffers back when they finish (flush runs their after hooks).
    for (const s of this.slots) if (s.parts !== undefined) for (const fn of s.after.splice(0)) fn();
    this.deps.logger.debug({ conn: this.id, remote: this.info.remote }, 'kafka connection closed');
  }

  /** Closes the connection if it sent nothing for `idleMs` and has nothing in flight. */
  closeIfIdle(now: number, idleMs: number): boolean {
    if (this.inFlight > 0 || now - this.lastActivity < idleMs) return false;
    this.deps.logger.info({ conn: this.id, remote: this.info.remote, idleMs }, 'closing idle kafka connection');
    this.close();
    return true;
  }

  /**
   * Closes a connection that sent no complete frame for `frameTimeoutMs`:
   * none at all since it was accepted, or one begun and not finished (a
   * slowloris trickling bytes, or a size that promised more than came).
   */
  closeIfStalled(now: number, frameTimeoutMs: number): boolean {
    if (this.closed || this.inFlight > 0 || now - this.lastFrameAt < frameTimeoutMs) return false;
    if (this.framesReceived > 0 && this.splitter.pendingBytes === 0) return false;
    const reason = this.framesReceived === 0 ? `no frame within ${frameTimeoutMs} ms of connecting` : `a frame not completed within ${frameTimeoutMs} ms (${this.splitter.pendingBytes} bytes of it held)`;
    this.deps.broker.metrics.badFrames++;
    this.deps.logger.warn({ conn: this.id, remote: this.info.remote, frameTimeoutMs }, `closing a stalled kafka connection: ${reason}`);
    this.close();
    return true;
  }

  /** Graceful end: stop reading, let in-flight requests finish (up to `timeoutMs`), then close. */
  async drainAndClose(timeoutMs: number): Promise<void> {
    this.queue.length = 0;
    this.socket.pause();
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
    this.socket.end();
    this.closed = true;
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }
}
