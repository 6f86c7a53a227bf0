/**
 * HTTP consumer instances with authentication (issue 17), against a real
 * `mq broker start` process with authentication.enabled and
 * authorization.enabled; callers use bearer tokens from POST /tokens (Basic
 * from loopback):
 *
 * - an instance belongs to the principal that created it: another
 *   authenticated principal, even one with every ACL on the topic and group,
 *   gets 404 on each of its routes (poll, subscribe, assignments, commit,
 *   delete), and the instance keeps working for its owner;
 * - the instance's reads are authorized with its creator's ACLs: a principal
 *   that may read the group but not the topic gets 403
 *   TOPIC_AUTHORIZATION_FAILED from its poll; one that may read both reads,
 *   commits, and the group's committed offsets say so;
 * - its fetches count against its creator's quota (mq_quota_recorded_total of
 *   the user's entity grows), and the broker logs its login as that
 *   principal (OAUTHBEARER).
 */
import { MqClient, type Acl } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

const ADMIN = { username: 'admin', password: 'admin-secret' };
const USERS = ['alice', 'bob', 'carol'] as const;

let broker: BrokerProcess;
let admin: MqClient;
const bearer: Record<string, string> = {};
const topic = uniqueName('httpc-auth');
const group = uniqueName('httpc-auth-g');

const allow = (principal: string, resourceType: Acl['resourceType'], resourceName: string, operation: Acl['operation']): Acl => ({ principal, resourceType, resourceName, operation, permission: 'allow' });

async function call(method: string, path: string, auth: string | undefined, body?: unknown): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (auth) headers.authorization = auth;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${broker.httpUrl}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls the instance as `user` until `n` records came (or the deadline). */
async function pollAll(user: string, base: string, n: number): Promise<any[]> {
  const got: any[] = [];
  await waitFor(
    async () => {
      const r = await call('GET', `${base}/records?timeout_ms=500`, bearer[user]);
      expect(r.status).toBe(200);
      got.push(...r.body);
      return got.length >= n;
    },
    { timeout: 20_000, message: `${user} polling ${n} records` },
  );
  return got;
}

beforeAll(async () => {
  broker = await startBroker({
    args: ['authentication.enabled=true', 'authorization.enabled=true', 'super.users=User:admin', 'group.initial.rebalance.delay.ms=0'].flatMap((c) => ['--config-set', c]),
  });
  const first = new MqClient({ bootstrap: broker.bootstrap });
  await first.admin().createUser(ADMIN.username, ADMIN.password);
  await first.close();
  admin = new MqClient({ bootstrap: broker.bootstrap, sasl: ADMIN });
  for (const u of USERS) await admin.admin().createUser(u, `${u}-pw`, { mechanisms: ['SCRAM-SHA-256'], iterations: 4096 });
  await admin.admin().createTopic(topic, { numPartitions: 1 });
  // alice and bob may read the topic and the group; carol only the group.
  await admin.admin().createAcls([
    ...['User:alice', 'User:bob'].flatMap((p) => [allow(p, 'topic', topic, 'read'), allow(p, 'group', group, 'read')]),
    allow('User:carol', 'group', group, 'read'),
  ]);
  // A generous quota for alice: it throttles nothing, but her fetched bytes are recorded against her entity.
  await admin.admin().alterClientQuotas([{ entity: { user: 'alice' }, set: { consumer_byte_rate: 100_000_000 } }]);
  const producer = admin.producer({ acks: 'all', lingerMs: 0 });
  for (let i = 0; i < 5; i++) await producer.send(topic, { key: `k${i}`, value: `record ${i}` });
  await producer.close();
  for (const u of USERS) {
    const t = await call('POST', '/tokens', `Basic ${Buffer.from(`${u}:${u}-pw`).toString('base64')}`);
    expect(t.status).toBe(200);
    bearer[u] = `Bearer ${t.body.token as string}`;
  }
}, 90_000);

afterAll(async () => {
  await admin?.close();
  await cleanup();
});

describe('HTTP consumer instances with authentication', () => {
  const base = `/consumers/${group}/instances/a1`;

  it("an instance reads and commits with its creator's ACLs; the group's committed offset says so", async () => {
    expect((await call('POST', `/consumers/${group}`, undefined, { name: 'a1' })).status).toBe(401);
    const created = await call('POST', `/consumers/${group}`, bearer.alice, { name: 'a1', auto_offset_reset: 'earliest' });
    expect(created).toEqual({ status: 200, body: { instance_id: 'a1', base_uri: base } });
    expect((await call('POST', `${base}/subscription`, bearer.alice, { topics: [topic] })).status).toBe(204);
    const got = await pollAll('alice', base, 5);
    expect(got.map((r) => r.value)).toEqual([0, 1, 2, 3, 4].map((i) => `record ${i}`));
    expect((await call('POST', `${base}/offsets`, bearer.alice)).status).toBe(204);
    const d = await admin.groups().describeGroup(group);
    expect(d.offsets.find((o) => o.topic === topic && o.partition === 0)?.committedOffset).toBe(5);
    // Its connection logged in as alice, by a token this broker delegated.
    const logins = broker.output.filter((l) => l.includes('"authenticated"') && l.includes('"OAUTHBEARER"')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(logins.map((l) => l.principal)).toContain('User:alice');
  });

  it("its fetches count against its creator's quota", async () => {
    const metrics = await (await fetch(`${broker.httpUrl}/metrics`, { headers: { authorization: `Basic ${Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64')}` } })).text();
    const line = metrics.split('\n').find((l) => l.startsWith('mq_quota_recorded_total{') && l.includes('quota="consumer_byte_rate"') && l.includes('alice'));
    expect(line).toBeDefined();
    expect(Number(line!.split(' ').at(-1))).toBeGreaterThan(5 * 'record 0'.length);
  });

  it("another principal (with every ACL it needs) gets 404 on each of the instance's routes; the owner's instance is untouched", async () => {
    for (const [method, path, body] of [
      ['GET', `${base}/records?timeout_ms=0`, undefined],
      ['GET', `${base}/assignments`, undefined],
      ['POST', `${base}/subscription`, { topics: [topic] }],
      ['POST', `${base}/offsets`, { offsets: [{ topic, partition: 0, offset: 0 }] }],
      ['DELETE', base, undefined],
    ] as const) {
      const r = await call(method, path, bearer.bob, body);
      expect([method, path, r.status, r.body.error?.code]).toEqual([method, path, 404, 'UNKNOWN_MEMBER_ID']);
    }
    // bob's refused commit changed nothing; alice's instance still serves her.
    expect((await admin.groups().describeGroup(group)).offsets.find((o) => o.partition === 0)?.committedOffset).toBe(5);
    const a = await call('GET', `${base}/assignments`, bearer.alice);
    expect(a).toEqual({ status: 200, body: { partitions: [{ topic, partition: 0 }] } });
    expect((await call('DELETE', base, bearer.alice)).status).toBe(204);
  });

  it('a principal that may read the group but not the topic gets 403 TOPIC_AUTHORIZATION_FAILED from its poll', async () => {
    const cbase = `/consumers/${group}/instances/c1`;
    expect((await call('POST', `/consumers/${group}`, bearer.carol, { name: 'c1', auto_offset_reset: 'earliest' })).status).toBe(200);
    expect((await call('POST', `${cbase}/subscription`, bearer.carol, { topics: [topic] })).status).toBe(204);
    let last: { status: number; body: any } = { status: 0, body: undefined };
    await waitFor(
      async () => {
        last = await call('GET', `${cbase}/records?timeout_ms=500`, bearer.carol);
        expect(last.status === 200 && last.body.length > 0).toBe(false); // never a record
        return last.status === 403;
      },
      { timeout: 20_000, message: 'carol refused' },
    );
    expect(last.body.error.code).toBe('TOPIC_AUTHORIZATION_FAILED');
    expect((await call('DELETE', cbase, bearer.carol)).status).toBe(204);
  });
});
