/**
 * Mutual TLS principals on both doors (issue 17), against a real `mq broker start` process with a certificate, the
 * CA that signs client certificates (tls.ca.file), tls.client.auth=required, authentication and ACLs; every
 * certificate is made by openssl at run time. No SASL, no bearer token: a client's certificate subject (CN) is its
 * principal. alice, granted read and write on one topic by an ACL on User:alice, produces and consumes it over
 * wss:// and reads it over https://, and is refused (TOPIC_AUTHORIZATION_FAILED, HTTP 403, one audit line) on a
 * topic she has no ACL for; a browser logged in by her certificate gets a token for herself from POST /tokens (the
 * console's live tail logs in with it); a certificate for the same name signed by another CA is refused on both doors with a
 * clear client error and one broker log line each.
 */
import { readFileSync } from 'node:fs';
import { MqClient, type Acl } from '@mq/client';
import { isMqError } from '@mq/protocol/errors';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { httpsCall, makePki, mtlsBrokerConfig, type Issued, type Pki } from './src/pki.js';

let pki: Pki;
let broker: BrokerProcess;
let admin: MqClient;
let alice: Issued;
const mine = uniqueName('mtls-alice');
const other = uniqueName('mtls-other');
const fast = { retry: { retries: 1, initialDelayMs: 10, maxDelayMs: 20 }, connectTimeoutMs: 5000, requestTimeoutMs: 5000 };

const client = (who: Issued, ca = pki.ca) => new MqClient({ bootstrap: `localhost:${broker.port}`, clientId: 'mtls-e2e', tls: { ca: readFileSync(ca), cert: readFileSync(who.cert), key: readFileSync(who.key) }, ...fast });
const handshakeLines = () => broker.output.filter((l) => l.includes('"msg":"TLS handshake failed: connection closed"'));

beforeAll(async () => {
  pki = await makePki();
  const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
  broker = await startBroker({
    args: mtlsBrokerConfig(pki, server).flatMap((c) => ['--config-set', c]),
  });
  admin = client(pki.issue('admin', 'admin'));
  alice = pki.issue('alice', 'alice');
  await admin.admin().createTopic(mine, { numPartitions: 1 });
  await admin.admin().createTopic(other, { numPartitions: 1 });
  const grant = (operation: Acl['operation']): Acl => ({ principal: 'User:alice', resourceType: 'topic', resourceName: mine, operation, permission: 'allow' });
  await admin.admin().createAcls([grant('read'), grant('write')]);
}, 90_000);

afterAll(async () => {
  await admin?.close({ timeoutMs: 2_000 });
  await cleanup();
});

describe('mutual TLS: the certificate subject is the principal on the WebSocket and HTTP doors', () => {
  it('WebSocket: alice produces and reads her topic by her certificate alone, and is refused on another', async () => {
    const c = client(alice);
    try {
      const producer = c.producer({ lingerMs: 0 });
      await producer.send(mine, { key: 'a', value: 'by certificate' });
      await expect(producer.send(other, { value: 'not hers' })).rejects.toMatchObject({ code: 'TOPIC_AUTHORIZATION_FAILED' });
      await producer.close();
      const consumer = c.consumer({ autoOffsetReset: 'earliest' });
      consumer.assign([{ topic: mine, partition: 0 }]);
      const got = await waitFor(async () => {
        const r = await consumer.poll(1000);
        return r.length > 0 ? r : undefined;
      }, { timeout: 15_000, message: 'alice reading her topic' });
      expect(got!.map((r) => r.value!.toString())).toEqual(['by certificate']);
      await consumer.close();
    } finally {
      await c.close({ timeoutMs: 2_000 });
    }
    // The refusal named her certificate's principal, one audit line.
    const denied = broker.output.filter((l) => l.includes('"msg":"authorization denied"') && l.includes('"principal":"User:alice"') && l.includes(`"resource":"topic:${other}"`));
    expect(denied).toHaveLength(1);
  });

  it('HTTPS: the same certificate reads her topic and is refused (403) on another; nothing is written there', async () => {
    const ok = await httpsCall(broker.httpPort, pki.ca, 'GET', `/topics/${mine}/partitions/0/records?offset=0`, { client: alice });
    expect(ok.status).toBe(200);
    expect(ok.body.records.map((r: { value: string }) => r.value)).toEqual(['by certificate']);
    const refused = await httpsCall(broker.httpPort, pki.ca, 'POST', `/topics/${other}/records`, { client: alice, body: { value: 'not hers' } });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    const marks = await httpsCall(broker.httpPort, pki.ca, 'GET', `/topics/${other}/partitions/0/watermarks`, { client: pki.issue('admin2', 'admin') });
    expect(marks.body).toEqual({ low: 0, high: 0 });
  });

  it('the console tail of a browser logged in by certificate: POST /tokens gives alice a token for herself, which logs her in', async () => {
    // No headless Chromium here (presenting a client certificate needs an NSS database and a selection policy):
    // these are the calls the console page makes (console/main.tsx, tail.ts): POST /tokens with no Authorization
    // header over the TLS connection that carries the browser's certificate, then SASL OAUTHBEARER on wss://.
    const issued = await httpsCall(broker.httpPort, pki.ca, 'POST', '/tokens', { client: alice });
    expect([issued.status, issued.body.principal]).toEqual([200, 'User:alice']);
    const token = issued.body.token as string;
    // A token cannot make another, even over her certificate's connection.
    const again = await httpsCall(broker.httpPort, pki.ca, 'POST', '/tokens', { client: alice, auth: `Bearer ${token}` });
    expect([again.status, again.body.error.code]).toEqual([401, 'SASL_AUTHENTICATION_FAILED']);
    // The token works as a bearer token on https:// (as alice, whoever's certificate carries it: here the admin's).
    const viaBearer = await httpsCall(broker.httpPort, pki.ca, 'POST', `/topics/${other}/records`, { client: pki.issue('admin3', 'admin'), auth: `Bearer ${token}`, body: { value: 'not hers' } });
    expect([viaBearer.status, viaBearer.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    // The tail: her certificate's wss:// connection logs in with her own token and reads her topic.
    const tail = new MqClient({ bootstrap: `localhost:${broker.port}`, clientId: 'mq-console', tls: { ca: readFileSync(pki.ca), cert: readFileSync(alice.cert), key: readFileSync(alice.key) }, sasl: { mechanism: 'OAUTHBEARER', token }, ...fast });
    try {
      const consumer = tail.consumer({ autoOffsetReset: 'earliest' });
      consumer.assign([{ topic: mine, partition: 0 }]);
      const got = await waitFor(async () => {
        const r = await consumer.poll(1000);
        return r.length > 0 ? r : undefined;
      }, { timeout: 15_000, message: 'the tail reading her topic' });
      expect(got![0]!.value!.toString()).toBe('by certificate');
      await consumer.close();
    } finally {
      await tail.close({ timeoutMs: 2_000 });
    }
    // Her token on another principal's certificate connection does not change who that connection is.
    const bob = pki.issue('bob', 'bob');
    const mixed = new MqClient({ bootstrap: `localhost:${broker.port}`, tls: { ca: readFileSync(pki.ca), cert: readFileSync(bob.cert), key: readFileSync(bob.key) }, sasl: { mechanism: 'OAUTHBEARER', token }, ...fast, retry: { retries: 0 } });
    try {
      await expect(mixed.admin().listTopics()).rejects.toMatchObject({ code: 'ILLEGAL_SASL_STATE' });
    } finally {
      await mixed.close({ timeoutMs: 2_000 });
    }
  });

  it('a certificate for the same name from another CA: refused on both doors, a clear client error, one broker line each', async () => {
    const impostor = pki.issue('impostor', 'alice', undefined, 'other');
    const before = handshakeLines().length;
    const c = new MqClient({ bootstrap: `localhost:${broker.port}`, tls: { ca: readFileSync(pki.ca), cert: readFileSync(impostor.cert), key: readFileSync(impostor.key) }, ...fast, retry: { retries: 0 } });
    let message = '';
    try {
      await c.admin().listTopics();
    } catch (err) {
      message = isMqError(err) ? `${err.code}: ${err.message}` : String(err);
    } finally {
      await c.close({ timeoutMs: 2_000 });
    }
    expect(message).toMatch(/^CONNECTION_ERROR: cannot connect to broker at localhost:\d+: \w+: .*the broker refused this client's certificate \(it must be signed by a CA in the broker's tls.ca.file/);
    await waitFor(() => handshakeLines().length > before, { timeout: 5_000, message: 'a TLS handshake failed line' });
    await new Promise((r) => setTimeout(r, 300));
    const ws = handshakeLines().slice(before).map((l) => JSON.parse(l) as Record<string, string>);
    expect(ws.map((l) => [l.listener, l.code, l.clientCertificate])).toEqual([['WebSocket', 'CLIENT_CERTIFICATE_REFUSED', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']]);
    expect(ws[0]!.remote).toMatch(/^127\.0\.0\.1:\d+$/);

    const beforeHttp = handshakeLines().length;
    const err = await httpsCall(broker.httpPort, pki.ca, 'GET', `/topics/${mine}`, { client: impostor }).then(
      (r) => `answered ${r.status}`,
      (e: NodeJS.ErrnoException) => e.code ?? e.message,
    );
    expect(err).toMatch(/ECONNRESET|ALERT/);
    await waitFor(() => handshakeLines().length > beforeHttp, { timeout: 5_000, message: 'a TLS handshake failed line for the HTTPS request' });
    await new Promise((r) => setTimeout(r, 300));
    const http = handshakeLines().slice(beforeHttp).map((l) => JSON.parse(l) as Record<string, string>);
    expect(http.map((l) => [l.listener, l.code, l.clientCertificate])).toEqual([['HTTP API', 'CLIENT_CERTIFICATE_REFUSED', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE']]);
    // Refused before any request: nothing was written to her topic by the impostor.
    expect((await httpsCall(broker.httpPort, pki.ca, 'GET', `/topics/${mine}/partitions/0/watermarks`, { client: alice })).body).toEqual({ low: 0, high: 1 });
  });
});
