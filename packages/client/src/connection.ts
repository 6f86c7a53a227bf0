/**
 * One WebSocket connection to one broker: binary frames, correlation ids,
 * many requests in flight, a timeout and an AbortSignal per request, and the
 * handshake that negotiates API versions. A connection is used once: when it
 * closes, every pending request fails with CONNECTION_CLOSED (retriable) and
 * the broker pool opens a new one on the next request (reconnect).
 */
import { unrefTimer } from '@mq/protocol/components';
import { MqError, errorCodeFromNumber } from '@mq/protocol/errors';
import {
  ApiKey,
  BODY_API,
  SUPPORTED_API_VERSIONS,
  decodeResponse,
  encodeRequest,
  mq,
  negotiateVersion,
  type RequestBody,
} from '@mq/protocol/wire';
import { connectWebSocket } from '@mq/client/transport';
import { channels, type RequestEndMessage, type RequestStartMessage } from './diagnostics.js';
import { abortError } from './retrier.js';
import type { ParsedSasl, TlsOptions } from './options.js';

export type RequestPayload<B extends RequestBody> = NonNullable<mq.RequestFrame[B]>;
type ResponseClassName<B extends RequestBody> = `${Capitalize<B>}Response`;
export type ResponseOf<B extends RequestBody> = ResponseClassName<B> extends keyof typeof mq
  ? InstanceType<Extract<(typeof mq)[ResponseClassName<B>], abstract new (...args: never[]) => unknown>>
  : never;

export interface ConnectionOptions {
  /** host:port of the broker. */
  address: string;
  clientId: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** Largest response frame accepted from the broker. */
  maxResponseBytes: number;
  /** false: send frames with an all-zero mask (no masking pass; see ClientOptions.maskFrames). */
  maskFrames?: boolean;
  /** Connect with TLS (wss://). */
  tls?: TlsOptions | undefined;
  /** Authenticate with SASL (SCRAM, or a delegated bearer token) right after the handshake. */
  sasl?: ParsedSasl | undefined;
}

/**
 * The socket a Connection runs over: the part of a `ws` WebSocket it uses
 * (readyState uses WebSocket's numbers: 0 connecting, 1 open, 2 closing,
 * 3 closed). The default connect function (`@mq/client/transport`: `ws` on
 * Node, the browser's own WebSocket under the `browser` export condition)
 * dials the broker's WebSocket port; a test can connect to an in-memory
 * broker instead.
 */
export interface ClientSocket {
  readonly readyState: number;
  /** Bytes queued but not yet written. */
  readonly bufferedAmount: number;
  send(data: Uint8Array, options: { binary: boolean }, cb: (err?: Error) => void): void;
  /**
   * Sends one binary message whose bytes the socket may modify (mask in place) until `cb` runs: the
   * connection's own encoded request frames. Optional; without it the connection uses send().
   */
  sendOwned?(data: Uint8Array, cb: (err?: Error) => void): void;
  close(code?: number, reason?: string): void;
  terminate(): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
}

/** Opens the socket to `options.address` (the client's connection-factory seam). */
export type ConnectFn = (options: ConnectionOptions, signal?: AbortSignal) => Promise<ClientSocket>;

export interface RequestOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  /** false for fire-and-forget requests (produce with acks=0): resolves once the frame is written. */
  expectResponse?: boolean;
  /**
   * Called once when the connection no longer references the encoded frame
   * (its socket write finished or failed, or the frame was refused before
   * it was sent), so the caller may reuse the frame's memory. Not called when
   * `encode` is not reached (a closed connection, an aborted signal).
   */
  onWritten?: () => void;
  /**
   * Takes the parts of an answer sent in parts (ResponseFrame.partial, a produce with partial_answers); the
   * returned promise resolves with the last part. Each part's body is handed over as it arrives.
   */
  onPartial?: (part: unknown) => void;
}

interface Pending {
  body: RequestBody;
  resolve(value: unknown): void;
  reject(err: unknown): void;
  /** Date.now() after which the request times out. */
  deadline: number;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** On the socket (false while held by the broker's throttle). */
  written: boolean;
  onPartial: ((part: unknown) => void) | undefined;
  /** Given up by its caller (abandon): its outcome goes nowhere. */
  abandoned?: boolean;
}

const ignore = (): void => undefined;
const BINARY = { binary: true } as const;

const SOCKET_CONNECTING = 0;
const SOCKET_OPEN = 1;
const CLIENT_SOFTWARE = 'mq-client-js';
const CLIENT_VERSION = '0.1.0';

export class Connection {
  readonly address: string;
  brokerId = -1;
  clusterId = '';
  /** Largest frame the broker accepts (from the handshake); 0 when unknown. */
  maxFrameBytes = 0;
  private readonly versions = new Map<number, number>();
  private readonly pending = new Map<number, Pending>();
  private nextCorrelationId = 1;
  /**
   * One timer per connection for every request's timeout, armed for the
   * earliest deadline and re-armed when it fires, instead of a timer set and
   * cleared per request (a timer-list insert and removal on every round trip).
   * Unref'd: the open socket is what keeps the process alive.
   */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineAt = Infinity;
  private closedError: MqError | undefined;
  private readonly closeListeners: Array<(err: MqError) => void> = [];
  /**
   * ---- quotas: an answer's throttle_ms (the broker's quota, KIP-219) holds
   * every request of this connection until it has passed, in order; the
   * broker reads nothing from the connection meanwhile anyway.
   */
  private throttledUntil = 0;
  private held: Array<() => void> = [];
  private heldTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly ws: ClientSocket,
    private readonly options: ConnectionOptions,
  ) {
    this.address = options.address;
    ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
    ws.on('close', (code: number, reason: Buffer) => {
      const why = reason.length > 0 ? `: ${reason.toString('utf8')}` : code !== 1000 && code !== 1005 ? ` (code ${code})` : '';
      this.fail(new MqError('CONNECTION_CLOSED', `connection to broker ${this.address} closed${why}`, { broker: this.address }));
    });
    ws.on('error', (err: Error) => {
      this.fail(new MqError('CONNECTION_ERROR', `connection to broker ${this.address} failed: ${err.message}`, { cause: err }));
    });
  }

  /** Opens the socket and runs the handshake. */
  static async open(options: ConnectionOptions, signal?: AbortSignal, connect: ConnectFn = connectWebSocket): Promise<Connection> {
    const ws = await connect(options, signal);
    const conn = new Connection(ws, options);
    try {
      await conn.handshake(signal);
      if (options.sasl) await conn.authenticate(options.sasl, signal);
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  get inFlight(): number {
    return this.pending.size;
  }

  /** Bytes queued in the socket but not yet written. */
  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  onClose(listener: (err: MqError) => void): void {
    if (this.closedError) listener(this.closedError);
    else this.closeListeners.push(listener);
  }

  /** The negotiated version of an API, or UNSUPPORTED_VERSION when the broker does not speak it. */
  versionOf(body: RequestBody): number {
    const v = this.versions.get(BODY_API[body]);
    if (v === undefined) {
      throw new MqError('UNSUPPORTED_VERSION', `broker ${this.address} does not support the ${body} API (upgrade the broker)`);
    }
    return v;
  }

  request<B extends RequestBody>(body: B, payload: RequestPayload<B>, options: RequestOptions = {}): Promise<ResponseOf<B>> {
    return this.requestEncoded(
      body,
      (correlationId, apiVersion, clientId) => {
        const frame: mq.RequestFrame.$Properties = { correlationId, apiVersion, clientId };
        (frame as Record<string, unknown>)[body] = payload;
        return encodeRequest(frame);
      },
      options,
    );
  }

  /**
   * Sends a request whose frame the caller encodes (the producer's
   * hand-written produce frame); the answer is matched and decoded as usual.
   * The encoded bytes are the connection's until `onWritten`: the socket may
   * mask them in place (ClientSocket.sendOwned).
   */
  requestEncoded<B extends RequestBody>(
    body: B,
    encode: (correlationId: number, apiVersion: number, clientId: string) => Uint8Array,
    options: RequestOptions = {},
  ): Promise<ResponseOf<B>> {
    if (this.closedError) return Promise.reject(this.closedError);
    const signal = options.signal;
    if (signal?.aborted) return Promise.reject(abortError(signal));
    let apiVersion: number;
    try {
      apiVersion = body === 'handshake' ? 0 : this.versionOf(body);
    } catch (err) {
      return Promise.reject(err);
    }
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = this.nextCorrelationId >= 0xffffffff ? 1 : this.nextCorrelationId + 1;
    const bytes = encode(correlationId, apiVersion, this.options.clientId);
    const onWritten = options.onWritten;
    if (this.maxFrameBytes > 0 && bytes.length > this.maxFrameBytes) {
      onWritten?.();
      return Promise.reject(
        new MqError('MESSAGE_TOO_LARGE', `request of ${bytes.length} bytes is over the broker's limit of ${this.maxFrameBytes}`),
      );
    }
    const traced = channels.requestStart.hasSubscribers || channels.requestEnd.hasSubscribers;
    if (!traced) return this.write(body, correlationId, bytes, options);
    channels.requestStart.publish({
      broker: this.address,
      api: body,
      apiVersion,
      correlationId,
      clientId: this.options.clientId,
    } satisfies RequestStartMessage);
    const started = performance.now();
    const sent = this.write(body, correlationId, bytes, options);
    const end = (error?: unknown): void => {
      const m: RequestEndMessage = { broker: this.address, api: body, correlationId, durationMs: performance.now() - started };
      if (error !== undefined) m.error = error;
      channels.requestEnd.publish(m);
    };
    sent.then(() => end(), end);
    return sent;
  }

  /** Writes an encoded request; resolves with its answer (or once written, for fire-and-forget). */
  private write<B extends RequestBody>(body: B, correlationId: number, bytes: Uint8Array, options: RequestOptions): Promise<ResponseOf<B>> {
    const signal = options.signal;
    const onWritten = options.onWritten;
    if (options.expectResponse === false) {
      return new Promise((resolve, reject) => {
        this.sendWhenAllowed(() => this.send(bytes, (err) => {
          onWritten?.();
          if (err) reject(new MqError('CONNECTION_ERROR', `write to broker ${this.address} failed: ${err.message}`, { cause: err }));
          else resolve(undefined as ResponseOf<B>);
        }));
      });
    }
    return new Promise<ResponseOf<B>>((resolve, reject) => {
      const timeoutMs = options.timeoutMs ?? this.options.requestTimeoutMs;
      const p: Pending = {
        body,
        resolve: resolve as (v: unknown) => void,
        reject,
        deadline: Date.now() + timeoutMs,
        timeoutMs,
        signal,
        onAbort: undefined,
        written: false,
        onPartial: options.onPartial,
      };
      if (p.deadline < this.deadlineAt) this.armDeadline(p.deadline);
      if (signal) {
        p.onAbort = () => {
          this.settle(correlationId);
          reject(abortError(signal));
        };
        signal.addEventListener('abort', p.onAbort, { once: true });
      }
      this.pending.set(correlationId, p);
      // Written at once unless the broker's throttle holds this connection (no closure per request then).
      if (this.sendAllowed()) this.writePending(correlationId, p, bytes, onWritten);
      else this.sendWhenAllowed(() => this.writePending(correlationId, p, bytes, onWritten));
    });
  }

  private writePending(correlationId: number, p: Pending, bytes: Uint8Array, onWritten: (() => void) | undefined): void {
    // Held while the broker throttled this connection: a request its caller gave up on meanwhile (aborted,
    // timed out, connection failed) is never written, so nothing the caller was told failed happens later.
    if (this.pending.get(correlationId) !== p) {
      onWritten?.();
      return;
    }
    p.written = true;
    this.send(bytes, (err) => {
      onWritten?.();
      if (err && this.settle(correlationId)) {
        p.reject(new MqError('CONNECTION_ERROR', `write to broker ${this.address} failed: ${err.message}`, { cause: err }));
      }
    });
  }

  /** Writes an encoded frame: the connection's own from here on, so the socket may mask it in place. */
  private send(bytes: Uint8Array, cb: (err?: Error) => void): void {
    if (this.ws.sendOwned) this.ws.sendOwned(bytes, cb);
    else this.ws.send(bytes, BINARY, cb);
  }

  /** Closes the socket; pending requests fail with CONNECTION_CLOSED. */
  close(): void {
    this.fail(new MqError('CONNECTION_CLOSED', `connection to broker ${this.address} was closed by the client`));
    if (this.ws.readyState === SOCKET_OPEN || this.ws.readyState === SOCKET_CONNECTING) this.ws.close(1000);
  }

  /** The principal this connection authenticated as ("" when it did not). */
  principal = '';

  /**
   * SASL SCRAM (two SaslAuthenticate round trips; @mq/protocol/scram): the
   * broker's signature is checked too, so a broker that does not hold the
   * credential cannot pass for the real one.
   */
  private async authenticate(sasl: NonNullable<ConnectionOptions['sasl']>, signal?: AbortSignal): Promise<void> {
    if (sasl.mechanism === 'OAUTHBEARER') {
      // RFC 7628: gs2 header, then auth=Bearer <token>, \x01-separated; one round trip.
      const resp = await this.request('saslAuthenticate', { mechanism: sasl.mechanism, authBytes: new TextEncoder().encode(`n,,\u0001auth=Bearer ${sasl.token}\u0001\u0001`) }, { signal, timeoutMs: this.options.connectTimeoutMs });
      this.principal = resp.principal ?? '';
      return;
    }
    // Loaded only when used (WebCrypto, the same code in Node and browsers: @mq/protocol/scram-client).
    const { ScramClient } = await import('@mq/protocol/scram');
    const scram = new ScramClient(sasl.mechanism, sasl.username, sasl.password);
    const o = { signal, timeoutMs: this.options.connectTimeoutMs };
    const first = await this.request('saslAuthenticate', { mechanism: sasl.mechanism, authBytes: new TextEncoder().encode(scram.first()) }, o);
    const final = await this.request('saslAuthenticate', { mechanism: sasl.mechanism, authBytes: new TextEncoder().encode(await scram.final(first.authBytes ?? new Uint8Array(0))) }, o);
    scram.verify(final.authBytes ?? new Uint8Array(0));
    this.principal = final.principal ?? '';
  }

  private async handshake(signal?: AbortSignal): Promise<void> {
    const resp = await this.request(
      'handshake',
      {
        clientSoftware: CLIENT_SOFTWARE,
        clientSoftwareVersion: CLIENT_VERSION,
        apiVersions: SUPPORTED_API_VERSIONS.map((r) => ({ api: r.api, minVersion: r.minVersion, maxVersion: r.maxVersion })),
      },
      { signal, timeoutMs: this.options.connectTimeoutMs },
    );
    const theirs = (resp.apiVersions ?? []).map((r) => ({
      api: (r.api ?? 0) as ApiKey,
      minVersion: r.minVersion ?? 0,
      maxVersion: r.maxVersion ?? 0,
    }));
    for (const r of SUPPORTED_API_VERSIONS) {
      const v = negotiateVersion(r.api, SUPPORTED_API_VERSIONS, theirs);
      if (v !== undefined) this.versions.set(r.api, v);
    }
    this.brokerId = resp.brokerId ?? -1;
    this.clusterId = resp.clusterId ?? '';
    this.maxFrameBytes = resp.maxFrameBytes ?? 0;
  }

  /**
   * Fails a pending request now with `err`, its caller having given up on it
   * (the producer's leader check found its partition moved). Unlike an
   * abort, the request stays pending on the connection: an answer arriving
   * later is dropped, and one that never arrives times out as any other
   * (which replaces the connection). Its partial answers still reach
   * `onPartial`.
   */
  abandon(correlationId: number, err: unknown): void {
    const p = this.pending.get(correlationId);
    if (!p || p.abandoned) return;
    p.abandoned = true;
    const reject = p.reject;
    p.resolve = p.reject = ignore;
    reject(err);
  }

  /** Removes a pending request and its abort listener; true when it was still pending. */
  private settle(correlationId: number): boolean {
    const p = this.pending.get(correlationId);
    if (!p) return false;
    this.pending.delete(correlationId);
    if (p.onAbort) p.signal!.removeEventListener('abort', p.onAbort);
    return true;
  }

  /** Nothing is held back by the broker's throttle: a request may be written now. */
  private sendAllowed(): boolean {
    return this.held.length === 0 && (this.throttledUntil === 0 || Date.now() >= this.throttledUntil);
  }

  /** Sends now, or once the throttle time the broker gave has passed (after what is already held). */
  private sendWhenAllowed(send: () => void): void {
    if (this.sendAllowed()) {
      send();
      return;
    }
    this.held.push(send);
    this.armHeld();
  }

  private armHeld(): void {
    if (this.heldTimer !== undefined) return;
    this.heldTimer = unrefTimer(
      setTimeout(() => {
        this.heldTimer = undefined;
        if (!this.closedError && Date.now() < this.throttledUntil) {
          this.armHeld();
          return;
        }
        this.flushHeld();
      }, Math.max(0, this.throttledUntil - Date.now())),
    );
  }

  private flushHeld(): void {
    const held = this.held;
    this.held = [];
    for (const send of held) send();
  }

  /** Until when the broker asked this connection to wait (0: never); for tests and diagnostics. */
  get throttledUntilMs(): number {
    return this.throttledUntil;
  }

  private armDeadline(at: number): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineAt = at;
    this.deadlineTimer = unrefTimer(setTimeout(this.onDeadline, Math.max(0, at - Date.now())));
  }

  /** The deadline timer fired: time out what is overdue, then re-arm for the earliest request left. */
  private readonly onDeadline = (): void => {
    this.deadlineTimer = undefined;
    this.deadlineAt = Infinity;
    if (this.closedError) return;
    const now = Date.now();
    let next = Infinity;
    for (const [id, p] of this.pending) {
      if (p.deadline > now) {
        if (p.deadline < next) next = p.deadline;
        continue;
      }
      this.settle(id);
      if (!p.written) {
        // Still held by the broker's throttle, never sent: the broker is not at fault, the connection stays.
        p.reject(new MqError('REQUEST_TIMED_OUT', `${p.body} request to broker ${this.address} was still held by the broker's throttle after ${p.timeoutMs} ms (not sent)`, { broker: this.address }));
        continue;
      }
      p.reject(
        new MqError('REQUEST_TIMED_OUT', `${p.body} request to broker ${this.address} got no answer within ${p.timeoutMs} ms`, {
          broker: this.address,
        }),
      );
      // Like Kafka: a broker that does not answer in time gets a fresh connection (the next request reconnects).
      this.fail(new MqError('CONNECTION_CLOSED', `connection to broker ${this.address} closed after a request timed out`));
      this.ws.terminate();
      return;
    }
    if (next !== Infinity) this.armDeadline(next);
  };

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (!isBinary) {
      this.protocolError('the broker sent a text frame');
      return;
    }
    let frame: mq.ResponseFrame;
    try {
      frame = decodeResponse(data);
    } catch (err) {
      this.protocolError((err as Error).message);
      return;
    }
    if (frame.throttleMs) this.throttledUntil = Math.max(this.throttledUntil, Date.now() + frame.throttleMs);
    const id = frame.correlationId;
    const p = this.pending.get(id);
    if (!p) return; // timed out or aborted already, or an answer to a fire-and-forget request
    if (frame.partial && !frame.errorCode) {
      const part = (frame as unknown as Record<string, unknown>)[p.body];
      if (!p.onPartial || part === undefined || part === null) {
        this.protocolError(`a partial answer to a ${p.body} request that did not ask for one`);
        return;
      }
      p.onPartial(part);
      return;
    }
    this.settle(id);
    if (frame.errorCode) {
      const code = errorCodeFromNumber(frame.errorCode);
      p.reject(new MqError(code, frame.errorMessage || `broker ${this.address} failed the ${p.body} request with ${code}`));
      return;
    }
    const body = (frame as unknown as Record<string, unknown>)[p.body];
    if (body === undefined || body === null) {
      p.reject(new MqError('CORRUPT_MESSAGE', `broker ${this.address} answered a ${p.body} request with ${frame.body ?? 'nothing'}`));
      return;
    }
    p.resolve(body);
  }

  private protocolError(message: string): void {
    const err = new MqError('CORRUPT_MESSAGE', `broker ${this.address} broke the protocol: ${message}`);
    this.fail(err);
    this.ws.close(1002, 'protocol error');
  }

  private fail(err: MqError): void {
    if (this.closedError) return;
    this.closedError = err;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlineAt = Infinity;
    // Held sends fail on the closed socket (their callbacks report it; their pending entries are rejected below).
    clearTimeout(this.heldTimer);
    this.heldTimer = undefined;
    this.flushHeld();
    for (const [id, p] of [...this.pending]) {
      this.settle(id);
      p.reject(err);
    }
    for (const l of this.closeListeners.splice(0)) l(err);
  }
}

export { ApiKey };
