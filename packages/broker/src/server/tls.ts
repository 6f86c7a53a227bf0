/**
 * TLS for the client-facing listeners (the WebSocket port and the HTTP API):
 * a certificate and key from files, optional client certificates (mutual
 * TLS) whose subject CN becomes the principal, and certificates reloaded
 * without a restart (the files are checked every `tls.reload.interval.ms`;
 * new connections get the new certificate, open ones keep theirs).
 */
import { readFileSync, statSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type RequestListener, type Server, type ServerOptions } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { createServer as createTlsServer, type TLSSocket } from 'node:tls';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { Logger } from 'pino';
import { MqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../config/broker-config.js';

export type ClientAuth = 'none' | 'requested' | 'required';

export interface TlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string | undefined;
  readonly clientAuth: ClientAuth;
  readonly reloadMs: number;
}

/** The TLS settings of the client listeners; undefined when no certificate is configured. */
export function parseTlsSettings(config: BrokerConfig): TlsSettings | undefined {
  const certFile = config.get('tls.cert.file');
  const keyFile = config.get('tls.key.file');
  const caFile = config.get('tls.ca.file') || undefined;
  const clientAuth = config.get('tls.client.auth') as ClientAuth;
  if (!certFile && !keyFile) {
    if (caFile || clientAuth !== 'none') throw new MqError('INVALID_CONFIG', 'tls.ca.file and tls.client.auth need TLS: set tls.cert.file and tls.key.file');
    return undefined;
  }
  if (!certFile || !keyFile) throw new MqError('INVALID_CONFIG', 'TLS needs both tls.cert.file and tls.key.file');
  if (clientAuth !== 'none' && !caFile) throw new MqError('INVALID_CONFIG', `tls.client.auth=${clientAuth} needs tls.ca.file (the CA that signs client certificates)`);
  const s = { certFile, keyFile, caFile, clientAuth, reloadMs: config.int('tls.reload.interval.ms') };
  readMaterial(s); // fail at start, not at the first connection
  return s;
}

/**
 * The TLS of the inter-broker and Raft links (inter.broker.tls.enabled): this
 * broker's certificate and key, and peers verified both ways against the
 * CA: inter.broker.tls.{cert,key,ca}.file, each defaulting to its tls.*
 * counterpart. Undefined when off.
 */
export function parseInterBrokerTls(config: BrokerConfig): TlsSettings | undefined {
  if (!config.bool('inter.broker.tls.enabled')) return undefined;
  const file = (what: 'cert' | 'key' | 'ca') => config.get(`inter.broker.tls.${what}.file`) || config.get(`tls.${what}.file`);
  const missing = (['cert', 'key', 'ca'] as const).filter((w) => !file(w)).map((w) => `inter.broker.tls.${w}.file (or tls.${w}.file)`);
  if (missing.length > 0) {
    throw new MqError('INVALID_CONFIG', `inter.broker.tls.enabled=true needs ${missing.join(', ')}: every broker and controller presents its certificate and verifies its peers' against the CA`);
  }
  const s: TlsSettings = { certFile: file('cert'), keyFile: file('key'), caFile: file('ca'), clientAuth: 'required', reloadMs: config.int('tls.reload.interval.ms') };
  readMaterial(s); // fail at start, not at the first connection
  return s;
}

/** The PEM files of `s`, read now (a dial reads them each time, so a renewed certificate is used without a restart). */
export function readMaterial(s: TlsSettings): { cert: Buffer; key: Buffer; ca?: Buffer } {
  const read = (what: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new MqError('INVALID_CONFIG', `cannot read ${what} ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: read('tls.cert.file', s.certFile), key: read('tls.key.file', s.keyFile), ...(s.caFile ? { ca: read('tls.ca.file', s.caFile) } : {}) };
}

/**
 * How this broker's own clients (HTTP consumer instances) dial another broker's TLS client listener: trusting
 * inter.broker.tls.ca.file, else tls.ca.file, else the system's CAs, and checking that the certificate names the
 * host dialled (the broker's registered host). With tls.client.auth=required (the cluster's other brokers alike)
 * it presents this broker's certificate (inter.broker.tls.cert.file, else tls.cert.file), which the instance's
 * delegated login then replaces as the connection's principal. Read at each call, so renewed files are used by the
 * next client.
 */
export function peerClientTls(config: BrokerConfig): { ca?: Buffer; cert?: Buffer; key?: Buffer } {
  const file = (what: 'cert' | 'key' | 'ca') => config.get(`inter.broker.tls.${what}.file`) || config.get(`tls.${what}.file`);
  const read = (what: 'cert' | 'key' | 'ca') => {
    try {
      return readFileSync(file(what));
    } catch (err) {
      throw new MqError('INVALID_CONFIG', `cannot read ${file(what)} (inter.broker.tls.${what}.file or tls.${what}.file): ${(err as Error).message}`);
    }
  };
  return {
    ...(file('ca') ? { ca: read('ca') } : {}),
    ...(config.get('tls.client.auth') === 'required' ? { cert: read('cert'), key: read('key') } : {}),
  };
}

/** An HTTP server, or an HTTPS one with `tls`; TLS handshake failures are one log line each. */
export function createListenerServer(tls: TlsSettings | undefined, options: ServerOptions, listener: RequestListener | undefined, logger: Logger, what: string): Server {
  if (!tls) return createHttpServer(options, listener);
  const m = readMaterial(tls);
  const server = createHttpsServer(
    {
      ...options,
      ...m,
      requestCert: tls.clientAuth !== 'none',
      rejectUnauthorized: tls.clientAuth === 'required',
      minVersion: 'TLSv1.2',
    },
    listener,
  );
  logHandshakeFailures(server, logger, what);
  return server as unknown as Server;
}

/** A plain TCP server, or a TLS one with `tls` (the Kafka listener); failed handshakes are one log line each. */
export function createSocketServer(tls: TlsSettings | undefined, onSocket: (socket: Socket) => void, logger: Logger, what: string, handshakeTimeoutMs: number): NetServer {
  if (!tls) return createNetServer(onSocket);
  const server = createTlsServer(
    { ...readMaterial(tls), requestCert: tls.clientAuth !== 'none', rejectUnauthorized: tls.clientAuth === 'required', minVersion: 'TLSv1.2', handshakeTimeout: handshakeTimeoutMs },
    onSocket,
  );
  logHandshakeFailures(server, logger, what);
  return server;
}

/**
 * One `TLS handshake failed` line per failed handshake, with the remote address and why. A client certificate
 * that does not verify against tls.ca.file (tls.client.auth=required) is refused by node:tls after the handshake,
 * which reports only a reset ("socket hang up", the socket already gone): the line says what was wrong with the
 * certificate (`clientCertificate`: node's verification code, e.g. UNABLE_TO_VERIFY_LEAF_SIGNATURE for another
 * CA) and whence it came (taken when the TCP connection arrived).
 */
function logHandshakeFailures(server: NetServer | ReturnType<typeof createHttpsServer>, logger: Logger, what: string): void {
  const remotes = new WeakMap<Socket, string>();
  server.on('connection', (raw: Socket) => remotes.set(raw, `${raw.remoteAddress ?? '?'}:${raw.remotePort ?? '?'}`));
  server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: TLSSocket) => {
    const parent = (socket as unknown as { _parent?: Socket })._parent;
    const remote = (parent && remotes.get(parent)) ?? `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? '?'}`;
    const refused = socket.authorizationError;
    if (refused !== undefined) {
      logger.warn(
        { listener: what, remote, code: 'CLIENT_CERTIFICATE_REFUSED', clientCertificate: String(refused), err: `the client's certificate does not verify against tls.ca.file (${String(refused)})` },
        'TLS handshake failed: connection closed',
      );
      return;
    }
    logger.warn({ listener: what, remote, code: err.code, err: err.message }, 'TLS handshake failed: connection closed');
  });
}

/** Checks the certificate files every reloadMs and gives `server` (or the Raft transport) the new ones; returns the stop function. */
export function watchCertificates(server: Server | NetServer | { setSecureContext(o: { cert: Buffer; key: Buffer; ca?: Buffer }): void }, tls: TlsSettings | undefined, logger: Logger, what: string): () => void {
  if (!tls) return () => undefined;
  const stamp = () => [tls.certFile, tls.keyFile, tls.caFile].map((f) => (f ? statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0 : 0)).join(':');
  let last = stamp();
  const timer = setInterval(() => {
    try {
      const now = stamp();
      if (now === last) return;
      last = now;
      (server as unknown as { setSecureContext(o: object): void }).setSecureContext(readMaterial(tls));
      logger.info({ listener: what, certFile: tls.certFile }, 'TLS certificate reloaded');
    } catch (err) {
      logger.error({ listener: what, err: (err as Error).message }, 'TLS certificate reload failed; the previous certificate stays in use');
    }
  }, tls.reloadMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The principal of a verified client certificate (User:<subject CN>), if the socket has one. */
export function tlsPrincipal(socket: Socket): string | undefined {
  const t = socket as TLSSocket;
  if (!t.encrypted || !t.authorized) return undefined;
  const cn = t.getPeerCertificate()?.subject?.CN;
  const name = Array.isArray(cn) ? cn[0] : cn;
  return name ? `User:${name}` : undefined;
}

/** Whether a socket is TLS. */
export function isTlsSocket(socket: Socket): boolean {
  return (socket as TLSSocket).encrypted === true;
}

/** Whether a request arrived over TLS. */
export function isEncrypted(req: IncomingMessage): boolean {
  return (req.socket as TLSSocket).encrypted === true;
}
