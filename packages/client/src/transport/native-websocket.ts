/**
 * A {@link ClientSocket} over a WHATWG WebSocket (the browser's own, or any
 * class with its API): binary frames as ArrayBuffers turned into Buffers,
 * write callbacks, the response size limit and the connect timeout that the
 * `ws` options give on Node. Imports nothing from `node:*`.
 */
import { unrefTimer } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { Buffer } from '@mq/protocol/platform';
import type { ClientSocket, ConnectionOptions } from '../connection.js';
import { abortError } from '../retrier.js';
import { addressToUrl } from './address.js';

/** The part of the WHATWG WebSocket API used here. */
export interface NativeWebSocket {
  binaryType: string;
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: never) => void): void;
  removeEventListener(type: string, listener: (event: never) => void): void;
}
export type NativeWebSocketConstructor = new (url: string) => NativeWebSocket;

interface MessageEventLike {
  data: ArrayBuffer | ArrayBufferView | string;
}
interface CloseEventLike {
  code: number;
  reason: string;
}

const OPEN = 1;

/** Browsers accept only 1000 and 3000-4999 from a script; other codes close as 1000. */
function scriptCloseCode(code: number | undefined): number {
  return code === 1000 || (code !== undefined && code >= 3000 && code <= 4999) ? code : 1000;
}

class NativeSocket implements ClientSocket {
  private readonly messageListeners: Array<(data: Buffer, isBinary: boolean) => void> = [];
  private readonly closeListeners: Array<(code: number, reason: Buffer) => void> = [];
  private readonly errorListeners: Array<(err: Error) => void> = [];

  constructor(
    private readonly ws: NativeWebSocket,
    private readonly maxResponseBytes: number,
  ) {
    ws.addEventListener('message', (event: MessageEventLike) => this.onMessage(event));
    ws.addEventListener('close', (event: CloseEventLike) => {
      const reason = Buffer.from(event.reason ?? '', 'utf8');
      for (const l of this.closeListeners) l(event.code, reason);
    });
    ws.addEventListener('error', () => this.emitError(new Error('WebSocket error')));
  }

  get readyState(): number {
    return this.ws.readyState;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** A WHATWG WebSocket copies what it is given on send(), so the write is done when send() returns. */
  send(data: Uint8Array, _options: { binary: boolean }, cb: (err?: Error) => void): void {
    if (this.ws.readyState !== OPEN) {
      queueMicrotask(() => cb(new Error('the WebSocket is not open')));
      return;
    }
    try {
      this.ws.send(data);
    } catch (err) {
      queueMicrotask(() => cb(err as Error));
      return;
    }
    queueMicrotask(() => cb());
  }

  close(code?: number, reason?: string): void {
    try {
      this.ws.close(scriptCloseCode(code), reason);
    } catch {
      this.ws.close();
    }
  }

  /** No abrupt close exists in the WHATWG API: a normal close. */
  terminate(): void {
    this.ws.close();
  }

  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown {
    if (event === 'message') this.messageListeners.push(listener as (data: Buffer, isBinary: boolean) => void);
    else if (event === 'close') this.closeListeners.push(listener as (code: number, reason: Buffer) => void);
    else if (event === 'error') this.errorListeners.push(listener as (err: Error) => void);
    return this;
  }

  private onMessage(event: MessageEventLike): void {
    const data = event.data;
    if (typeof data === 'string') {
      for (const l of this.messageListeners) l(Buffer.from(data, 'utf8'), false);
      return;
    }
    const bytes = data instanceof ArrayBuffer ? Buffer.from(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (bytes.length > this.maxResponseBytes) {
      this.emitError(new Error(`a frame of ${bytes.length} bytes is over maxResponseBytes (${this.maxResponseBytes})`));
      this.close(1000);
      return;
    }
    for (const l of this.messageListeners) l(bytes, true);
  }

  private emitError(err: Error): void {
    for (const l of this.errorListeners) l(err);
  }
}

/**
 * Opens a WebSocket with the given WHATWG WebSocket class (the browser's own
 * by default) and resolves once it is open.
 */
export function connectNativeWebSocket(
  options: ConnectionOptions,
  signal?: AbortSignal,
  WebSocketClass: NativeWebSocketConstructor | undefined = (globalThis as { WebSocket?: NativeWebSocketConstructor }).WebSocket,
): Promise<ClientSocket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    if (!WebSocketClass) {
      return reject(new MqError('CONNECTION_ERROR', 'this platform has no WebSocket (use the Node.js build of @mq/client)'));
    }
    let ws: NativeWebSocket;
    try {
      ws = new WebSocketClass(addressToUrl(options.address));
    } catch (err) {
      return reject(
        new MqError('CONNECTION_ERROR', `cannot connect to broker at ${options.address}: ${(err as Error).message}`, {
          cause: err,
          broker: options.address,
        }),
      );
    }
    ws.binaryType = 'arraybuffer';
    // Closing a socket that is still opening makes it report an error: nobody is left to hear it.
    const abandon = (): void => {
      ws.addEventListener('error', () => {});
      try {
        ws.close();
      } catch {
        // already closing
      }
    };
    const fail = (why: string): void => {
      cleanup();
      abandon();
      reject(new MqError('CONNECTION_ERROR', `cannot connect to broker at ${options.address}: ${why}`, { broker: options.address }));
    };
    const onOpen = (): void => {
      cleanup();
      resolve(new NativeSocket(ws, options.maxResponseBytes));
    };
    // A browser tells a script nothing about why a WebSocket failed (no errno, no HTTP status).
    const onError = (): void => fail('the WebSocket failed to open (is the broker running, and is that its WebSocket port?)');
    const onClose = (event: CloseEventLike): void => fail(`the WebSocket closed while opening (code ${event.code})`);
    const onAbort = (): void => {
      cleanup();
      abandon();
      reject(abortError(signal!));
    };
    const timer = unrefTimer(setTimeout(() => fail(`no answer within ${options.connectTimeoutMs} ms`), options.connectTimeoutMs));
    const cleanup = (): void => {
      clearTimeout(timer);
      ws.removeEventListener('open', onOpen);
      ws.removeEventListener('error', onError);
      ws.removeEventListener('close', onClose);
      signal?.removeEventListener('abort', onAbort);
    };
    ws.addEventListener('open', onOpen);
    ws.addEventListener('error', onError);
    ws.addEventListener('close', onClose);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
