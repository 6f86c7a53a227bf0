/**
 * The Node.js connect function (`@mq/client/transport`; bundlers that apply
 * the `browser` export condition get ./browser.ts instead): a `ws` WebSocket
 * to the broker, with a payload limit, a handshake timeout, optional
 * all-zero masks and request frames masked in place (./owned-frame-writer.ts).
 */
import WebSocket from 'ws';
import { MqError } from '@mq/protocol/errors';
import type { ClientSocket, ConnectionOptions } from '../connection.js';
import { abortError } from '../retrier.js';
import { addressToUrl } from './address.js';
import { ownedFrameWriter } from './owned-frame-writer.js';

/** The default {@link ConnectFn}: a WebSocket to the broker, open when the promise resolves. */
export function connectWebSocket(options: ConnectionOptions, signal?: AbortSignal): Promise<ClientSocket> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const tls = options.tls;
    const ws = new WebSocket(addressToUrl(options.address, tls !== undefined), {
      ...(tls
        ? {
            ...(tls.ca !== undefined ? { ca: tls.ca as string } : {}),
            ...(tls.cert !== undefined ? { cert: tls.cert as string } : {}),
            ...(tls.key !== undefined ? { key: tls.key as string } : {}),
            ...(tls.servername !== undefined ? { servername: tls.servername } : {}),
            rejectUnauthorized: tls.rejectUnauthorized ?? true,
          }
        : {}),
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
      // Masked frames: the connection's own request frames are masked in place instead of copied (an all-zero
      // mask needs no pass at all, and ws.send() then writes the caller's bytes as they are).
      const sendOwned = options.maskFrames === false ? undefined : ownedFrameWriter(ws);
      resolve(sendOwned ? Object.assign(ws, { sendOwned }) : ws);
    };
    // After a failed open, terminate() may still emit 'error': swallow it.
    const abandon = () => {
      ws.on('error', () => {});
      ws.terminate();
    };
    const onError = (err: Error & { code?: string }) => {
      cleanup();
      abandon();
      const hint = connectHint(err.code, tls !== undefined, tls?.cert !== undefined);
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


/** What to do about a failed connection, by its error code (TLS ones included). */
function connectHint(code: string | undefined, tls: boolean, clientCert: boolean): string {
  // The broker's side of mutual TLS (tls.client.auth): its alert, or (TLS 1.3, where the client's handshake ends first) the connection reset.
  if (code === 'ERR_SSL_TLSV13_ALERT_CERTIFICATE_REQUIRED') return ': the broker requires a client certificate (give one with tls.cert and tls.key / --tls-cert and --tls-key)';
  if (code === 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' || code === 'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE' || code === 'ERR_SSL_SSLV3_ALERT_CERTIFICATE_EXPIRED' || code === 'ERR_SSL_TLSV1_ALERT_DECRYPT_ERROR') {
    return ": the broker refused this client's certificate (it must be signed by a CA in the broker's tls.ca.file, and be valid now)";
  }
  if (code === 'ECONNRESET' && tls && clientCert) {
    return ": the broker closed the connection during the TLS handshake: most likely the broker refused this client's certificate (it must be signed by a CA in the broker's tls.ca.file, and be valid now); the broker's log says why";
  }
  if (code === 'ECONNREFUSED') return ' (is the broker running? start one with: mq broker start)';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return ": the broker's certificate is not for this host name (connect by a name it carries, or set tls.servername)";
  if (code === 'CERT_HAS_EXPIRED') return ": the broker's certificate has expired (renew it; the broker reloads it without a restart)";
  if (code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN' || code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY') {
    return ": the broker's certificate is not signed by a CA this client trusts (give the CA with tls.ca / --tls-ca)";
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') return tls ? ': the broker did not answer with TLS (is TLS on there? use ws:// without tls)' : '';
  if (code === 'ECONNRESET' && !tls) return ' (if the broker has TLS on, connect with tls / --tls-ca, i.e. wss://)';
  return '';
}
