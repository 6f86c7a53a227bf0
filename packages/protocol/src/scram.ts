/**
 * SCRAM (RFC 5802; SHA-256 from RFC 7677, SHA-512 as Kafka registers it):
 * salted, iterated, nonce-based authentication. The password never crosses
 * the wire, the broker stores only StoredKey and ServerKey (which cannot log
 * anyone in), and each exchange is bound to a nonce of both sides, so a
 * captured exchange cannot be replayed.
 *
 * The client's side (`ScramClient`, `scramCredential`) is ./scram-client.ts,
 * over WebCrypto, the same in Node and browsers. This Node build adds the
 * broker's side, `ScramServer` (node:crypto: synchronous HMAC and hash over a
 * stored credential, no PBKDF2), and the stand-in credentials of unknown
 * users. Channel binding is not supported (gs2 header "n" or "y" only).
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MqError } from './errors.js';
import { SCRAM_DEFAULT_ITERATIONS, type ScramMechanism } from './scram-common.js';
import { scramAttributes, scramDigestOf, scramFailure, scramNonce, scramText, decodeSaslName, type ScramCredential, type ScramDigest } from './scram-client.js';

export * from './scram-common.js';
export * from './scram-client.js';

function hmac(d: ScramDigest, key: Uint8Array, data: string | Uint8Array): Buffer {
  return createHmac(d.hash, key).update(data).digest();
}

function h(d: ScramDigest, data: Uint8Array): Buffer {
  return createHash(d.hash).update(data).digest();
}

function xor(a: Uint8Array, b: Uint8Array): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/; // printable ASCII except ','

export interface ScramServerOptions {
  /** The server's nonce part (tests); default random. */
  nonce?: string;
  /**
   * The credential answered for a user that does not exist: derived from the
   * name so the same unknown user always gets the same salt, never matching
   * any proof. The exchange then fails at the same step, with the same
   * message and the same work as a wrong password.
   */
  unknownUser: (user: string) => ScramCredential;
}

/** The broker's side of one exchange: first(clientFirst) → final(clientFinal). */
export class ScramServer {
  private readonly d: ScramDigest;
  private state: 'first' | 'final' | 'done' = 'first';
  private user = '';
  private credential: ScramCredential | undefined;
  private known = false;
  private authMessagePrefix = '';
  private nonce = '';
  private clientNonce = '';

  constructor(
    readonly mechanism: ScramMechanism,
    private readonly lookup: (user: string) => ScramCredential | undefined,
    private readonly options: ScramServerOptions,
  ) {
    this.d = scramDigestOf(mechanism);
  }

  /** The user named by the client-first message (once it was read). */
  get username(): string {
    return this.user;
  }

  first(clientFirstMessage: Uint8Array | string): string {
    if (this.state !== 'first') throw new MqError('ILLEGAL_SASL_STATE', 'SCRAM client-first message already received');
    this.state = 'done';
    const clientFirst = scramText(clientFirstMessage);
    const m = /^([ny]),(a=[^,]*)?,(.*)$/.exec(clientFirst);
    if (!m) throw scramFailure(clientFirst.startsWith('p=') ? 'SCRAM channel binding is not supported' : 'malformed SCRAM client-first message');
    const bare = m[3]!;
    const a = scramAttributes(bare);
    if (a[0]?.[0] === 'm') throw scramFailure('SCRAM extensions are not supported');
    const [n, r] = [a[0], a[1]];
    if (n?.[0] !== 'n' || r?.[0] !== 'r' || !NONCE.test(r[1])) throw scramFailure('malformed SCRAM client-first message');
    this.user = decodeSaslName(n[1]);
    if (this.user.length === 0) throw scramFailure('empty SCRAM user name');
    if (m[2] !== undefined && m[2] !== 'a=' && decodeSaslName(m[2].slice(2)) !== this.user) throw scramFailure('SCRAM authorization identity must be the user name');
    // The stand-in is derived for every user, known or not: the same work either way.
    const standIn = this.options.unknownUser(this.user);
    const found = this.lookup(this.user);
    const cred = found !== undefined && found.mechanism === this.mechanism ? found : standIn;
    this.known = cred === found;
    this.credential = cred;
    this.clientNonce = r[1];
    this.nonce = r[1] + (this.options.nonce ?? scramNonce());
    const serverFirst = `r=${this.nonce},s=${Buffer.from(cred.salt).toString('base64')},i=${cred.iterations}`;
    this.authMessagePrefix = `${bare},${serverFirst}`;
    this.state = 'final';
    return serverFirst;
  }

  /** Verifies the client's proof; returns the server-final message and the authenticated user. */
  final(clientFinalMessage: Uint8Array | string): { serverFinal: string; user: string } {
    if (this.state !== 'final') throw new MqError('ILLEGAL_SASL_STATE', 'SCRAM client-final message before the client-first one, or repeated');
    this.state = 'done';
    const clientFinal = scramText(clientFinalMessage);
    const a = scramAttributes(clientFinal);
    const [c, r] = [a[0], a[1]];
    const p = a[a.length - 1];
    if (c?.[0] !== 'c' || r?.[0] !== 'r' || p?.[0] !== 'p' || a.length !== 3) throw scramFailure('malformed SCRAM client-final message');
    // Only "n,," / "y,," gs2 headers (no channel binding); an authzid was checked to be the user.
    const gs2 = Buffer.from(c[1], 'base64').toString('utf8');
    if (!/^[ny],(a=[^,]*)?,$/.test(gs2)) throw scramFailure('SCRAM channel binding is not supported');
    // librdkafka's builtin SCRAM (kcat, confluent-kafka-*) sends its client nonce again before the whole
    // nonce; Apache Kafka accepts it, and so does this: the proof covers the message as sent either way.
    if (r[1] !== this.nonce && r[1] !== this.clientNonce + this.nonce) throw scramFailure('SCRAM nonce mismatch (a replayed or foreign message)');
    const cred = this.credential!;
    const withoutProof = clientFinal.slice(0, clientFinal.lastIndexOf(',p='));
    const authMessage = `${this.authMessagePrefix},${withoutProof}`;
    const proof = Buffer.from(p[1], 'base64');
    const signature = hmac(this.d, cred.storedKey, authMessage);
    const clientKey = proof.length === signature.length ? xor(proof, signature) : Buffer.alloc(signature.length);
    const stored = h(this.d, clientKey);
    const ok = stored.length === cred.storedKey.length && timingSafeEqual(stored, cred.storedKey) && this.known;
    if (!ok) throw scramFailure('authentication failed: invalid user name or password');
    return { serverFinal: `v=${hmac(this.d, cred.serverKey, authMessage).toString('base64')}`, user: this.user };
  }
}

/** An unknown user's stand-in credential for ScramServer, keyed by a per-process secret. */
export function unknownUserCredentials(mechanism: ScramMechanism, secret: Buffer = randomBytes(32)): (user: string) => ScramCredential {
  const d = scramDigestOf(mechanism);
  return (user) => {
    const salt = createHmac('sha256', secret).update(`salt:${user}`).digest();
    const storedKey = createHmac(d.hash, secret).update(`stored:${user}`).digest();
    return { mechanism, iterations: SCRAM_DEFAULT_ITERATIONS, salt, storedKey, serverKey: storedKey };
  };
}
