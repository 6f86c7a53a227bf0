/**
 * Brokers and controllers prove to each other that they hold the cluster
 * secret (`cluster.secret.file`), once per connection, before any other
 * frame: a mutual challenge-response with HMAC-SHA-256.
 *
 *   dialer   -> listener: dialer id, nonce Nd (32 random bytes)
 *   listener -> dialer:   listener id, nonce Nl, proof_l = HMAC(K, T("listener"))
 *   dialer   -> listener: proof_d = HMAC(K, T("dialer"))
 *
 * where T(role) = label, channel, role, Nd, Nl, dialer id, listener id (each
 * length-prefixed). Both nonces are fresh per connection, so a captured
 * exchange proves nothing on another one (replay); the role is in the MAC,
 * so a listener's proof handed back as a dialer's fails (reflection), and the
 * ids are in it, so a proof for one pair of nodes is not one for another.
 * The channel ("broker" for the inter-broker listener, "raft" for the Raft
 * transport) keeps one protocol's proofs from serving the other. Proofs are
 * compared with timingSafeEqual. Pure: no I/O, no clock.
 */
import { Buffer } from 'node:buffer';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { MqError } from './errors.js';

/** Bytes of each side's nonce. */
export const CLUSTER_NONCE_BYTES = 32;
/** Bytes of a proof (HMAC-SHA-256). */
export const CLUSTER_PROOF_BYTES = 32;
/** The shortest cluster secret accepted. */
export const MIN_CLUSTER_SECRET_BYTES = 16;

const LABEL = 'mq-cluster-auth-v1';

export type ClusterAuthChannel = 'broker' | 'raft';
export type ClusterAuthRole = 'dialer' | 'listener';

/** What both sides' proofs cover. */
export interface ClusterAuthTranscript {
  readonly channel: ClusterAuthChannel;
  readonly dialerNonce: Uint8Array;
  readonly listenerNonce: Uint8Array;
  readonly dialerId: number;
  readonly listenerId: number;
}

function field(parts: Buffer[], value: Uint8Array | string): void {
  const b = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length);
  parts.push(len, b);
}

function checkSecret(secret: Uint8Array): void {
  if (secret.length < MIN_CLUSTER_SECRET_BYTES) throw new MqError('INVALID_ARGUMENT', `a cluster secret has at least ${MIN_CLUSTER_SECRET_BYTES} bytes, got ${secret.length}`);
}

/** `role`'s proof of `secret` over the transcript. */
export function clusterProof(secret: Uint8Array, role: ClusterAuthRole, t: ClusterAuthTranscript): Buffer {
  checkSecret(secret);
  const parts: Buffer[] = [];
  for (const v of [LABEL, t.channel, role]) field(parts, v);
  field(parts, t.dialerNonce);
  field(parts, t.listenerNonce);
  field(parts, String(t.dialerId));
  field(parts, String(t.listenerId));
  return createHmac('sha256', secret).update(Buffer.concat(parts)).digest();
}

/** Whether `proof` is `role`'s proof over the transcript (constant time in the proof's bytes; a proof of the wrong length is false). */
export function verifyClusterProof(secret: Uint8Array, role: ClusterAuthRole, t: ClusterAuthTranscript, proof: Uint8Array | null | undefined): boolean {
  if (!proof || proof.length !== CLUSTER_PROOF_BYTES) return false;
  if (t.dialerNonce.length !== CLUSTER_NONCE_BYTES || t.listenerNonce.length !== CLUSTER_NONCE_BYTES) return false;
  return timingSafeEqual(clusterProof(secret, role, t), proof);
}

function fail(message: string): MqError {
  return new MqError('CLUSTER_AUTHENTICATION_FAILED', message, { retriable: false });
}

/** One side of one connection's exchange: the secret, the channel, this node's id and its fresh nonce. */
abstract class ClusterAuthSide {
  readonly nonce: Buffer;

  constructor(
    protected readonly secret: Uint8Array,
    readonly channel: ClusterAuthChannel,
    readonly id: number,
    nonce: Buffer = randomBytes(CLUSTER_NONCE_BYTES),
  ) {
    checkSecret(secret);
    this.nonce = nonce;
  }
}

/**
 * The dialling side of one connection: `nonce` goes in its hello; `answer()`
 * checks the listener's proof and returns the dialer's own. Throws
 * CLUSTER_AUTHENTICATION_FAILED when the listener did not prove the secret.
 */
export class ClusterAuthDialer extends ClusterAuthSide {
  /**
   * The listener's answer: `expectedId` (when the dialer knows whom it
   * dialled) must match the id it proves. Returns the dialer's proof.
   */
  answer(listener: { id: number; nonce: Uint8Array | null | undefined; proof: Uint8Array | null | undefined }, expectedId?: number): Buffer {
    if (expectedId !== undefined && listener.id !== expectedId) throw fail(`dialled node ${expectedId} but node ${listener.id} answered`);
    const nonce = listener.nonce ?? new Uint8Array(0);
    if (nonce.length !== CLUSTER_NONCE_BYTES) throw fail(`the listener's nonce has ${nonce.length} bytes, not ${CLUSTER_NONCE_BYTES}`);
    if (timingSafeEqual(nonce, this.nonce)) throw fail('the listener sent back the dialer\'s own nonce (a reflection)');
    const t: ClusterAuthTranscript = { channel: this.channel, dialerNonce: this.nonce, listenerNonce: nonce, dialerId: this.id, listenerId: listener.id };
    if (!verifyClusterProof(this.secret, 'listener', t, listener.proof)) throw fail(`node ${listener.id} did not prove the cluster secret (check cluster.secret.file on both)`);
    return clusterProof(this.secret, 'dialer', t);
  }
}

/**
 * The listening side of one connection: `challenge()` answers the dialer's
 * hello with the listener's nonce and proof; `verify()` checks the dialer's
 * proof. Each instance serves one connection and one challenge.
 */
export class ClusterAuthListener extends ClusterAuthSide {
  private transcript: ClusterAuthTranscript | undefined;

  /** The answer to a dialer's hello; throws CLUSTER_AUTHENTICATION_FAILED for a malformed or reflected nonce, or a second hello. */
  challenge(dialerId: number, dialerNonce: Uint8Array | null | undefined): { id: number; nonce: Buffer; proof: Buffer } {
    if (this.transcript) throw fail('a second cluster authentication hello on one connection');
    if (!Number.isSafeInteger(dialerId) || dialerId <= 0) throw fail(`the dialer's id ${dialerId} is not a node id`);
    const n = dialerNonce ?? new Uint8Array(0);
    if (n.length !== CLUSTER_NONCE_BYTES) throw fail(`the dialer's nonce has ${n.length} bytes, not ${CLUSTER_NONCE_BYTES}`);
    if (timingSafeEqual(n, this.nonce)) throw fail('the dialer sent the listener\'s own nonce (a reflection)');
    this.transcript = { channel: this.channel, dialerNonce: Buffer.from(n), listenerNonce: this.nonce, dialerId, listenerId: this.id };
    return { id: this.id, nonce: this.nonce, proof: clusterProof(this.secret, 'listener', this.transcript) };
  }

  /** Checks the dialer's proof; throws CLUSTER_AUTHENTICATION_FAILED when it is wrong or came before the hello. */
  verify(proof: Uint8Array | null | undefined): void {
    const t = this.transcript;
    if (!t) throw fail('a cluster authentication proof before the hello');
    if (!verifyClusterProof(this.secret, 'dialer', t, proof)) throw fail(`node ${t.dialerId} did not prove the cluster secret (check cluster.secret.file on both)`);
  }

  /** The id the dialer proved (after verify()). */
  get dialerId(): number {
    return this.transcript?.dialerId ?? 0;
  }
}
