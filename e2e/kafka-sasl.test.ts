/**
 * Issue 17 on the Kafka listener: SASL through SaslHandshake/SaslAuthenticate
 * against a real `mq broker start` process with authentication.enabled and
 * authorization.enabled, with real Kafka clients (kafkajs, and Debian's kcat,
 * whose librdkafka is built with sasl_scram and sasl_plain):
 *
 * - SCRAM-SHA-256 and SCRAM-SHA-512 from kafkajs: produce and consume in a
 *   group once the ACLs allow it, TOPIC_AUTHORIZATION_FAILED before; a wrong
 *   password and an unknown user refused alike, with one audit line each;
 * - a client that does not log in: its first request past ApiVersions closes
 *   the connection, with one log line; nothing was created;
 * - PLAIN over plaintext refused (UNSUPPORTED_SASL_MECHANISM, one log line
 *   saying why); PLAIN over TLS works (a second broker with a certificate),
 *   from kafkajs and from kcat (SASL_SSL);
 * - kcat with SCRAM-SHA-256 produces and reads back, and fails on a wrong
 *   password.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type KafkaConfig, type SASLOptions } from 'kafkajs';
import { MqClient, type Acl, type ClientOptions } from '@mq/client';
import { freePort } from '../tools/free-port.mjs';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

const ADMIN = { username: 'admin', password: 'admin-secret' };
const ALICE = { username: 'alice', password: 'alice-secret' };
const BOB = { username: 'bob', password: 'bob-secret' };

interface Secured {
  broker: BrokerProcess;
  kafkaPort: number;
  /** @mq/client options that reach this broker (TLS when it has it) */
  mq: ClientOptions;
}

/** A broker with authentication and authorization on, its Kafka listener, and the users admin (super user), alice (SHA-256) and bob (SHA-512). */
async function securedBroker(extra: string[] = [], tls?: { ca: Buffer }): Promise<Secured> {
  const kafkaPort = await freePort();
  const broker = await startBroker({
    args: [
      '--kafka-port',
      String(kafkaPort),
      ...['authentication.enabled=true', 'authorization.enabled=true', 'super.users=User:admin', 'group.initial.rebalance.delay.ms=0', 'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512,PLAIN'].flatMap((c) => ['--config-set', c]),
      ...extra,
    ],
  });
  const base: ClientOptions = { bootstrap: `${tls ? 'localhost' : '127.0.0.1'}:${broker.port}`, ...(tls ? { tls: { ca: tls.ca } } : {}) };
  // The first user from this machine without logging in (the bootstrap exception), then the others as it.
  const first = new MqClient(base);
  await first.admin().createUser(ADMIN.username, ADMIN.password);
  await first.close();
  const mq: ClientOptions = { ...base, sasl: { mechanism: 'SCRAM-SHA-256', ...ADMIN } };
  const admin = new MqClient(mq);
  try {
    await admin.admin().createUser(ALICE.username, ALICE.password, { mechanisms: ['SCRAM-SHA-256'] });
    await admin.admin().createUser(BOB.username, BOB.password, { mechanisms: ['SCRAM-SHA-512'] });
  } finally {
    await admin.close();
  }
  return { broker, kafkaPort, mq };
}

async function asAdmin<T>(s: Secured, fn: (c: MqClient) => Promise<T>): Promise<T> {
  const c = new MqClient(s.mq);
  try {
    return await fn(c);
  } finally {
    await c.close();
  }
}

const allow = (principal: string, resourceType: Acl['resourceType'], resourceName: string, operation: Acl['operation']): Acl => ({ principal, resourceType, resourceName, operation, permission: 'allow' });

function kafkaClient(s: Secured, sasl: SASLOptions | undefined, extra: Partial<KafkaConfig> = {}): Kafka {
  return new Kafka({
    clientId: 'kafka-sasl-test',
    brokers: [`${extra.ssl ? 'localhost' : '127.0.0.1'}:${s.kafkaPort}`],
    logLevel: logLevel.NOTHING,
    // Retries for the working cases (a loaded machine); the refused ones use NO_RETRY (one attempt, one audit line).
    retry: { retries: 5, initialRetryTime: 100 },
    connectionTimeout: 5000,
    ...(sasl ? { sasl } : {}),
    ...extra,
  });
}

const NO_RETRY: Partial<KafkaConfig> = { retry: { retries: 0 } };

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<Error & { type?: string }> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

/** The broker's JSON log lines. */
function logLines(b: BrokerProcess): Array<Record<string, unknown>> {
  return b.output.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
}

function kcat(args: string[], input?: string, timeoutMs = 20_000): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile('kcat', args, { timeout: timeoutMs, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
    child.stdin!.end(input ?? '');
  });
}

afterAll(async () => {
  await cleanup();
});

describe('SASL on the Kafka listener (plaintext)', () => {
  let s: Secured;
  beforeAll(async () => {
    s = await securedBroker();
  }, 60_000);

  it('kafkajs logs in with SCRAM-SHA-256 (SaslHandshake, then SaslAuthenticate as ApiVersions offers it) and sees the cluster', async () => {
    const admin = kafkaClient(s, { mechanism: 'scram-sha-256', ...ADMIN }).admin();
    await admin.connect();
    try {
      expect((await admin.describeCluster()).brokers.map((b) => b.port)).toEqual([s.kafkaPort]);
    } finally {
      await admin.disconnect();
    }
  });

  it.each([
    ['scram-sha-256', ALICE],
    ['scram-sha-512', BOB],
  ] as const)('kafkajs %s: refused without the ACLs (TOPIC_AUTHORIZATION_FAILED), produces and consumes in a group with them', async (mechanism, user) => {
    const topic = uniqueName(`ksasl-${mechanism}`);
    const group = uniqueName('ksasl-group');
    await asAdmin(s, (c) => c.admin().createTopic(topic, { numPartitions: 2 }));
    const kafka = kafkaClient(s, { mechanism, ...user });
    const producer = kafka.producer();
    await producer.connect();
    try {
      const refused = await rejection(producer.send({ topic, messages: [{ value: 'x' }] }));
      // kafkajs's words for Kafka's TOPIC_AUTHORIZATION_FAILED (29), from the topic's Metadata error.
      expect(refused.message).toMatch(/Not authorized to access topics: \[Topic authorization failed\]/);
      const principal = `User:${user.username}`;
      await waitFor(() => logLines(s.broker).some((l) => l.msg === 'authorization denied' && l.principal === principal), { message: 'the audit line of the refusal' });

      await asAdmin(s, (c) =>
        c.admin().createAcls([allow(principal, 'topic', topic, 'write'), allow(principal, 'topic', topic, 'read'), allow(principal, 'group', group, 'read')]),
      );
      const sent = await waitFor(() => producer.send({ topic, acks: -1, messages: [{ key: 'k1', value: 'v1' }, { key: 'k2', value: 'v2' }, { key: 'k3', value: 'v3' }] }), { message: 'a produce once the ACLs are in' });
      expect(sent.every((r) => r.errorCode === 0)).toBe(true);
    } finally {
      await producer.disconnect();
    }
    const consumer = kafka.consumer({ groupId: group, heartbeatInterval: 500, maxWaitTimeInMs: 200 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(`${message.key}=${message.value}`) });
      await waitFor(() => seen.length === 3, { timeout: 30_000, message: `3 records (got ${seen.length})` });
      expect(seen.sort()).toEqual(['k1=v1', 'k2=v2', 'k3=v3']);
    } finally {
      await consumer.disconnect();
    }
    expect(logLines(s.broker).some((l) => l.msg === 'authenticated' && l.principal === `User:${user.username}` && l.mechanism === mechanism.toUpperCase())).toBe(true);
  }, 60_000);

  it('a wrong password and an unknown user are refused alike (SASL_AUTHENTICATION_FAILED), one audit line each', async () => {
    const failures = () => logLines(s.broker).filter((l) => l.msg === 'authentication failed');
    const before = failures().length;
    const wrong = await rejection(kafkaClient(s, { mechanism: 'scram-sha-256', username: ALICE.username, password: 'guess' }, NO_RETRY).admin().connect());
    const unknown = await rejection(kafkaClient(s, { mechanism: 'scram-sha-256', username: 'nobody', password: 'guess' }, NO_RETRY).admin().connect());
    expect(wrong.name).toBe('KafkaJSSASLAuthenticationError');
    expect(unknown.name).toBe(wrong.name);
    expect(wrong.message).toMatch(/SASL_AUTHENTICATION_FAILED|invalid user name or password/);
    // The same words for both (kafkajs names the user it tried in its own text).
    expect(unknown.message.replace('nobody', ALICE.username)).toBe(wrong.message);
    await waitFor(() => failures().length === before + 2, { message: 'two audit lines' });
    const lines = failures().slice(before);
    expect(lines.map((l) => [l.user, l.code, l.audit])).toEqual([
      [ALICE.username, 'SASL_AUTHENTICATION_FAILED', true],
      ['nobody', 'SASL_AUTHENTICATION_FAILED', true],
    ]);
  });

  it('without a login, the first request past ApiVersions closes the connection (one log line); nothing is created', async () => {
    const topic = uniqueName('ksasl-anon');
    const closes = () => logLines(s.broker).filter((l) => typeof l.msg === 'string' && l.msg.startsWith('kafka request before authentication'));
    const before = closes().length;
    const admin = kafkaClient(s, undefined, NO_RETRY).admin();
    const err = await rejection((async () => {
      await admin.connect();
      await admin.createTopics({ topics: [{ topic }] });
    })());
    await admin.disconnect();
    expect(err.name).toMatch(/KafkaJS(ConnectionClosedError|NumberOfRetriesExceeded|NonRetriableError|Connection)/);
    await waitFor(() => closes().length > before, { message: 'the log line of the closed connection' });
    expect(closes()[before]!.code).toBe('SASL_AUTHENTICATION_FAILED');
    const topics = await asAdmin(s, (c) => c.admin().listTopics());
    expect(topics).not.toContain(topic);
  });

  it('PLAIN on the plaintext listener: UNSUPPORTED_SASL_MECHANISM, one log line saying it needs TLS', async () => {
    const err = await rejection(kafkaClient(s, { mechanism: 'plain', ...ALICE }, NO_RETRY).admin().connect());
    expect(err.name).toBe('KafkaJSProtocolError');
    expect(err.type).toBe('UNSUPPORTED_SASL_MECHANISM');
    const line = (await waitFor(() => logLines(s.broker).find((l) => typeof l.msg === 'string' && l.msg.startsWith('kafka SaslHandshake refused')), { message: 'the refusal line' }))!;
    expect(line.msg).toMatch(/PLAIN sends the password itself: accepted only over TLS/);
    expect(line.enabled).toEqual(['SCRAM-SHA-256', 'SCRAM-SHA-512']);
  });

  it('kcat (librdkafka) with SCRAM-SHA-256 produces and reads back; a wrong password fails', async () => {
    const features = execFileSync('kcat', ['-X', 'list'], { encoding: 'utf8' });
    // Debian's kcat links a librdkafka built with SASL/SCRAM; without it this case cannot run and says so.
    expect(features).toMatch(/builtin\.features.*sasl_scram/);
    const topic = uniqueName('ksasl-kcat');
    await asAdmin(s, async (c) => {
      await c.admin().createTopic(topic, { numPartitions: 1 });
      await c.admin().createAcls([allow('User:alice', 'topic', topic, 'write'), allow('User:alice', 'topic', topic, 'read'), allow('User:alice', 'topic', topic, 'describe')]);
    });
    const sasl = (password: string) => ['-b', `127.0.0.1:${s.kafkaPort}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=SCRAM-SHA-256', '-X', `sasl.username=${ALICE.username}`, '-X', `sasl.password=${password}`];
    const produced = await kcat([...sasl(ALICE.password), '-P', '-t', topic, '-K', ':'], 'a:1\nb:2\n');
    expect(produced.code).toBe(0);
    const read = await kcat([...sasl(ALICE.password), '-C', '-t', topic, '-o', 'beginning', '-e', '-f', '%k=%s\\n']);
    expect(read.stdout.trim().split('\n')).toEqual(['a=1', 'b=2']);
    const wrong = await kcat([...sasl('guess'), '-L', '-m', '3'], undefined, 15_000);
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(/SASL authentication error|Authentication failed|SASL_AUTHENTICATION_FAILED/i);
  }, 60_000);
});

describe('SASL PLAIN on the Kafka listener over TLS', () => {
  let s: Secured;
  let dir: string;
  let ca: Buffer;
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'mq-ksasl-pki-'));
    const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
    openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=mq-ksasl-ca']);
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost']);
    writeFileSync(path.join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
    openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.pem', '-days', '2', '-extfile', 'server.ext']);
    ca = readFileSync(path.join(dir, 'ca.pem'));
    s = await securedBroker(['--config-set', `tls.cert.file=${path.join(dir, 'server.pem')}`, '--config-set', `tls.key.file=${path.join(dir, 'server.key')}`], { ca });
  }, 60_000);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('kafkajs PLAIN over SSL: produces and consumes as alice with the ACLs; a wrong password is refused with one audit line', async () => {
    const topic = uniqueName('ksasl-plain');
    const group = uniqueName('ksasl-plain-group');
    await asAdmin(s, async (c) => {
      await c.admin().createTopic(topic, { numPartitions: 1 });
      await c.admin().createAcls([allow('User:alice', 'topic', topic, 'write'), allow('User:alice', 'topic', topic, 'read'), allow('User:alice', 'group', group, 'read')]);
    });
    const ssl = { ca: [ca.toString('utf8')], servername: 'localhost' };
    const kafka = kafkaClient(s, { mechanism: 'plain', ...ALICE }, { ssl });
    const producer = kafka.producer();
    await producer.connect();
    try {
      const [r] = await producer.send({ topic, messages: [{ key: 'p', value: 'over tls' }] });
      expect(r!.errorCode).toBe(0);
    } finally {
      await producer.disconnect();
    }
    const consumer = kafka.consumer({ groupId: group, maxWaitTimeInMs: 200 });
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(`${message.key}=${message.value}`) });
      await waitFor(() => seen.length === 1, { timeout: 30_000, message: 'the record' });
      expect(seen).toEqual(['p=over tls']);
    } finally {
      await consumer.disconnect();
    }
    expect(logLines(s.broker).some((l) => l.msg === 'authenticated' && l.principal === 'User:alice' && l.mechanism === 'PLAIN')).toBe(true);

    const failures = () => logLines(s.broker).filter((l) => l.msg === 'authentication failed');
    const before = failures().length;
    const wrong = await rejection(kafkaClient(s, { mechanism: 'plain', username: ALICE.username, password: 'guess' }, { ssl, ...NO_RETRY }).admin().connect());
    expect(wrong.name).toBe('KafkaJSSASLAuthenticationError');
    await waitFor(() => failures().length === before + 1, { message: 'one audit line' });
    expect(failures()[before]!.mechanism).toBe('PLAIN');
  }, 60_000);

  it('kcat (librdkafka) over SASL_SSL with PLAIN reads what kafkajs wrote', async () => {
    const topic = uniqueName('ksasl-kcat-plain');
    await asAdmin(s, async (c) => {
      await c.admin().createTopic(topic, { numPartitions: 1 });
      await c.admin().createAcls([allow('User:alice', 'topic', topic, 'write'), allow('User:alice', 'topic', topic, 'read')]);
    });
    const producer = kafkaClient(s, { mechanism: 'plain', ...ALICE }, { ssl: { ca: [ca.toString('utf8')], servername: 'localhost' } }).producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'x', value: 'from kafkajs' }] });
    await producer.disconnect();
    const args = ['-b', `localhost:${s.kafkaPort}`, '-X', 'security.protocol=SASL_SSL', '-X', `ssl.ca.location=${path.join(dir, 'ca.pem')}`, '-X', 'sasl.mechanisms=PLAIN', '-X', `sasl.username=${ALICE.username}`];
    const read = await kcat([...args, '-X', `sasl.password=${ALICE.password}`, '-C', '-t', topic, '-o', 'beginning', '-e', '-f', '%k=%s\\n']);
    expect(read.stdout.trim()).toBe('x=from kafkajs');
    const wrong = await kcat([...args, '-X', 'sasl.password=guess', '-L', '-m', '3'], undefined, 15_000);
    expect(wrong.code).not.toBe(0);
  }, 60_000);
});
