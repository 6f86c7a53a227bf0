/**
 * SASL on the Kafka listener at the wire level (a real broker, raw Kafka
 * frames from @mq/kafka-protocol, no client library): SaslHandshake and
 * SaslAuthenticate (KIP-152) in every version served, the SCRAM login making
 * the user the connection's principal, a request pipelined behind the last
 * step served as that principal, the order rules (SaslAuthenticate before
 * SaslHandshake, a second handshake), a failed login answered and then the
 * connection closed, PLAIN not offered on plaintext, and the pre-KIP-152
 * framing (bare tokens after a SaslHandshake v0). Real clients (kafkajs, kcat) are in e2e/kafka-sasl.test.ts.
 */
import { encodeBatchSync } from '@mq/protocol/batch';
import { ApiVersionsApi, CreateTopicsApi, MetadataApi, decodeResponse, encodeRequest } from '@mq/kafka-protocol';
import { SaslAuthenticateApi, SaslHandshakeApi } from '@mq/kafka-protocol/messages';
import { ScramClient, scramCredential, type ScramMechanism } from '@mq/protocol/scram';
import { startTestBroker, TestClient, waitFor, type TestBroker } from './helpers.js';
import { KafkaWire } from './kafka-wire.js';

const UNSUPPORTED_SASL_MECHANISM = 33;
const ILLEGAL_SASL_STATE = 34;
const SASL_AUTHENTICATION_FAILED = 58;
const TOPIC = 'ksasl-wire';

async function upsert(user: string, password: string, mechanism: ScramMechanism) {
  const c = await scramCredential(mechanism, password, { iterations: 4096 });
  return { alterUserScramCredentials: { upsertions: [{ user, mechanism, iterations: c.iterations, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey }] } };
}

/** `bytes` with its 4-byte size before it (a bare SASL token frame). */
function sized(bytes: Buffer): Buffer {
  const out = Buffer.alloc(4 + bytes.length);
  out.writeInt32BE(bytes.length, 0);
  bytes.copy(out, 4);
  return out;
}

/** SaslHandshake v1 for `mechanism`, then the two SCRAM steps; returns the last answer. */
async function scramLogin(k: KafkaWire, mechanism: ScramMechanism, user: string, password: string, version = 2) {
  const hs = await k.request(SaslHandshakeApi, 1, { mechanism });
  expect(hs.errorCode).toBe(0);
  const scram = new ScramClient(mechanism, user, password);
  const first = await k.request(SaslAuthenticateApi, version, { authBytes: Buffer.from(scram.first()) });
  if (first.errorCode) return { answer: first, scram };
  const answer = await k.request(SaslAuthenticateApi, version, { authBytes: Buffer.from(await scram.final(first.authBytes)) });
  return { answer, scram };
}

describe('SASL on the Kafka listener, at the wire level', () => {
  let t: TestBroker;
  let port: number;
  const open: KafkaWire[] = [];
  const connect = async () => {
    const k = await KafkaWire.connect(port);
    open.push(k);
    return k;
  };
  const lines = (msg: RegExp) => t.lines.filter((l) => msg.test(l.msg));

  beforeAll(async () => {
    t = await startTestBroker({
      'kafka.listener.port': '0',
      'authentication.enabled': 'true',
      'authorization.enabled': 'true',
      'super.users': 'User:admin',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512,PLAIN',
    });
    port = t.broker.kafkaPort!;
    // Users and a topic through the WebSocket door (the first user from loopback, then as it).
    const ws = await TestClient.connect(t.url);
    await ws.request(await upsert('admin', 'admin-pw', 'SCRAM-SHA-256'));
    const scram = new ScramClient('SCRAM-SHA-256', 'admin', 'admin-pw');
    const first = await ws.request({ saslAuthenticate: { mechanism: 'SCRAM-SHA-256', authBytes: Buffer.from(scram.first()) } });
    await ws.request({ saslAuthenticate: { mechanism: 'SCRAM-SHA-256', authBytes: Buffer.from(await scram.final(first.saslAuthenticate!.authBytes)) } });
    await ws.request(await upsert('bob', 'bob-pw', 'SCRAM-SHA-512'));
    await ws.request({ createTopics: { topics: [{ name: TOPIC, numPartitions: 1, replicationFactor: 1 }] } });
    await ws.request({ produce: { acks: 1, topics: [{ name: TOPIC, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'a' }]) }] }] } });
    await ws.close();
  });
  afterAll(async () => {
    for (const k of open) k.close();
    await t?.cleanup();
  });

  it('ApiVersions before the login lists SaslHandshake 0-1 and SaslAuthenticate 0-2', async () => {
    const k = await connect();
    const r = await k.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(r.apiKeys.filter((a) => a.apiKey === 17 || a.apiKey === 36)).toEqual([
      { apiKey: 17, minVersion: 0, maxVersion: 1 },
      { apiKey: 36, minVersion: 0, maxVersion: 2 },
    ]);
  });

  it.each([0, 1, 2])('SCRAM-SHA-512 over SaslAuthenticate v%i: the server signature checks, and a Metadata pipelined behind the last step is answered for the principal', async (version) => {
    const k = await connect();
    const hs = await k.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-512' });
    // PLAIN is enabled, but not offered on this plaintext connection.
    expect(hs).toEqual({ errorCode: 0, mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    const scram = new ScramClient('SCRAM-SHA-512', 'bob', 'bob-pw');
    const first = await k.request(SaslAuthenticateApi, version, { authBytes: Buffer.from(scram.first()) });
    expect(first.errorCode).toBe(0);
    // The last step and a Metadata in one write, without waiting for the login's answer.
    k.sendRaw(Buffer.concat([encodeRequest(SaslAuthenticateApi, version, 101, 'wire', { authBytes: Buffer.from(await scram.final(first.authBytes)) }), encodeRequest(MetadataApi, 1, 102, 'wire', { topics: [{ name: TOPIC }] })]));
    const done = decodeResponse(SaslAuthenticateApi, version, (await k.nextFrame())!);
    expect(done.correlationId).toBe(101);
    expect(done.body.errorCode).toBe(0);
    expect(() => scram.verify(done.body.authBytes)).not.toThrow();
    const md = decodeResponse(MetadataApi, 1, (await k.nextFrame())!);
    expect(md.correlationId).toBe(102);
    // bob may not describe the topic: the authorizer answered as User:bob (not a closed connection).
    expect(md.body.topics.map((x) => [x.name, x.errorCode])).toEqual([[TOPIC, 29]]);
    expect(k.isClosed).toBe(false);
    // A connection logs in once.
    expect((await k.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-512' })).errorCode).toBe(ILLEGAL_SASL_STATE);
  });

  it('SaslAuthenticate before SaslHandshake is ILLEGAL_SASL_STATE (the connection stays, to log in properly); an unknown mechanism is UNSUPPORTED_SASL_MECHANISM', async () => {
    const k = await connect();
    const early = await k.request(SaslAuthenticateApi, 1, { authBytes: Buffer.from('n,,n=bob,r=abc') });
    expect(early.errorCode).toBe(ILLEGAL_SASL_STATE);
    expect(early.errorMessage).toMatch(/SaslHandshake first/);
    const before = lines(/^kafka SaslHandshake refused/).length;
    expect(await k.request(SaslHandshakeApi, 1, { mechanism: 'GSSAPI' })).toEqual({ errorCode: UNSUPPORTED_SASL_MECHANISM, mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    expect(await k.request(SaslHandshakeApi, 1, { mechanism: 'PLAIN' })).toEqual({ errorCode: UNSUPPORTED_SASL_MECHANISM, mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    const refused = lines(/^kafka SaslHandshake refused/).slice(before);
    expect(refused.map((l) => l.mechanism)).toEqual(['GSSAPI', 'PLAIN']);
    expect(refused[1]!.msg).toMatch(/PLAIN sends the password itself: accepted only over TLS/);
    const { answer } = await scramLogin(k, 'SCRAM-SHA-256', 'admin', 'admin-pw');
    expect(answer.errorCode).toBe(0);
    expect((await k.request(MetadataApi, 1, { topics: [{ name: TOPIC }] })).topics[0]!.errorCode).toBe(0);
  });

  it('a wrong password and an unknown user: the same SASL_AUTHENTICATION_FAILED answer, one audit line each, then the connection is closed', async () => {
    const before = lines(/^authentication failed$/).length;
    const answers = [];
    for (const user of ['bob', 'nobody']) {
      const k = await connect();
      const { answer } = await scramLogin(k, 'SCRAM-SHA-512', user, 'guess', 1);
      answers.push(answer);
      await k.closed;
    }
    expect(answers.map((a) => a.errorCode)).toEqual([SASL_AUTHENTICATION_FAILED, SASL_AUTHENTICATION_FAILED]);
    expect(answers[1]!.errorMessage).toBe(answers[0]!.errorMessage);
    expect(answers[0]!.errorMessage).toBe('authentication failed: invalid user name or password');
    expect(lines(/^authentication failed$/).slice(before).map((l) => l.user)).toEqual(['bob', 'nobody']);
  });

  it('SaslHandshake v0 then bare tokens (the pre-KIP-152 framing): a SCRAM login, then requests as that principal; a wrong password closes without an answer', async () => {
    const k = await connect();
    expect(await k.request(SaslHandshakeApi, 0, { mechanism: 'SCRAM-SHA-256' })).toEqual({ errorCode: 0, mechanisms: ['SCRAM-SHA-256', 'SCRAM-SHA-512'] });
    const scram = new ScramClient('SCRAM-SHA-256', 'admin', 'admin-pw');
    k.sendRaw(sized(Buffer.from(scram.first())));
    const serverFirst = (await k.nextFrame())!;
    k.sendRaw(sized(Buffer.from(await scram.final(serverFirst))));
    const serverFinal = (await k.nextFrame())!;
    expect(() => scram.verify(serverFinal)).not.toThrow();
    expect((await k.request(MetadataApi, 1, { topics: [{ name: TOPIC }] })).topics[0]!.errorCode).toBe(0);

    const before = lines(/^authentication failed$/).length;
    const bad = await connect();
    await bad.request(SaslHandshakeApi, 0, { mechanism: 'SCRAM-SHA-256' });
    const guess = new ScramClient('SCRAM-SHA-256', 'admin', 'guess');
    bad.sendRaw(sized(Buffer.from(guess.first())));
    bad.sendRaw(sized(Buffer.from(await guess.final((await bad.nextFrame())!))));
    expect(await bad.nextFrame()).toBeUndefined();
    expect(lines(/^authentication failed$/).length).toBe(before + 1);
  });

  it('before the login, any other request (or a bare token after a v1 handshake) closes the connection with one log line; nothing is created', async () => {
    const before = lines(/^kafka request before authentication/).length;
    const k = await connect();
    await expect(k.request(CreateTopicsApi, 4, { topics: [{ name: 'ksasl-never', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5000, validateOnly: false })).rejects.toThrow(/connection closed/);
    // A bare SASL token after a v1 handshake (it is no Kafka request): closed.
    const raw = await connect();
    expect((await raw.request(SaslHandshakeApi, 1, { mechanism: 'SCRAM-SHA-256' })).errorCode).toBe(0);
    raw.sendRaw(sized(Buffer.from('n,,n=bob,r=abc')));
    await raw.closed;
    await waitFor(() => lines(/^kafka request before authentication/).length === before + 2 || undefined);
    const admin = await connect();
    expect((await scramLogin(admin, 'SCRAM-SHA-256', 'admin', 'admin-pw')).answer.errorCode).toBe(0);
    expect((await admin.request(MetadataApi, 1, { topics: null })).topics.map((x) => x.name)).not.toContain('ksasl-never');
  });
});
