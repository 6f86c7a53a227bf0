/**
 * The client's side of SCRAM (RFC 5802; SHA-256 from RFC 7677, SHA-512 as
 * Kafka registers it) over WebCrypto (`globalThis.crypto.subtle`: PBKDF2,
 * HMAC, digest), so the one implementation runs in Node (>= 20 has
 * `globalThis.crypto`) and in browsers alike, and PBKDF2 never blocks the
 * event loop (Node runs it on the libuv thread pool, browsers off the main
 * thread). Both builds of `@mq/protocol/scram` export it.
 *
 * - `ScramClient`: one exchange, first() → await final(serverFirst) →
 *   verify(serverFinal) (the broker's signature: it holds the credential).
 * - `scramCredential`: what a broker stores for a password (salt,
 *   iterations, StoredKey, ServerKey), computed by the client (`mq user
 *   create` sends the credential, never the password) and by the broker to
 *   check a PLAIN or HTTP Basic password (the one derivation).
 *
 * Passwords are taken as UTF-8 bytes without SASLprep, as Kafka does, so
 * credentials match Kafka clients'. Channel binding is not supported.
 * Browsers expose WebCrypto only in secure contexts (https, or http from
 * localhost): elsewhere the login fails with UNSUPPORTED_SASL_MECHANISM.
 */
import { MqError } from './errors.js';
import { checkIterations, encodeSaslName, SCRAM_DEFAULT_ITERATIONS, SCRAM_MAX_ITERATIONS, SCRAM_MAX_MESSAGE_BYTES, SCRAM_MECHANISMS, SCRAM_MIN_ITERATIONS, type ScramMechanism } from './scram-common.js';

/** Hash algorithm parameters (node:crypto names); `sha1` only for RFC 5802's own test vector. */
export interface ScramDigest {
  hash: 'sha1' | 'sha256' | 'sha512';
  keyLength: number;
}

/** What a broker stores for one user and mechanism. */
export interface ScramCredential {
  mechanism: ScramMechanism;
  iterations: number;
  salt: Uint8Array;
  storedKey: Uint8Array;
  serverKey: Uint8Array;
}

/** For tests against RFC 5802's own vector (SCRAM-SHA-1): never offered by a broker. */
export const SCRAM_SHA1_FOR_TESTS: ScramDigest = { hash: 'sha1', keyLength: 20 };

export function scramDigestOf(mechanism: ScramMechanism | ScramDigest): ScramDigest {
  return typeof mechanism === 'string' ? SCRAM_MECHANISMS[mechanism] : mechanism;
}

const WEB_HASH = { sha1: 'SHA-1', sha256: 'SHA-256', sha512: 'SHA-512' } as const;
const utf8 = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (!s) {
    throw new MqError('UNSUPPORTED_SASL_MECHANISM', 'SCRAM needs WebCrypto (crypto.subtle), which this runtime does not offer: browsers have it only on https pages or pages from localhost');
  }
  return s;
}
type SubtleCrypto = typeof globalThis.crypto.subtle;

function bytes(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? utf8.encode(data) : data;
}

async function hmac(d: ScramDigest, key: Uint8Array, data: string | Uint8Array): Promise<Uint8Array> {
  const s = subtle();
  const k = await s.importKey('raw', key, { name: 'HMAC', hash: WEB_HASH[d.hash] }, false, ['sign']);
  return new Uint8Array(await s.sign('HMAC', k, bytes(data)));
}

async function h(d: ScramDigest, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().digest(WEB_HASH[d.hash], data));
}

/** PBKDF2-HMAC (RFC 5802's Hi()); asynchronous everywhere. */
async function saltedPassword(d: ScramDigest, password: string, salt: Uint8Array, iterations: number): Promise<Uint8Array> {
  const s = subtle();
  const key = await s.importKey('raw', utf8.encode(password), 'PBKDF2', false, ['deriveBits']);
  return new Uint8Array(await s.deriveBits({ name: 'PBKDF2', hash: WEB_HASH[d.hash], salt, iterations }, key, d.keyLength * 8));
}

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** Compares in time independent of where the inputs differ. */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a[i]! ^ b[i]!;
  return diff === 0;
}

export function toBase64(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i++) s += String.fromCharCode(b[i]!);
  return btoa(s);
}

export function fromBase64(s: string): Uint8Array {
  let bin: string;
  try {
    bin = atob(s);
  } catch {
    throw scramFailure('malformed base64 in a SCRAM message');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function scramFailure(message: string): MqError {
  return new MqError('SASL_AUTHENTICATION_FAILED', message);
}

/** The StoredKey and ServerKey a password gives with this salt and iteration count. */
export async function scramKeys(mechanism: ScramMechanism | ScramDigest, password: string, salt: Uint8Array, iterations: number): Promise<{ storedKey: Uint8Array; serverKey: Uint8Array }> {
  const d = scramDigestOf(mechanism);
  const sp = await saltedPassword(d, password, salt, iterations);
  const [clientKey, serverKey] = await Promise.all([hmac(d, sp, 'Client Key'), hmac(d, sp, 'Server Key')]);
  return { storedKey: await h(d, clientKey), serverKey };
}

/** The credential a broker stores for `password` (a new random salt unless one is given). */
export async function scramCredential(mechanism: ScramMechanism, password: string, options: { salt?: Uint8Array; iterations?: number } = {}): Promise<ScramCredential> {
  const iterations = options.iterations ?? SCRAM_DEFAULT_ITERATIONS;
  checkIterations(iterations);
  const salt = options.salt ?? crypto.getRandomValues(new Uint8Array(32));
  return { mechanism, iterations, salt, ...(await scramKeys(mechanism, password, salt, iterations)) };
}

/** saslname decoding (RFC 5802 5.1): '=2C' and '=3D' back to ',' and '='. */
export function decodeSaslName(s: string): string {
  if (/=(?!2C|3D)/.test(s)) throw scramFailure('malformed SCRAM user name');
  return s.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/** The attributes of a SCRAM message (`k=v,k=v`), in order. */
export function scramAttributes(message: string): Array<[string, string]> {
  return message.split(',').map((part) => {
    if (!/^[A-Za-z]=/.test(part)) throw scramFailure('malformed SCRAM message');
    return [part[0]!, part.slice(2)];
  });
}

/** A SCRAM message as text (bounded: SCRAM_MAX_MESSAGE_BYTES). */
export function scramText(message: Uint8Array | string): string {
  if (typeof message === 'string') return message;
  if (message.length > SCRAM_MAX_MESSAGE_BYTES) throw scramFailure(`SCRAM message longer than ${SCRAM_MAX_MESSAGE_BYTES} bytes`);
  return new TextDecoder().decode(message);
}

export const SCRAM_BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** A fresh nonce: 24 random bytes, base64 (printable, no ','). */
export function scramNonce(): string {
  return toBase64(crypto.getRandomValues(new Uint8Array(24)));
}

/** The client's side of one exchange: first() → await final(serverFirst) → verify(serverFinal). */
export class ScramClient {
  private readonly d: ScramDigest;
  private readonly clientNonce: string;
  private clientFirstBare = '';
  private expectedServerSignature: Uint8Array | undefined;

  constructor(
    mechanism: ScramMechanism | ScramDigest,
    private readonly username: string,
    private readonly password: string,
    options: { nonce?: string } = {},
  ) {
    this.d = scramDigestOf(mechanism);
    this.clientNonce = options.nonce ?? scramNonce();
  }

  first(): string {
    this.clientFirstBare = `n=${encodeSaslName(this.username)},r=${this.clientNonce}`;
    return `n,,${this.clientFirstBare}`;
  }

  async final(serverFirstMessage: Uint8Array | string): Promise<string> {
    const serverFirst = scramText(serverFirstMessage);
    const a = scramAttributes(serverFirst);
    if (a[0]?.[0] === 'e') throw scramFailure(`the broker refused the login: ${a[0][1]}`);
    const [r, s, i] = [a[0], a[1], a[2]];
    if (r?.[0] !== 'r' || s?.[0] !== 's' || i?.[0] !== 'i') throw scramFailure('malformed SCRAM server-first message');
    if (!r[1].startsWith(this.clientNonce) || r[1].length <= this.clientNonce.length) throw scramFailure('the server nonce does not extend the client nonce');
    const iterations = Number(i[1]);
    if (!/^\d+$/.test(i[1]) || iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
      throw scramFailure(`the broker asked for ${i[1]} SCRAM iterations (accepted: ${SCRAM_MIN_ITERATIONS}..${SCRAM_MAX_ITERATIONS})`);
    }
    if (!SCRAM_BASE64.test(s[1])) throw scramFailure('malformed SCRAM salt');
    const d = this.d;
    const sp = await saltedPassword(d, this.password, fromBase64(s[1]), iterations);
    const [clientKey, serverKey] = await Promise.all([hmac(d, sp, 'Client Key'), hmac(d, sp, 'Server Key')]);
    const storedKey = await h(d, clientKey);
    const withoutProof = `c=biws,r=${r[1]}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const [signature, serverSignature] = await Promise.all([hmac(d, storedKey, authMessage), hmac(d, serverKey, authMessage)]);
    this.expectedServerSignature = serverSignature;
    return `${withoutProof},p=${toBase64(xor(clientKey, signature))}`;
  }

  /** Checks the broker's signature: the broker knew the credential (not an impostor). */
  verify(serverFinalMessage: Uint8Array | string): void {
    const [attr] = scramAttributes(scramText(serverFinalMessage));
    if (attr?.[0] === 'e') throw scramFailure(`the broker refused the login: ${attr[1]}`);
    if (attr?.[0] !== 'v' || !this.expectedServerSignature || !SCRAM_BASE64.test(attr[1])) throw scramFailure('malformed SCRAM server-final message');
    if (!constantTimeEqual(fromBase64(attr[1]), this.expectedServerSignature)) {
      throw scramFailure('the broker\'s SCRAM signature is wrong: it does not hold this user\'s credential (an impostor?)');
    }
  }
}
