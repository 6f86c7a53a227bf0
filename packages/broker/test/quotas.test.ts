/**
 * Client quotas against a real broker (startBroker, real sockets, real logs):
 * two client ids produce at once, one over its producer_byte_rate quota. The
 * throttled one honours each answer's throttle_ms (as a client must) and its
 * throughput converges to the quota (within 10 % from its first throttled
 * answer to the end of a 7 s run); the other is never throttled and runs well
 * above the quota. A fetch over consumer_byte_rate is throttled and its
 * connection muted; the Kafka door answers throttle_time_ms, mutes alike and
 * serves AlterClientQuotas/DescribeClientQuotas; the HTTP API delays an answer
 * over the quota; bad quota input is refused with INVALID_REQUEST and changes
 * nothing; a connection beyond max.connections.per.ip (WebSocket or Kafka
 * port) or max.connections.per.principal is closed with the reason and one
 * log line, the others unaffected.
 */
import { randomBytes } from 'node:crypto';
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorCodeFromNumber } from '@mq/protocol/errors';
import { ScramClient, scramCredential } from '@mq/protocol/scram';
import type { mq } from '@mq/protocol/wire';
import { ProduceApi } from '@mq/kafka-protocol';
import { AlterClientQuotasApi, DescribeClientQuotasApi } from '@mq/kafka-protocol/messages';
import { KafkaWire } from './kafka-wire.js';
import { createTopic, httpJson, startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

/**
 * The throttled client's quota: 100 kB batches take 100 ms each at this rate, so the client is quota-bound (not
 * latency-bound) unless a round trip plus its timer's lateness exceeds 100 ms (a loaded CI machine stays well below).
 */
const QUOTA = 1_000_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function alter(alterations: mq.IClientQuotaAlteration[], validateOnly = false) {
  return { alterClientQuotas: { alterations, validateOnly } };
}

describe('client quotas', () => {
  let t: TestBroker;
  let admin: TestClient;
  const open: TestClient[] = [];
  const connect = async () => {
    const c = await TestClient.connect(t.url);
    open.push(c);
    return c;
  };
  const describeAll = async () => JSON.parse(JSON.stringify((await admin.request({ describeClientQuotas: {} })).describeClientQuotas!.entries)) as unknown;

  beforeAll(async () => {
    // A 2 s quota window: a client's burst is 2 s of its quota.
    t = await startTestBroker({ 'quota.window.num': '2', 'quota.window.size.seconds': '1', 'kafka.listener.port': '0' });
    admin = await connect();
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await t?.cleanup();
  });

  it('a client id over its produce quota converges to it; another client id is not throttled', async () => {
    const r = await admin.request(alter([{ entity: { clientId: 'slow' }, ops: [{ key: 'producer_byte_rate', value: QUOTA }] }]));
    expect(r.errorCode).toBe(0);
    expect(r.alterClientQuotas!.results[0]!.errorCode).toBe(0);
    expect(await describeAll()).toEqual([{ entity: { clientId: 'slow' }, values: [{ key: 'producer_byte_rate', value: QUOTA }] }]);
    const topic = topicName('quota');
    await createTopic(admin, topic);

    const runMs = 7000;
    /**
     * Produces `size`-byte batches one at a time until `runMs`, honouring throttle_ms; returns every throttle and the
     * rate from the first throttled answer on (the burst is spent then, whenever that was on a loaded machine).
     */
    const producer = async (clientId: string, size: number) => {
      const c = await connect();
      const records = encodeBatchSync([{ value: randomBytes(size) }]);
      const throttles: number[] = [];
      let steadyBytes = 0;
      let totalBytes = 0;
      const start = Date.now();
      let steadyStart = 0;
      while (Date.now() - start < runMs) {
        const res = await c.request({ clientId, produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records }] }] } });
        expect(res.produce!.topics[0]!.partitions[0]!.errorCode).toBe(0);
        throttles.push(res.throttleMs);
        const at = Date.now() - start;
        totalBytes += records.length;
        if (steadyStart > 0) steadyBytes += records.length;
        else if (res.throttleMs > 0) steadyStart = at;
        if (res.throttleMs > 0) await sleep(res.throttleMs);
      }
      const steadyMs = steadyStart > 0 ? Date.now() - start - steadyStart : 0;
      return { rate: steadyMs > 0 ? (steadyBytes / steadyMs) * 1000 : 0, steadyMs, totalRate: (totalBytes / (Date.now() - start)) * 1000, throttles };
    };
    const [slow, fast] = await Promise.all([producer('slow', 100_000), producer('fast', 100_000)]);
    if (process.env.MQ_QUOTA_TEST_VERBOSE) console.log({ quota: QUOTA, slowRate: Math.round(slow.rate), slowSteadyMs: slow.steadyMs, slowRequests: slow.throttles.length, fastRate: Math.round(fast.totalRate), fastRequests: fast.throttles.length });
    expect(slow.throttles.filter((ms) => ms > 0).length).toBeGreaterThan(10);
    expect(slow.steadyMs).toBeGreaterThan(3000);
    expect(slow.rate).toBeGreaterThan(QUOTA * 0.9);
    expect(slow.rate).toBeLessThan(QUOTA * 1.1);
    expect(fast.throttles.every((ms) => ms === 0)).toBe(true);
    expect(fast.totalRate).toBeGreaterThan(QUOTA * 2);

    const metrics = (await httpJson(`${t.httpUrl}/metrics`)).body as string;
    const throttled = /mq_quota_throttle_time_seconds_total\{quota="producer_byte_rate"\} ([\d.e+-]+)/.exec(metrics);
    expect(Number(throttled?.[1])).toBeGreaterThan(1);
    expect(metrics).toMatch(/mq_quota_recorded_total\{quota="producer_byte_rate",entity="client-id=slow"\} \d+/);
  }, 30_000);

  it('a fetch answering more than the consumer quota carries a throttle time, and the connection reads nothing until it passed', async () => {
    const topic = topicName('quota-fetch');
    await createTopic(admin, topic);
    for (let i = 0; i < 5; i++) {
      await admin.request({ produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: randomBytes(50_000) }]) }] }] } });
    }
    await admin.request(alter([{ entity: { clientId: 'reader' }, ops: [{ key: 'consumer_byte_rate', value: 50_000 }] }]));
    const c = await connect();
    const fetch = { clientId: 'reader', fetch: { maxWaitMs: 0, maxBytes: 1 << 20, topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] } };
    const first = await c.request(fetch);
    expect(first.fetch!.topics[0]!.partitions[0]!.records.length).toBeGreaterThan(200_000);
    // 250 kB against 50 kB/s with 100 kB of burst: about 3 s of debt, at most one window (2 s) per answer.
    expect(first.throttleMs).toBeGreaterThan(1000);
    expect(first.throttleMs).toBeLessThanOrEqual(2000);
    // Sent at once (not honouring it, as a misbehaving client would): the broker does not read it before the throttle time passed.
    const sent = Date.now();
    await c.request({ clientId: 'reader', metadata: { topics: [topic] } });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(first.throttleMs - 100);
  }, 20_000);

  it('the Kafka door: a produce over the quota answers throttle_time_ms and the connection is muted for it', async () => {
    // KafkaWire's client id.
    await admin.request(alter([{ entity: { clientId: 'kafka-wire-test' }, ops: [{ key: 'producer_byte_rate', value: 50_000 }] }]));
    const topic = topicName('quota-kafka');
    await createTopic(admin, topic);
    const c = await KafkaWire.connect(t.broker.kafkaPort!);
    try {
      const records = Buffer.from(encodeBatchSync([{ value: randomBytes(150_000) }]));
      const produce = () => c.request(ProduceApi, 9, { transactionalId: null, acks: 1, timeoutMs: 5000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
      // 150 kB within 100 kB of burst at 50 kB/s: about 1 s of debt.
      const first = await produce();
      expect(first.responses[0]!.partitionResponses[0]!.errorCode).toBe(0);
      expect(first.throttleTimeMs).toBeGreaterThan(500);
      const sent = Date.now();
      const second = await produce();
      expect(Date.now() - sent).toBeGreaterThanOrEqual(first.throttleTimeMs - 100);
      expect(second.throttleTimeMs).toBeGreaterThan(0);
    } finally {
      c.close();
    }
  }, 20_000);

  it('the HTTP API: a produce over the quota of client id http-api is answered that much later', async () => {
    const topic = topicName('quota-http');
    await createTopic(admin, topic);
    const post = async () => {
      const sent = Date.now();
      const r = await httpJson(`${t.httpUrl}/topics/${topic}/records`, { body: { value: 'x'.repeat(150_000) } });
      expect(r.status).toBe(200);
      return Date.now() - sent;
    };
    expect(await post()).toBeLessThan(5000);
    await admin.request(alter([{ entity: { clientId: 'http-api' }, ops: [{ key: 'producer_byte_rate', value: 50_000 }] }]));
    // 150 kB within 100 kB of burst at 50 kB/s: about 1 s of debt, paid before the answer.
    expect(await post()).toBeGreaterThanOrEqual(900);
    await admin.request(alter([{ entity: { clientId: 'http-api' }, ops: [{ key: 'producer_byte_rate', remove: true }] }]));
  }, 20_000);

  it('the Kafka door: AlterClientQuotas and DescribeClientQuotas (KIP-546), a bad value refused on every entry and nothing changed', async () => {
    const c = await KafkaWire.connect(t.broker.kafkaPort!);
    try {
      for (const v of [0, 1]) {
        const name = `kafka-admin-${v}`;
        const set = await c.request(AlterClientQuotasApi, v, {
          entries: [{ entity: [{ entityType: 'user', entityName: null }, { entityType: 'client-id', entityName: name }], ops: [{ key: 'request_rate', value: 250, remove: false }] }],
          validateOnly: false,
        });
        expect(set.entries.map((e) => e.errorCode)).toEqual([0]);
        const exact = await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'client-id', matchType: 0, match: name }], strict: false });
        expect(exact.errorCode).toBe(0);
        expect(JSON.parse(JSON.stringify(exact.entries))).toEqual([{ entity: [{ entityType: 'user', entityName: null }, { entityType: 'client-id', entityName: name }], values: [{ key: 'request_rate', value: 250 }] }]);
        // Strict: only entities with no part beyond a client id; this one has a user part too.
        expect((await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'client-id', matchType: 0, match: name }], strict: true })).entries).toEqual([]);
        // Default (1) and any specified (2) matches, and the same filter through the mq door (one filter, in the core).
        const byDefaultUser = await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'user', matchType: 1, match: null }, { entityType: 'client-id', matchType: 2, match: null }], strict: true });
        expect(byDefaultUser.entries!.map((e) => e.entity.find((x) => x.entityType === 'client-id')?.entityName)).toContain(name);
        expect((await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'user', matchType: 2, match: null }], strict: false })).entries!.some((e) => e.entity.some((x) => x.entityName === name))).toBe(false);
        const mqDoor = await admin.request({ describeClientQuotas: { components: [{ entityType: 'user', matchType: 1 }, { entityType: 'client-id', matchType: 0, match: name }], strict: true } });
        expect(mqDoor.describeClientQuotas!.entries.map((e) => e.entity?.clientId)).toEqual([name]);
        // A match type or entity type nobody knows is refused by the core, through either door.
        expect((await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'client-id', matchType: 7, match: null }], strict: false })).errorCode).toBe(42);
        expect((await c.request(DescribeClientQuotasApi, v, { components: [{ entityType: 'ip', matchType: 0, match: 'x' }], strict: false })).errorCode).toBe(42);
        const mqBad = await admin.request({ describeClientQuotas: { components: [{ entityType: 'client-id', matchType: 7 as mq.QuotaFilterComponent.MatchType }] } });
        expect(errorCodeFromNumber(mqBad.errorCode ?? mqBad.describeClientQuotas?.errorCode ?? 0)).toBe('INVALID_REQUEST');
        const bad = await c.request(AlterClientQuotasApi, v, {
          entries: [
            { entity: [{ entityType: 'client-id', entityName: 'fine' }], ops: [{ key: 'request_rate', value: 10, remove: false }] },
            { entity: [{ entityType: 'client-id', entityName: name }], ops: [{ key: 'request_rate', value: -1, remove: false }] },
          ],
          validateOnly: false,
        });
        expect(bad.entries.map((e) => e.errorCode)).toEqual([42, 42]); // INVALID_REQUEST
        const after = await c.request(DescribeClientQuotasApi, v, { components: [], strict: false });
        expect(after.entries!.some((e) => e.entity.some((x) => x.entityName === 'fine'))).toBe(false);
        await c.request(AlterClientQuotasApi, v, { entries: [{ entity: [{ entityType: 'user', entityName: null }, { entityType: 'client-id', entityName: name }], ops: [{ key: 'request_rate', value: 0, remove: true }] }], validateOnly: false });
      }
    } finally {
      c.close();
    }
  });

  it('bad quota input is refused with INVALID_REQUEST and changes nothing', async () => {
    const before = await describeAll();
    const cases: mq.IClientQuotaAlteration[][] = [
      [{ entity: { clientId: 'x' }, ops: [{ key: 'producer_byte_rate', value: -100 }] }],
      [{ entity: { clientId: 'x' }, ops: [{ key: 'producer_byte_rate', value: 1e18 }] }],
      [{ entity: { clientId: 'x' }, ops: [{ key: 'bytes_per_fortnight', value: 100 }] }],
      [{ entity: {}, ops: [{ key: 'request_rate', value: 100 }] }],
      [{ entity: { user: 'not a user!' }, ops: [{ key: 'request_rate', value: 100 }] }],
      // One good alteration with a bad one: neither applies.
      [
        { entity: { clientId: 'good' }, ops: [{ key: 'request_rate', value: 100 }] },
        { entity: { clientId: 'bad' }, ops: [{ key: 'request_rate', value: 0 }] },
      ],
    ];
    for (const alterations of cases) {
      const r = await admin.request(alter(alterations));
      expect(errorCodeFromNumber(r.errorCode)).toBe('INVALID_REQUEST');
      expect(r.errorMessage).toMatch(/quota/);
    }
    // validate_only checks and changes nothing either.
    const v = await admin.request(alter([{ entity: { clientId: 'good' }, ops: [{ key: 'request_rate', value: 100 }] }], true));
    expect(v.errorCode).toBe(0);
    expect(await describeAll()).toEqual(before);
    expect(t.lines.filter((l) => l.msg === 'request refused' && l.api === 'alterClientQuotas').length).toBe(cases.length);
  });

  it('removing the last value of an entity removes it; its clients are no longer throttled', async () => {
    await admin.request(alter([{ entity: { clientId: 'slow' }, ops: [{ key: 'producer_byte_rate', remove: true }] }]));
    expect((await describeAll()) as Array<{ entity: { clientId: string } }>).not.toContainEqual(expect.objectContaining({ entity: expect.objectContaining({ clientId: 'slow' }) }));
    const c = await connect();
    const topic = topicName('quota-off');
    await createTopic(admin, topic);
    const records = encodeBatchSync([{ value: randomBytes(200_000) }]);
    for (let i = 0; i < 10; i++) {
      const res = await c.request({ clientId: 'slow', produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records }] }] } });
      expect(res.throttleMs).toBe(0);
    }
  });
});

describe('connection limits', () => {
  let t: TestBroker;
  const open: TestClient[] = [];
  beforeAll(async () => {
    t = await startTestBroker({ 'max.connections.per.ip': '2', 'kafka.listener.port': '0' });
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await t?.cleanup();
  });

  it('a connection beyond max.connections.per.ip (WebSocket or Kafka port) is closed with the reason and one log line; the others keep working', async () => {
    const a = await TestClient.connect(t.url);
    const b = await TestClient.connect(t.url);
    open.push(a, b);
    const c = await TestClient.connect(t.url);
    open.push(c);
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/too many connections from .* \(max\.connections\.per\.ip=2\)/);
    expect(t.lines.filter((l) => /max\.connections\.per\.ip/.test(l.msg)).length).toBe(1);
    for (const x of [a, b]) expect((await x.request({ metadata: { topics: [] } })).errorCode).toBe(0);
    // The Kafka port counts against the same limit: closed at once, one more log line.
    const k = await KafkaWire.connect(t.broker.kafkaPort!);
    await k.closed;
    expect(t.lines.filter((l) => /max\.connections\.per\.ip/.test(l.msg)).length).toBe(2);
    // A closed connection is counted out: a new one is accepted.
    await a.close();
    await waitFor(async () => {
      const d = await TestClient.connect(t.url);
      open.push(d);
      const ok = await Promise.race([d.request({ metadata: { topics: [] } }).then(() => true), d.closed.then(() => false)]);
      return ok || undefined;
    }, 5000);
  });
});

describe('connection limit per principal', () => {
  let t: TestBroker;
  const open: TestClient[] = [];
  const upsert = async (user: string, password: string) => {
    const c = await scramCredential('SCRAM-SHA-256', password, { iterations: 4096 });
    return { alterUserScramCredentials: { upsertions: [{ user, mechanism: 'SCRAM-SHA-256', iterations: c.iterations, salt: c.salt, storedKey: c.storedKey, serverKey: c.serverKey }] } };
  };
  /** A connection logged in as `user` (the two SaslAuthenticate steps); returns it and the final answer's error code. */
  const login = async (user: string, password: string) => {
    const c = await TestClient.connect(t.url);
    open.push(c);
    const scram = new ScramClient('SCRAM-SHA-256', user, password);
    const first = await c.request({ saslAuthenticate: { mechanism: 'SCRAM-SHA-256', authBytes: Buffer.from(scram.first()) } });
    const final = await c.request({ saslAuthenticate: { mechanism: 'SCRAM-SHA-256', authBytes: Buffer.from(await scram.final(first.saslAuthenticate!.authBytes)) } });
    return { c, code: final.errorCode };
  };
  beforeAll(async () => {
    t = await startTestBroker({ 'authentication.enabled': 'true', 'max.connections.per.principal': '1' });
    // The first user, from loopback before any user exists; then a second one as that user.
    const boot = await TestClient.connect(t.url);
    open.push(boot);
    expect((await boot.request(await upsert('admin', 'admin-pw'))).alterUserScramCredentials!.results[0]!.errorCode).toBe(0);
  });
  afterAll(async () => {
    for (const c of open) await c.close().catch(() => undefined);
    await t?.cleanup();
  });

  it('a second connection of a principal at its limit is closed once it logs in, with the reason and one log line; the first and other principals are unaffected', async () => {
    const first = await login('admin', 'admin-pw');
    expect(first.code).toBe(0);
    expect((await first.c.request(await upsert('alice', 'alice-pw'))).alterUserScramCredentials!.results[0]!.errorCode).toBe(0);
    const second = await login('admin', 'admin-pw');
    const closed = await second.c.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/too many connections for User:admin \(max\.connections\.per\.principal=1\)/);
    expect(t.lines.filter((l) => /max\.connections\.per\.principal/.test(l.msg)).length).toBe(1);
    expect((await first.c.request({ metadata: { topics: [] } })).errorCode).toBe(0);
    expect((await login('alice', 'alice-pw')).code).toBe(0);
    // Once the first closes, admin may connect again.
    await first.c.close();
    await waitFor(async () => {
      const again = await login('admin', 'admin-pw');
      const ok = await Promise.race([again.c.request({ metadata: { topics: [] } }).then((r) => r.errorCode === 0), again.c.closed.then(() => false)]);
      return ok || undefined;
    }, 5000);
  });
});
