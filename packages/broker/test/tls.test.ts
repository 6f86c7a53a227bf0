/**
 * TLS on the client WebSocket port and the HTTP API, against a real broker:
 * wss:// and https:// with the right CA work; a wrong CA, an expired
 * certificate, a wrong host name and plaintext to the TLS port fail with a
 * clear error on the client and one log line on the broker; mutual TLS makes
 * the client certificate's CN the principal (checked by the ACLs); a
 * replaced certificate is served without a restart. Certificates are made
 * at run time (openssl).
 */
import { copyFileSync, readFileSync } from 'node:fs';
import { request } from 'node:https';
import path from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { MqClient } from '@mq/client';
import { isMqError } from '@mq/protocol/errors';
import { startTestBroker, waitFor, type TestBroker } from './helpers.js';
import { makePki, type Pki } from './tls-certs.js';

function httpsGet(port: number, p: string, ca: string, extra: { cert?: Buffer; key?: Buffer; auth?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: p, ca: readFileSync(ca), servername: 'localhost', agent: false, ...(extra.cert ? { cert: extra.cert, key: extra.key } : {}), headers: extra.auth ? { authorization: extra.auth } : {} }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function connectError(client: MqClient): Promise<string> {
  try {
    await client.admin().listTopics();
  } catch (err) {
    return isMqError(err) ? `${err.code}: ${err.message}` : String(err);
  } finally {
    await client.close();
  }
  throw new Error('expected the connection to fail');
}

const fast = { retry: { retries: 1, initialDelayMs: 10, maxDelayMs: 20 }, connectTimeoutMs: 3000, requestTimeoutMs: 3000 };

describe('TLS on the client listeners', () => {
  let pki: Pki;
  let t: TestBroker;
  let server: { cert: string; key: string };
  const tlsLines = () => t.lines.filter((l) => l.msg === 'TLS handshake failed: connection closed');

  beforeAll(async () => {
    pki = makePki();
    server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    // The broker reads fixed paths, replaced in the reload test.
    copyFileSync(server.cert, path.join(pki.dir, 'live.pem'));
    copyFileSync(server.key, path.join(pki.dir, 'live.key'));
    t = await startTestBroker({ 'tls.cert.file': path.join(pki.dir, 'live.pem'), 'tls.key.file': path.join(pki.dir, 'live.key'), 'tls.reload.interval.ms': '200' });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('serves wss:// and https:// to a client that trusts the CA', async () => {
    const mq = new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca) }, ...fast });
    try {
      await mq.admin().createTopic('tls-topic');
      const p = mq.producer();
      await p.send('tls-topic', { value: 'over tls' });
      await p.close();
      expect(await mq.admin().listTopics()).toContain('tls-topic');
    } finally {
      await mq.close();
    }
    expect((await httpsGet(t.broker.httpPort, '/health', pki.ca)).status).toBe(200);
  });

  it('a wrong CA, a wrong host name and plaintext fail clearly on the client, one line each on the broker', async () => {
    let before = tlsLines().length;
    const wrongCa = await connectError(new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.otherCa) }, ...fast }));
    expect(wrongCa).toMatch(/CONNECTION_ERROR.*not signed by a CA this client trusts/);
    await waitFor(() => tlsLines().length > before);
    before = tlsLines().length;
    const wrongHost = await connectError(new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca), servername: 'other.example' }, ...fast }));
    expect(wrongHost).toMatch(/CONNECTION_ERROR.*not for this host name/);
    await waitFor(() => tlsLines().length > before);
    before = tlsLines().length;
    const plain = await connectError(new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}`, ...fast }));
    expect(plain).toMatch(/CONNECTION_ERROR/);
    await waitFor(() => tlsLines().length > before);
    expect(tlsLines().slice(before).length).toBeGreaterThanOrEqual(1);
  });

  it('an expired certificate fails clearly; a replaced certificate is served without a restart', async () => {
    const expired = pki.issue('expired', 'localhost', 'DNS:localhost,IP:127.0.0.1', -1);
    const serialOf = () =>
      new Promise<string>((resolve, reject) => {
        const s = tlsConnect({ host: '127.0.0.1', port: t.broker.port, servername: 'localhost', rejectUnauthorized: false }, () => {
          resolve(s.getPeerCertificate().serialNumber);
          s.destroy();
        });
        s.on('error', reject);
      });
    const first = await serialOf();
    copyFileSync(expired.key, path.join(pki.dir, 'live.key'));
    copyFileSync(expired.cert, path.join(pki.dir, 'live.pem'));
    await waitFor(async () => (await serialOf()) !== first, 5000);
    expect(t.lines.some((l) => l.msg === 'TLS certificate reloaded')).toBe(true);
    const err = await connectError(new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca) }, ...fast }));
    expect(err).toMatch(/CONNECTION_ERROR.*has expired/);
    // and back to a good one, again without a restart
    copyFileSync(server.key, path.join(pki.dir, 'live.key'));
    copyFileSync(server.cert, path.join(pki.dir, 'live.pem'));
    await waitFor(async () => (await serialOf()) === first, 5000);
    const mq = new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca) }, ...fast });
    try {
      expect(await mq.admin().listTopics()).toContain('tls-topic');
    } finally {
      await mq.close();
    }
  });
});

describe('mutual TLS: the client certificate names the principal', () => {
  let pki: Pki;
  let t: TestBroker;

  beforeAll(async () => {
    pki = makePki();
    const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    t = await startTestBroker({
      'tls.cert.file': server.cert,
      'tls.key.file': server.key,
      'tls.ca.file': pki.ca,
      'tls.client.auth': 'required',
      'authentication.enabled': 'true',
      'authorization.enabled': 'true',
      'super.users': 'User:admin',
    });
  });
  afterAll(async () => {
    await t?.cleanup();
  });

  it('admin (a super user by its certificate) grants alice; alice is held to her ACLs; no certificate: refused', async () => {
    const client = (name: string) => {
      const c = pki.issue(name, name, undefined);
      return new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca), cert: readFileSync(c.cert), key: readFileSync(c.key) }, ...fast });
    };
    const admin = client('admin');
    const alice = client('alice');
    try {
      await admin.admin().createTopic('mtls');
      await expect(alice.admin().createTopic('alice-topic')).rejects.toMatchObject({ code: 'TOPIC_AUTHORIZATION_FAILED' });
      await admin.admin().createAcls([{ resourceType: 'topic', resourceName: 'mtls', principal: 'User:alice', operation: 'write', permission: 'allow' }]);
      const p = alice.producer();
      await p.send('mtls', { value: 'from alice' });
      await p.close();
      expect(t.lines.some((l) => l.msg === 'authorization denied' && l.principal === 'User:alice')).toBe(true);
      // HTTPS with the same certificate: the same principal and ACLs
      const c = path.join(pki.dir, 'alice');
      const cert = readFileSync(`${c}.pem`);
      const key = readFileSync(`${c}.key`);
      expect((await httpsGet(t.broker.httpPort, '/topics/mtls', pki.ca, { cert, key })).status).toBe(200);
      expect((await httpsGet(t.broker.httpPort, '/cluster', pki.ca, { cert, key })).status).toBe(403);
    } finally {
      await admin.close();
      await alice.close();
    }
    const anon = await connectError(new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca) }, ...fast }));
    expect(anon).toMatch(/CONNECTION_(ERROR|CLOSED)/);
  });
});

describe('the Kafka listener over TLS: a Kafka client (kafkajs) with a client certificate is its principal', () => {
  it('kafkajs over SSL: the admin certificate creates a topic, alice is refused until granted write', async () => {
    const { Kafka, logLevel } = await import('kafkajs');
    const pki = makePki();
    const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    const t = await startTestBroker({
      'kafka.listener.port': '0',
      'tls.cert.file': server.cert,
      'tls.key.file': server.key,
      'tls.ca.file': pki.ca,
      'tls.client.auth': 'required',
      'authentication.enabled': 'true',
      'authorization.enabled': 'true',
      'super.users': 'User:admin',
    });
    const kafka = (name: string) => {
      const c = pki.issue(`k-${name}`, name, undefined);
      return new Kafka({
        clientId: name,
        brokers: [`127.0.0.1:${t.broker.kafkaPort}`],
        ssl: { ca: [readFileSync(pki.ca, 'utf8')], cert: readFileSync(c.cert, 'utf8'), key: readFileSync(c.key, 'utf8'), servername: 'localhost' },
        logLevel: logLevel.NOTHING,
        retry: { retries: 1, initialRetryTime: 50 },
      });
    };
    const admin = kafka('admin').admin();
    const alice = kafka('alice').producer();
    try {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'k-tls', numPartitions: 1 }] });
      await alice.connect();
      await expect(alice.send({ topic: 'k-tls', messages: [{ value: 'x' }] })).rejects.toThrow(/authoriz/i);
      const mq = new MqClient({ bootstrap: `localhost:${t.broker.port}`, tls: { ca: readFileSync(pki.ca), cert: readFileSync(path.join(pki.dir, 'k-admin.pem')), key: readFileSync(path.join(pki.dir, 'k-admin.key')) }, ...fast });
      await mq.admin().createAcls([{ resourceType: 'topic', resourceName: 'k-tls', principal: 'User:alice', operation: 'write', permission: 'allow' }, { resourceType: 'cluster', resourceName: 'mq-cluster', principal: 'User:alice', operation: 'idempotent-write', permission: 'allow' }]);
      await mq.close();
      const [r] = await alice.send({ topic: 'k-tls', messages: [{ value: 'from kafkajs over tls' }] });
      expect(r!.errorCode).toBe(0);
      expect(t.lines.some((l) => l.msg === 'authorization denied' && l.principal === 'User:alice')).toBe(true);
    } finally {
      await alice.disconnect().catch(() => undefined);
      await admin.disconnect().catch(() => undefined);
      await t.cleanup();
    }
  });
});
