/**
 * The Node.js connect function (`@mq/client/transport`; bundlers that apply
 * the `browser` export condition get ./browser.ts instead): a `ws` WebSocket
 * to the broker, with a payload limit, a handshake timeout and optional
 * all-zero masks.
 */
import WebSocket from 'ws';
import { MqError } from '@mq/protocol/errors';
import type { ClientSocket, ConnectionOptions } from '../connection.js';
import { abortError } from '../retrier.js';
import { addressToUrl } from './address.js';

/** The default {@link ConnectFn}: a WebSocket to the broker, open when the promise resolves. */
export function connectWebSocket(options: ConnectionOptions, signal?: AbortSignal): Promise<ClientSocket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const ws = new WebSocket(addressToUrl(options.address), {
      perMessageDeflate: false,
      maxPayload: options.maxResponseBytes,
      handshakeTimeout: options.connectTimeoutMs,
      ...(options.maskFrames === false ? { generateMask: (mask: Buffer) => void mask.fill(0) } : {}),
    });
    const cleanup = () => {
      ws.off('open', onOpen);
      ws.off('error', onError);
      ws.off('unexpected-response', onUnexpected);
      signal?.removeEventListener('abort', onAbort);
    };
    const onOpen = () => {
      cleanup();
      resolve(ws);
    };
    // After a failed open, terminate() may still emit 'error': swallow it.
    const abandon = () => {
      ws.on('error', () => {});
      ws.terminate();
    };
    const onError = (err: Error & { code?: string }) => {
      cleanup();
      abandon();
      const hint = err.code === 'ECONNREFUSED' ? ' (is the broker running? start one with: mq broker start)' : '';
      reject(
        new MqError('CONNECTION_ERROR', `cannot connect to broker at ${options.address}: ${err.code ?? err.message}${hint}`, {
          cause: err,
          broker: options.address,
        }),
      );
    };
    const onUnexpected = (_req: unknown, res: { statusCode?: number }) => {
      cleanup();
      abandon();
      reject(
        new MqError(
          'CONNECTION_ERROR',
          `${options.address} answered HTTP ${res.statusCode} instead of a WebSocket upgrade (is that the broker's WebSocket port, not its HTTP port?)`,
          { broker: options.address },
        ),
      );
    };
    const onAbort = () => {
      cleanup();
      abandon();
      reject(abortError(signal!));
    };
    ws.on('open', onOpen);
    ws.on('error', onError);
    ws.on('unexpected-response', onUnexpected);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

