/**
 * SCRAM (RFC 5802; SHA-256 from RFC 7677, SHA-512 as Kafka registers it):
 * salted, iterated, nonce-based authentication. The password never crosses
 * the wire, the broker stores only StoredKey and ServerKey (which cannot log
 * anyone in), and each exchange is bound to a nonce of both sides, so a
 * captured exchange cannot be replayed.
 *
 * Both ends live here: `ScramClient` (the client library) and `ScramServer`
 * (the broker), plus `scramCredential`, which turns a password into what the
 * broker stores (computed by the client: `mq user create` sends the
 * credential, never the password). Passwords are taken as UTF-8 bytes
 * without SASLprep, as Kafka does, so credentials match Kafka clients'.
 * Channel binding is not supported (gs2 header "n" or "y" only).
 *
 * Node only (node:crypto): browsers cannot authenticate with SCRAM yet.
 */
import { Buffer } from 'node:buffer';
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { MqError } from './errors.js';
import { checkIterations, encodeSaslName, SCRAM_DEFAULT_ITERATIONS, SCRAM_MAX_ITERATIONS, SCRAM_MAX_MESSAGE_BYTES, SCRAM_MECHANISMS, SCRAM_MIN_ITERATIONS, type ScramMechanism } from './scram-common.js';

export * from './scram-common.js';

/** What a broker stores for one user and mechanism. */
export interface ScramCredential {
  mechanism: ScramMechanism;
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

/** Hash algorithm parameters; `sha1` only for RFC 5802's own test vector. */
interface Digest {
  hash: 'sha1' | 'sha256' | 'sha512';
  keyLength: number;
}

function digestOf(mechanism: ScramMechanism | Digest): Digest {
  return typeof mechanism === 'string' ? SCRAM_MECHANISMS[mechanism] : mechanism;
}

function hmac(d: Digest, key: Buffer, data: string | Buffer): Buffer {
  return createHmac(d.hash, key).update(data).digest();
}

function h(d: Digest, data: Buffer): Buffer {
  return createHash(d.hash).update(data).digest();
}

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.alloc(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

function saltedPassword(d: Digest, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, d.keyLength, d.hash);
}

function fail(message: string): MqError {
  return new MqError('SASL_AUTHENTICATION_FAILED', message);
}

/** The credential a broker stores for `password` (a new random salt unless one is given). */
export function scramCredential(mechanism: ScramMechanism, password: string, options: { salt?: Buffer; iterations?: number } = {}): ScramCredential {
  const iterations = options.iterations ?? SCRAM_DEFAULT_ITERATIONS;
  checkIterations(iterations);
  const salt = options.salt ?? randomBytes(32);
  return { mechanism, iterations, salt, ...keysOf(digestOf(mechanism), password, salt, iterations) };
}

function keysOf(d: Digest, password: string, salt: Buffer, iterations: number): { storedKey: Buffer; serverKey: Buffer } {
  const sp = saltedPassword(d, password, salt, iterations);
  return { storedKey: h(d, hmac(d, sp, 'Client Key')), serverKey: hmac(d, sp, 'Server Key') };
}

export function decodeSaslName(s: string): string {
  if (/=(?!2C|3D)/.test(s)) throw fail('malformed SCRAM user name');
  return s.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/** The attributes of a SCRAM message (`k=v,k=v`), in order. */
function attributes(message: string): Array<[string, string]> {
  return message.split(',').map((part) => {
    if (!/^[A-Za-z]=/.test(part)) throw fail('malformed SCRAM message');
    return [part[0]!, part.slice(2)];
  });
}

function text(bytes: Uint8Array | string): string {
  if (typeof bytes === 'string') return bytes;
  if (bytes.length > SCRAM_MAX_MESSAGE_BYTES) throw fail(`SCRAM message longer than ${SCRAM_MAX_MESSAGE_BYTES} bytes`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

const NONCE = /^[\x21-\x2b\x2d-\x7e]+$/; // printable ASCII except ','
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function newNonce(): string {
  return randomBytes(24).toString('base64');
}

/** The client's side of one exchange: first() → final(serverFirst) → verify(serverFinal). */
export class ScramClient {
  private readonly d: Digest;
  private readonly clientNonce: string;
  private clientFirstBare = '';
  private expectedServerSignature: Buffer | undefined;

  constructor(
    mechanism: ScramMechanism | Digest,
    private readonly username: string,
    private readonly password: string,
    options: { nonce?: string } = {},
  ) {
    this.d = digestOf(mechanism);
    this.clientNonce = options.nonce ?? newNonce();
  }

  first(): string {
    this.clientFirstBare = `n=${encodeSaslName(this.username)},r=${this.clientNonce}`;
    return `n,,${this.clientFirstBare}`;
  }

  final(serverFirstMessage: Uint8Array | string): string {
    const serverFirst = text(serverFirstMessage);
    const a = attributes(serverFirst);
    if (a[0]?.[0] === 'e') throw fail(`the broker refused the login: ${a[0][1]}`);
    const [r, s, i] = [a[0], a[1], a[2]];
    if (r?.[0] !== 'r' || s?.[0] !== 's' || i?.[0] !== 'i') throw fail('malformed SCRAM server-first message');
    if (!r[1].startsWith(this.clientNonce) || r[1].length <= this.clientNonce.length) throw fail('the server nonce does not extend the client nonce');
    const iterations = Number(i[1]);
    if (!/^\d+$/.test(i[1]) || iterations < SCRAM_MIN_ITERATIONS || iterations > SCRAM_MAX_ITERATIONS) {
      throw fail(`the broker asked for ${i[1]} SCRAM iterations (accepted: ${SCRAM_MIN_ITERATIONS}..${SCRAM_MAX_ITERATIONS})`);
    }
    if (!BASE64.test(s[1])) throw fail('malformed SCRAM salt');
    const sp = saltedPassword(this.d, this.password, Buffer.from(s[1], 'base64'), iterations);
    const clientKey = hmac(this.d, sp, 'Client Key');
    const storedKey = h(this.d, clientKey);
    const withoutProof = `c=biws,r=${r[1]}`;
    const authMessage = `${this.clientFirstBare},${serverFirst},${withoutProof}`;
    const proof = xor(clientKey, hmac(this.d, storedKey, authMessage));
    this.expectedServerSignature = hmac(this.d, hmac(this.d, sp, 'Server Key'), authMessage);
    return `${withoutProof},p=${proof.toString('base64')}`;
  }

  /** Checks the broker's signature: the broker knew the credential (not an impostor). */
  verify(serverFinalMessage: Uint8Array | string): void {
    const [attr] = attributes(text(serverFinalMessage));
    if (attr?.[0] === 'e') throw fail(`the broker refused the login: ${attr[1]}`);
    if (attr?.[0] !== 'v' || !this.expectedServerSignature) throw fail('malformed SCRAM server-final message');
    const got = Buffer.from(attr[1], 'base64');
    if (got.length !== this.expectedServerSignature.length || !timingSafeEqual(got, this.expectedServerSignature)) {
      throw fail('the broker\'s SCRAM signature is wrong: it does not hold this user\'s credential (an impostor?)');
    }
  }
}

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
  private readonly d: Digest;
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
    this.d = digestOf(mechanism);
  }

  /** The user named by the client-first message (once it was read). */
  get username(): string {
    return this.user;
  }

  first(clientFirstMessage: Uint8Array | string): string {
    if (this.state !== 'first') throw new MqError('ILLEGAL_SASL_STATE', 'SCRAM client-first message already received');
    this.state = 'done';
    const clientFirst = text(clientFirstMessage);
    const m = /^([ny]),(a=[^,]*)?,(.*)$/.exec(clientFirst);
    if (!m) throw fail(clientFirst.startsWith('p=') ? 'SCRAM channel binding is not supported' : 'malformed SCRAM client-first message');
    const bare = m[3]!;
    const a = attributes(bare);
    if (a[0]?.[0] === 'm') throw fail('SCRAM extensions are not supported');
    const [n, r] = [a[0], a[1]];
    if (n?.[0] !== 'n' || r?.[0] !== 'r' || !NONCE.test(r[1])) throw fail('malformed SCRAM client-first message');
    this.user = decodeSaslName(n[1]);
    if (this.user.length === 0) throw fail('empty SCRAM user name');
    if (m[2] !== undefined && m[2] !== 'a=' && decodeSaslName(m[2].slice(2)) !== this.user) throw fail('SCRAM authorization identity must be the user name');
    // The stand-in is derived for every user, known or not: the same work either way.
    const standIn = this.options.unknownUser(this.user);
    const found = this.lookup(this.user);
    const cred = found !== undefined && found.mechanism === this.mechanism ? found : standIn;
    this.known = cred === found;
    this.credential = cred;
    this.clientNonce = r[1];
    this.nonce = r[1] + (this.options.nonce ?? newNonce());
    const serverFirst = `r=${this.nonce},s=${cred.salt.toString('base64')},i=${cred.iterations}`;
    this.authMessagePrefix = `${bare},${serverFirst}`;
    this.state = 'final';
    return serverFirst;
  }

  /** Verifies the client's proof; returns the server-final message and the authenticated user. */
  final(clientFinalMessage: Uint8Array | string): { serverFinal: string; user: string } {
    if (this.state !== 'final') throw new MqError('ILLEGAL_SASL_STATE', 'SCRAM client-final message before the client-first one, or repeated');
    this.state = 'done';
    const clientFinal = text(clientFinalMessage);
    const a = attributes(clientFinal);
    const [c, r] = [a[0], a[1]];
    const p = a[a.length - 1];
    if (c?.[0] !== 'c' || r?.[0] !== 'r' || p?.[0] !== 'p' || a.length !== 3) throw fail('malformed SCRAM client-final message');
    // Only "n,," / "y,," gs2 headers (no channel binding); an authzid was checked to be the user.
    const gs2 = Buffer.from(c[1], 'base64').toString('utf8');
    if (!/^[ny],(a=[^,]*)?,$/.test(gs2)) throw fail('SCRAM channel binding is not supported');
    // librdkafka's builtin SCRAM (kcat, confluent-kafka-*) sends its client nonce again before the whole
    // nonce; Apache Kafka accepts it, and so does this: the proof covers the message as sent either way.
    if (r[1] !== this.nonce && r[1] !== this.clientNonce + this.nonce) throw fail('SCRAM nonce mismatch (a replayed or foreign message)');
    const cred = this.credential!;
    const withoutProof = clientFinal.slice(0, clientFinal.lastIndexOf(',p='));
    const authMessage = `${this.authMessagePrefix},${withoutProof}`;
    const proof = Buffer.from(p[1], 'base64');
    const signature = hmac(this.d, cred.storedKey, authMessage);
    const clientKey = proof.length === signature.length ? xor(proof, signature) : Buffer.alloc(signature.length);
    const ok = timingSafeEqual(h(this.d, clientKey), cred.storedKey) && this.known;
    if (!ok) throw fail('authentication failed: invalid user name or password');
    return { serverFinal: `v=${hmac(this.d, cred.serverKey, authMessage).toString('base64')}`, user: this.user };
  }
}

/** An unknown user's stand-in credential for ScramServer, keyed by a per-process secret. */
export function unknownUserCredentials(mechanism: ScramMechanism, secret: Buffer = randomBytes(32)): (user: string) => ScramCredential {
  const d = digestOf(mechanism);
  return (user) => {
    const salt = createHmac('sha256', secret).update(`salt:${user}`).digest();
    const storedKey = createHmac(d.hash, secret).update(`stored:${user}`).digest();
    return { mechanism, iterations: SCRAM_DEFAULT_ITERATIONS, salt, storedKey, serverKey: storedKey };
  };
}

/** For tests against RFC 5802's own vector (SCRAM-SHA-1): never offered by a broker. */
export const SCRAM_SHA1_FOR_TESTS: Digest = { hash: 'sha1', keyLength: 20 };
