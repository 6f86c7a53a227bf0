import { randomBytes } from 'node:crypto';
import { CLUSTER_NONCE_BYTES, ClusterAuthDialer, ClusterAuthListener, clusterProof, verifyClusterProof, type ClusterAuthTranscript } from './cluster-auth.js';

const SECRET = Buffer.from('a cluster secret of 32 bytes....');
const OTHER = Buffer.from('another secret, just as long....');

/** One whole exchange between a dialer (id 2) and a listener (id 1); returns what crossed the wire. */
function exchange(dialerSecret = SECRET, listenerSecret = SECRET) {
  const dialer = new ClusterAuthDialer(dialerSecret, 'broker', 2);
  const listener = new ClusterAuthListener(listenerSecret, 'broker', 1);
  const challenge = listener.challenge(2, dialer.nonce);
  const proof = dialer.answer(challenge, 1);
  listener.verify(proof);
  return { dialer, listener, challenge, proof };
}

describe('cluster authentication (HMAC-SHA-256 challenge-response)', () => {
  it('both sides prove the same secret: the exchange succeeds and the listener learns the dialer id', () => {
    const { listener } = exchange();
    expect(listener.dialerId).toBe(2);
  });

  it('a wrong secret on either side fails: the dialer refuses the listener, the listener refuses the dialer', () => {
    expect(() => exchange(SECRET, OTHER)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED', retriable: false }));
    // A dialer with the wrong secret that sends a proof anyway (a forger): refused by the listener.
    const listener = new ClusterAuthListener(SECRET, 'broker', 1);
    const forger = new ClusterAuthDialer(OTHER, 'broker', 2);
    const c = listener.challenge(2, forger.nonce);
    const forged = clusterProof(OTHER, 'dialer', { channel: 'broker', dialerNonce: forger.nonce, listenerNonce: c.nonce, dialerId: 2, listenerId: 1 });
    expect(() => listener.verify(forged)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
  });

  it('a replayed transcript is refused: a captured dialer proof does not verify against a new listener nonce', () => {
    const captured = exchange();
    const listener = new ClusterAuthListener(SECRET, 'broker', 1);
    // The attacker replays the captured hello (same dialer nonce) and the captured proof.
    listener.challenge(2, captured.dialer.nonce);
    expect(() => listener.verify(captured.proof)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
    // And a captured listener challenge replayed to a new dialer does not verify either.
    const dialer = new ClusterAuthDialer(SECRET, 'broker', 2);
    expect(() => dialer.answer(captured.challenge, 1)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
  });

  it('a reflection fails: a listener proof handed back as a dialer proof, and a nonce sent back to its owner, are refused', () => {
    // The attacker dials A claiming to be 2, gets A's challenge, then opens a second connection to A
    // using A's own nonce as its "dialer" nonce, hoping A's listener proof passes as the dialer's.
    const a = new ClusterAuthListener(SECRET, 'broker', 1);
    const attackerNonce = randomBytes(CLUSTER_NONCE_BYTES);
    const first = a.challenge(2, attackerNonce);
    // Same transcript, role swapped: the listener's own proof is not a dialer proof.
    expect(() => a.verify(first.proof)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
    const t: ClusterAuthTranscript = { channel: 'broker', dialerNonce: attackerNonce, listenerNonce: first.nonce, dialerId: 2, listenerId: 1 };
    expect(verifyClusterProof(SECRET, 'listener', t, first.proof)).toBe(true);
    expect(verifyClusterProof(SECRET, 'dialer', t, first.proof)).toBe(false);
    // A listener given its own nonce as the dialer's refuses at once.
    const b = new ClusterAuthListener(SECRET, 'broker', 1);
    expect(() => b.challenge(2, b.nonce)).toThrow(/reflection/);
    // A dialer given its own nonce back as the listener's refuses too.
    const d = new ClusterAuthDialer(SECRET, 'broker', 2);
    expect(() => d.answer({ id: 1, nonce: d.nonce, proof: Buffer.alloc(32) }, 1)).toThrow(/reflection/);
  });

  it('a truncated, empty or padded proof is refused (without throwing inside the comparison)', () => {
    const { dialer, challenge } = exchange();
    const t: ClusterAuthTranscript = { channel: 'broker', dialerNonce: dialer.nonce, listenerNonce: challenge.nonce, dialerId: 2, listenerId: 1 };
    const good = clusterProof(SECRET, 'dialer', t);
    expect(verifyClusterProof(SECRET, 'dialer', t, good)).toBe(true);
    for (const bad of [good.subarray(0, 31), good.subarray(0, 16), Buffer.alloc(0), undefined, null, Buffer.concat([good, Buffer.from([0])])]) {
      expect(verifyClusterProof(SECRET, 'dialer', t, bad)).toBe(false);
    }
    const listener = new ClusterAuthListener(SECRET, 'broker', 1);
    const d2 = new ClusterAuthDialer(SECRET, 'broker', 2);
    const c = listener.challenge(2, d2.nonce);
    const proof = d2.answer(c, 1);
    expect(() => listener.verify(proof.subarray(0, 31))).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
    // A truncated listener proof or nonce: the dialer refuses.
    const d3 = new ClusterAuthDialer(SECRET, 'broker', 2);
    const c3 = new ClusterAuthListener(SECRET, 'broker', 1).challenge(2, d3.nonce);
    expect(() => d3.answer({ ...c3, proof: c3.proof.subarray(0, 20) }, 1)).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
    expect(() => d3.answer({ ...c3, nonce: c3.nonce.subarray(0, 8) }, 1)).toThrow(/nonce has 8 bytes/);
  });

  it('proofs are bound to ids and channel: another node id, or the Raft channel, does not verify', () => {
    const d = new ClusterAuthDialer(SECRET, 'broker', 2);
    const c = new ClusterAuthListener(SECRET, 'broker', 1).challenge(2, d.nonce);
    // The dialer dialled node 3, node 1 answered: refused even though the proof is good for node 1.
    expect(() => d.answer(c, 3)).toThrow(/dialled node 3 but node 1 answered/);
    // A node claiming another id than the one it proved for: refused.
    expect(() => d.answer({ ...c, id: 3 })).toThrow(expect.objectContaining({ code: 'CLUSTER_AUTHENTICATION_FAILED' }));
    const t: ClusterAuthTranscript = { channel: 'broker', dialerNonce: d.nonce, listenerNonce: c.nonce, dialerId: 2, listenerId: 1 };
    expect(verifyClusterProof(SECRET, 'listener', { ...t, channel: 'raft' }, c.proof)).toBe(false);
    expect(verifyClusterProof(SECRET, 'listener', { ...t, dialerId: 4 }, c.proof)).toBe(false);
  });

  it('order and shape: a proof before the hello, a second hello, a bad id or a short secret are refused', () => {
    const l = new ClusterAuthListener(SECRET, 'broker', 1);
    expect(() => l.verify(Buffer.alloc(32))).toThrow(/before the hello/);
    l.challenge(2, randomBytes(CLUSTER_NONCE_BYTES));
    expect(() => l.challenge(2, randomBytes(CLUSTER_NONCE_BYTES))).toThrow(/second/);
    expect(() => new ClusterAuthListener(SECRET, 'broker', 1).challenge(0, randomBytes(CLUSTER_NONCE_BYTES))).toThrow(/not a node id/);
    expect(() => new ClusterAuthListener(Buffer.from('short'), 'broker', 1)).toThrow(/at least 16 bytes/);
  });
});
