/**
 * Two connected in-memory streams standing in for a TCP connection inside
 * this process: what one end writes, the other reads. The broker's own
 * clients (HTTP consumer instances) reach its client listener through a pair:
 * the same WebSocket framing, Connection, handler map, authorization and
 * quotas as any client, with no socket and no TLS to dial (a TLS-only
 * listener, a certificate for another host name, `tls.client.auth=required`
 * all stay out of it). Writes wait while the reader's buffer is full
 * (backpressure, as a socket's), so nothing grows without bound, and are
 * copied (the writer may reuse its buffer once its write completed).
 */
import { Duplex } from 'node:stream';
import WebSocket from 'ws';
import type { ClientSocket, ConnectFn } from '@mq/client';
import { MqError } from '@mq/protocol/errors';

/** One end of an in-process pair: a Duplex with the few net.Socket methods ws and http call. */
export class InProcessSocket extends Duplex {
  peer!: InProcessSocket;
  /** A write the peer had no room for: released when the peer reads again. */
  private waiting: (() => void) | undefined;
  /** No network address: the broker's own client (never loopback, never an IP to count). */
  readonly remoteAddress = undefined;
  readonly remotePort = undefined;

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (err?: Error | null) => void): void {
    if (this.peer.destroyed) return callback(new Error('in-process connection closed'));
    // A copy, as a socket's write hands the bytes to the kernel: once the callback runs the writer may reuse its
    // buffer (the broker's fetch answers give their pooled record buffers back then), while the reader (ws's
    // parser) may still hold the chunk it was given.
    if (this.peer.push(Buffer.from(chunk))) callback();
    else this.waiting = () => callback();
  }

  override _read(): void {
    const w = this.peer.waiting;
    this.peer.waiting = undefined;
    w?.();
  }

  override _final(callback: (err?: Error | null) => void): void {
    if (!this.peer.destroyed) this.peer.push(null);
    callback();
  }

  override _destroy(err: Error | null, callback: (err?: Error | null) => void): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
    if (!this.peer.destroyed) {
      this.peer.push(null);
      this.peer.destroy();
    }
    callback(err);
  }

  setTimeout(): this {
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
}

/** A connected pair: [the client's end, the server's end]. */
export function inProcessPair(): [InProcessSocket, InProcessSocket] {
  const a = new InProcessSocket();
  const b = new InProcessSocket();
  a.peer = b;
  b.peer = a;
  return [a, b];
}

export function isInProcess(socket: unknown): boolean {
  return socket instanceof InProcessSocket;
}

/**
 * A client connect function (`MqClient` components) that opens a WebSocket
 * over `open()`'s in-process pair: the broker's own client reaches its own
 * listener without a socket. The WebSocket is `ws`'s, as a Node client's is.
 */
export function connectInProcess(open: () => InProcessSocket): ConnectFn {
  return (options, signal) =>
    new Promise<ClientSocket>((resolve, reject) => {
      if (signal?.aborted) return reject(new MqError('ABORTED', 'aborted'));
      const ws = new WebSocket('ws://in-process/', { createConnection: () => open() as never, perMessageDeflate: false, maxPayload: options.maxResponseBytes });
      const done = (err?: Error) => {
        ws.off('open', onOpen);
        ws.off('error', onError);
        signal?.removeEventListener('abort', onAbort);
        if (!err) return resolve(ws as unknown as ClientSocket);
        ws.on('error', () => undefined);
        ws.terminate();
        reject(err);
      };
      const onOpen = () => done();
      const onError = (err: Error) => done(new MqError('CONNECTION_ERROR', `cannot open an in-process connection to this broker: ${err.message}`, { cause: err }));
      const onAbort = () => done(new MqError('ABORTED', 'aborted'));
      ws.on('open', onOpen);
      ws.on('error', onError);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
}
