/** Options of MqClient: how to reach the cluster and how long to wait. */
import { silentLogger, type Logger } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { parseRetryOptions, type ParsedRetryOptions, type RetryOptions } from './retrier.js';

export interface ClientOptions {
  /** `host:port`, a comma-separated list of them, or an array (default localhost:9092). */
  bootstrap?: string | string[];
  clientId?: string;
  /** How long one request may wait for its answer (default 30 s). */
  requestTimeoutMs?: number;
  /** How long opening a connection and its handshake may take (default 10 s). */
  connectTimeoutMs?: number;
  /** Cached topic metadata older than this is refreshed before use (default 5 min). */
  metadataMaxAgeMs?: number;
  /** Largest response frame accepted (default 128 MiB). */
  maxResponseBytes?: number;
  /** The retry policy of every request. */
  retry?: RetryOptions;
  /**
   * Mask client frames with a random key, as RFC 6455 requires (default
   * true). false uses an all-zero key, which skips the masking pass over
   * every byte sent: only for trusted networks without intermediaries that
   * cache, where the masking buys nothing.
   */
  maskFrames?: boolean;
  /**
   * Where the client logs (reconnects, retries, group rebalances, failed
   * auto-commits): anything with pino's `debug`/`info`/`warn`/`error(obj, msg)`,
   * e.g. a pino logger. Default: nothing is logged.
   */
  logger?: Logger;
  /**
   * Authenticate every connection with SASL SCRAM (brokers with
   * authentication.enabled=true require it). The password never crosses the
   * wire. Node and browsers alike (WebCrypto; browsers offer it on https
   * pages and pages from localhost).
   */
  sasl?: SaslOptions | OAuthBearerOptions;
  /**
   * Connect with TLS (wss://) to every broker (brokers with tls.cert.file).
   * PEM strings or Buffers; `cert`/`key` for mutual TLS. Node only (a
   * browser uses wss:// addresses and its own trust store).
   */
  tls?: TlsOptions;
}

export interface TlsOptions {
  /** CA(s) to trust instead of the system's (a private CA). */
  ca?: string | Uint8Array | Array<string | Uint8Array>;
  /** Client certificate and key (mutual TLS: the certificate's CN is the principal). */
  cert?: string | Uint8Array;
  key?: string | Uint8Array;
  /** The name the broker's certificate must carry (default: the host connected to). */
  servername?: string;
  /** Default true: a certificate that does not verify is refused. false only for tests. */
  rejectUnauthorized?: boolean;
}

export interface SaslOptions {
  /** Default SCRAM-SHA-256. */
  mechanism?: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  username: string;
  password: string;
}

/**
 * SASL OAUTHBEARER (RFC 7628 framing) with a token the broker issued: one it
 * delegated (how a broker's own HTTP consumer instances log in as their HTTP
 * caller's principal) or one from its HTTP API's `POST /tokens` (how the web
 * console's live tail logs in as the console's user). Brokers accept no
 * other bearer tokens on this door yet.
 */
export interface OAuthBearerOptions {
  mechanism: 'OAUTHBEARER';
  token: string;
}

/** `sasl` once checked: a SCRAM login or a bearer token. */
export type ParsedSasl = Required<SaslOptions> | OAuthBearerOptions;

export const DEFAULT_BOOTSTRAP = 'localhost:9092';
export const DEFAULT_PORT = 9092;
export const DEFAULT_CLIENT_ID = 'mq-client';
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
export const DEFAULT_METADATA_MAX_AGE_MS = 300_000;
export const DEFAULT_MAX_RESPONSE_BYTES = 128 * 1024 * 1024;

export interface ParsedClientOptions {
  bootstrap: string[];
  clientId: string;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  metadataMaxAgeMs: number;
  maxResponseBytes: number;
  retry: ParsedRetryOptions;
  maskFrames: boolean;
  logger: Logger;
  sasl: ParsedSasl | undefined;
  tls: TlsOptions | undefined;
}

export function invalidArgument(message: string): MqError {
  return new MqError('INVALID_ARGUMENT', message);
}

export function positiveInt(name: string, value: number, min = 1): number {
  if (!Number.isSafeInteger(value) || value < min) throw invalidArgument(`${name} must be an integer >= ${min}, got ${value}`);
  return value;
}

/** Normalises one `host:port` (or ws:// URL); a missing port means 9092. */
export function parseAddress(address: string): string {
  const a = address.trim();
  if (/^wss?:\/\//.test(a)) return a;
  const m = /^(\[[^\]]+\]|[^:/\s]+)(?::(\d+))?$/.exec(a);
  if (!m) throw invalidArgument(`bootstrap address "${address}" is not host:port`);
  const port = m[2] === undefined ? DEFAULT_PORT : Number(m[2]);
  if (port < 1 || port > 65535) throw invalidArgument(`bootstrap address "${address}" has an invalid port`);
  return `${m[1]}:${port}`;
}

export function parseClientOptions(options: ClientOptions = {}): ParsedClientOptions {
  const raw = options.bootstrap ?? DEFAULT_BOOTSTRAP;
  const list = (Array.isArray(raw) ? raw : raw.split(',')).map((s) => s.trim()).filter((s) => s.length > 0);
  if (list.length === 0) throw invalidArgument('bootstrap needs at least one host:port');
  return {
    bootstrap: list.map(parseAddress),
    clientId: options.clientId ?? DEFAULT_CLIENT_ID,
    requestTimeoutMs: positiveInt('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
    connectTimeoutMs: positiveInt('connectTimeoutMs', options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS),
    metadataMaxAgeMs: positiveInt('metadataMaxAgeMs', options.metadataMaxAgeMs ?? DEFAULT_METADATA_MAX_AGE_MS, 0),
    maxResponseBytes: positiveInt('maxResponseBytes', options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES, 1024),
    retry: parseRetryOptions(options.retry),
    maskFrames: options.maskFrames ?? true,
    logger: parseLogger(options.logger),
    sasl: parseSasl(options.sasl),
    tls: options.tls === undefined ? undefined : { ...options.tls },
  };
}

function parseSasl(sasl: SaslOptions | OAuthBearerOptions | undefined): ParsedSasl | undefined {
  if (sasl === undefined) return undefined;
  if (sasl.mechanism === 'OAUTHBEARER') {
    if (typeof sasl.token !== 'string' || sasl.token.length === 0) throw invalidArgument('sasl.token must be a non-empty string');
    return { mechanism: 'OAUTHBEARER', token: sasl.token };
  }
  const mechanism = sasl.mechanism ?? 'SCRAM-SHA-256';
  if (mechanism !== 'SCRAM-SHA-256' && mechanism !== 'SCRAM-SHA-512') throw invalidArgument(`sasl.mechanism must be SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER, got ${String(mechanism)}`);
  if (typeof sasl.username !== 'string' || sasl.username.length === 0) throw invalidArgument('sasl.username must be a non-empty string');
  if (typeof sasl.password !== 'string') throw invalidArgument('sasl.password must be a string');
  return { mechanism, username: sasl.username, password: sasl.password };
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;

function parseLogger(logger: Logger | undefined): Logger {
  if (logger === undefined) return silentLogger;
  const missing = LOG_LEVELS.filter((level) => typeof (logger as unknown as Record<string, unknown> | null)?.[level] !== 'function');
  if (missing.length > 0) {
    throw invalidArgument(`logger must have pino's debug, info, warn and error methods (a pino logger fits); it lacks ${missing.join(', ')}`);
  }
  return logger;
}
