/**
 * Cluster authentication on the inter-broker listener
 * (`cluster.secret.file`, @mq/protocol/cluster-auth): the secret file's
 * checks, and the dialling side, which wraps a connect function so that a
 * connection proves the secret (and checks the listener's proof) before the
 * Connection on top of it sends its first frame. The listening side is in
 * server/connection.ts (the first frames of every inter-broker connection).
 */
import { readFileSync, statSync } from 'node:fs';
import { MqError, errorCodeFromNumber } from '@mq/protocol/errors';
import { ClusterAuthDialer, MIN_CLUSTER_SECRET_BYTES } from '@mq/protocol/cluster-auth';
import { decodeResponse, encodeRequest, type mq } from '@mq/protocol/wire';
import { connectWebSocket, type ConnectFn } from '@mq/client/internal';
import type { ClientSocket, ConnectionOptions } from '@mq/client';

/** Permission bits a cluster secret file may have: read and write for its owner only (0600). */
const SECRET_FILE_MODE = 0o600;

/**
 * Reads `cluster.secret.file`: undefined when unset; INVALID_CONFIG when it
 * cannot be read, others may read or write it (mode above 0600), or it holds
 * fewer than 16 bytes. A trailing newline (as `echo` writes one) is not part
 * of the secret.
 */
export function readClusterSecret(file: string): Buffer | undefined {
  if (!file) return undefined;
  let mode: number;
  let bytes: Buffer;
  try {
    mode = statSync(file).mode & 0o777;
    bytes = readFileSync(file);
  } catch (err) {
    throw new MqError('INVALID_CONFIG', `cluster.secret.file: cannot read ${file}: ${(err as Error).message}`);
  }
  if ((mode & ~SECRET_FILE_MODE) !== 0) {
    throw new MqError('INVALID_CONFIG', `cluster.secret.file: ${file} has mode 0${mode.toString(8)}; only its owner may read it (chmod 600 ${file})`);
  }
  let end = bytes.length;
  if (end > 0 && bytes[end - 1] === 0x0a) end--;
  if (end > 0 && bytes[end - 1] === 0x0d) end--;
  const secret = bytes.subarray(0, end);
  if (secret.length < MIN_CLUSTER_SECRET_BYTES) {
    throw new MqError('INVALID_CONFIG', `cluster.secret.file: ${file} holds ${secret.length} bytes; a cluster secret has at least ${MIN_CLUSTER_SECRET_BYTES} (e.g. openssl rand -base64 32 > ${file})`);
  }
  return Buffer.from(secret);
}

export interface ClusterAuthDial {
  /** The cluster secret. */
  readonly secret: Uint8Array;
  /** This process's broker (node) id. */
  readonly brokerId: number;
}

/**
 * A socket whose messages go to the authentication exchange until it is
 * done, then to whoever listens (the Connection); close and error events
 * pass straight through.
 */
class AuthenticatingSocket implements ClientSocket {
  private readonly listeners: Array<(data: Buffer, isBinary: boolean) => void> = [];
  /** The exchange step waiting for its answer. */
  private exchange: { onMessage(data: Buffer): void; onClose(code: number, reason: Buffer): void } | undefined;

  constructor(private readonly inner: ClientSocket) {
    inner.on('message', (data: Buffer, isBinary: boolean) => {
      if (this.exchange) this.exchange.onMessage(data);
      else for (const l of this.listeners) l(data, isBinary);
    });
    inner.on('close', (code: number, reason: Buffer) => this.exchange?.onClose(code, reason));
  }

  get readyState(): number {
    return this.inner.readyState;
  }
  get bufferedAmount(): number {
    return this.inner.bufferedAmount;
  }
  send(data: Uint8Array, options: { binary: boolean }, cb: (err?: Error) => void): void {
    this.inner.send(data, options, cb);
  }
  close(code?: number, reason?: string): void {
    this.inner.close(code, reason);
  }
  terminate(): void {
    this.inner.terminate();
  }
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: 'close', listener: (code: number, reason: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'message' | 'close' | 'error', listener: (...args: never[]) => void): unknown {
    if (event === 'message') this.listeners.push(listener as (data: Buffer, isBinary: boolean) => void);
    else this.inner.on(event as 'close', listener as (code: number, reason: Buffer) => void);
    return this;
  }

  /** Sends one ClusterAuth request and waits for its answer (the connection's only frame in flight). */
  request(options: ConnectionOptions, correlationId: number, body: mq.IClusterAuthRequest, timeoutMs: number): Promise<mq.IClusterAuthResponse> {
    return new Promise((resolve, reject) => {
      const done = (err: Error | undefined, value?: mq.IClusterAuthResponse) => {
        clearTimeout(timer);
        this.exchange = undefined;
        if (err) reject(err);
        else resolve(value!);
      };
      const timer = setTimeout(() => done(new MqError('REQUEST_TIMED_OUT', `cluster authentication with ${options.address}: no answer within ${timeoutMs} ms`)), timeoutMs);
      const onClose = (code: number, reason: Buffer) =>
        done(new MqError('CLUSTER_AUTHENTICATION_FAILED', `cluster authentication with ${options.address}: connection closed (${code}${reason.length > 0 ? ` ${reason.toString('utf8')}` : ''})`, { retriable: false }));
      const onMessage = (data: Buffer) => {
        let frame: mq.ResponseFrame;
        try {
          frame = decodeResponse(data);
        } catch (err) {
          done(err as Error);
          return;
        }
        if (frame.correlationId !== correlationId) return done(new MqError('CORRUPT_MESSAGE', `cluster authentication with ${options.address}: an answer to request ${frame.correlationId}, not ${correlationId}`));
        if (frame.errorCode) {
          const code = errorCodeFromNumber(frame.errorCode);
          return done(new MqError(code, `cluster authentication with ${options.address} refused: ${frame.errorMessage || code}`, { retriable: false }));
        }
        if (!frame.clusterAuth) return done(new MqError('CLUSTER_AUTHENTICATION_FAILED', `cluster authentication with ${options.address}: the answer has no cluster_auth body (a listener without cluster.secret.file?)`, { retriable: false }));
        done(undefined, frame.clusterAuth);
      };
      this.exchange = { onMessage, onClose };
      this.inner.send(encodeRequest({ correlationId, apiVersion: 0, clientId: options.clientId, clusterAuth: body }), { binary: true }, (err) => {
        if (err) done(new MqError('CONNECTION_ERROR', `cluster authentication with ${options.address}: ${err.message}`, { cause: err }));
      });
    });
  }

  /** From now on messages go to the listeners. */
  release(): void {
    this.exchange = undefined;
  }
}

/**
 * A connect function whose connections prove the cluster secret first:
 * hello (id, nonce), check the listener's proof (and, with `expectedId`,
 * that the node dialled is the one that answered), send this node's proof,
 * wait for the acceptance. Fails with CLUSTER_AUTHENTICATION_FAILED (not
 * retriable) when either side's proof is wrong; the socket is closed then.
 */
export function clusterAuthConnect(auth: ClusterAuthDial, inner: ConnectFn = connectWebSocket, expectedId?: number): ConnectFn {
  return async (options, signal) => {
    const socket = new AuthenticatingSocket(await inner(options, signal));
    try {
      const dialer = new ClusterAuthDialer(auth.secret, 'broker', auth.brokerId);
      const timeoutMs = options.connectTimeoutMs;
      const challenge = await socket.request(options, 1, { step: 1, brokerId: auth.brokerId, nonce: dialer.nonce }, timeoutMs);
      const proof = dialer.answer({ id: challenge.brokerId ?? 0, nonce: challenge.nonce, proof: challenge.proof }, expectedId);
      await socket.request(options, 2, { step: 2, brokerId: auth.brokerId, proof }, timeoutMs);
      socket.release();
      return socket;
    } catch (err) {
      socket.terminate();
      throw err;
    }
  };
}
