/**
 * HTTP consumer instances across brokers on a TLS-only, SASL-required cluster (issue 17): three real broker
 * processes whose client and HTTP listeners speak TLS only (certificates made by openssl at run time), with
 * authentication, ACLs and no super user but the admin. An instance created over https:// on broker A, whose
 * group's coordinator and partition's leader are other brokers, reaches them over wss:// (trusting the cluster's
 * CA) and logs in there as the principal that created it: a delegated login every broker accepts (its digest in
 * the metadata log). alice reads and commits through it (the group's committed offset checked) and the far brokers
 * log her login (OAUTHBEARER, User:alice); carol, who may describe the topic but not read it, is refused by the
 * leader (403 TOPIC_AUTHORIZATION_FAILED) with one audit line there naming User:carol. Run twice: without client
 * certificates, and with tls.client.auth=required (the instance presents broker A's certificate, and its delegated
 * login replaces that certificate's principal). Before, the instance dialled the other brokers with ws:// (refused
 * by their TLS listeners) and its login was known only to broker A.
 */
import { readFileSync } from 'node:fs';
import { MqClient, type Acl } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { httpsCall, makePki, type Pki } from './src/pki.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
let admin: MqClient | undefined;
let pki: Pki;

afterEach(async () => {
  await admin?.close({ timeoutMs: 2000 });
  await cluster?.close();
  admin = undefined;
  cluster = undefined;
});

afterAll(async () => {
  await cleanup();
});

const allow = (principal: string, resourceType: Acl['resourceType'], resourceName: string, operation: Acl['operation']): Acl => ({ principal, resourceType, resourceName, operation, permission: 'allow' });
const basic = (user: string) => `Basic ${Buffer.from(`${user}:${user}-pw`).toString('base64')}`;

describe.each([['none'], ['required']])('cluster: HTTP consumer instances reach other brokers over TLS as their creator (tls.client.auth=%s)', (clientAuth) => {
  it('alice reads and commits through brokers A -> B/C; carol is refused by the leader with one audit line there', async () => {
    pki = await makePki();
    const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    // With client certificates required, every client presents one: the admin's names User:admin (no SASL); the
    // HTTP callers present one with no ACLs and log in with Basic (credentials win over a certificate).
    const required = clientAuth === 'required';
    const adminCert = pki.issue('admin', 'admin');
    const web = pki.issue('web', 'web');
    cluster = await startCluster({
      brokers: 3,
      proxies: false,
      config: {
        ...FAST_FAILOVER_CONFIG,
        'tls.cert.file': server.cert,
        'tls.key.file': server.key,
        // The CA the brokers' own clients trust when they dial another broker's client listener.
        'tls.ca.file': pki.ca,
        'tls.client.auth': clientAuth,
        'authentication.enabled': 'true',
        'authorization.enabled': 'true',
        'super.users': 'User:admin',
        'group.initial.rebalance.delay.ms': '0',
      },
    });
    const c = cluster;
    const bootstrap = c.bootstrap.map((b) => b.replace(/^localhost:/, '127.0.0.1:'));
    if (required) {
      admin = new MqClient({ bootstrap, tls: { ca: readFileSync(pki.ca), cert: readFileSync(adminCert.cert), key: readFileSync(adminCert.key) } });
      await waitFor(() => admin!.admin().createUser('admin', 'admin-pw').then(() => true, () => false), { timeout: 30_000, message: 'the admin user created' });
    } else {
      const tls = { ca: readFileSync(pki.ca) };
      const first = new MqClient({ bootstrap, tls });
      await waitFor(() => first.admin().createUser('admin', 'admin-pw').then(() => true, () => false), { timeout: 30_000, message: 'the first user created' });
      await first.close({ timeoutMs: 2000 });
      admin = new MqClient({ bootstrap, tls, sasl: { username: 'admin', password: 'admin-pw' } });
    }
    const client = required ? { client: web } : {};
    for (const u of ['alice', 'carol']) await admin.admin().createUser(u, `${u}-pw`, { mechanisms: ['SCRAM-SHA-256'], iterations: 4096 });
    const topic = uniqueName('xb-tls');
    const group = uniqueName('xb-tls-g');
    const carolGroup = uniqueName('xb-tls-carol');
    // The brokers register (unfenced) in the background: create once one is live.
    await waitFor(() => admin!.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 1 }).then(() => true, () => false), { timeout: 30_000, message: 'the topic created' });
    await admin.admin().createAcls([
      allow('User:alice', 'topic', topic, 'read'),
      allow('User:alice', 'group', group, 'read'),
      allow('User:carol', 'topic', topic, 'describe'),
      allow('User:carol', 'group', carolGroup, 'read'),
    ]);
    const producer = admin.producer({ acks: 'all', lingerMs: 0 });
    for (let i = 0; i < 20; i++) await producer.send(topic, { key: `k${i}`, value: `record ${i}` });
    await producer.close();

    // Where the partition leads and where each group is coordinated: a native member joins once to find out.
    const leader = (await admin.admin().describeTopics([topic]))[0]!.partitions[0]!.leader;
    const coordinatorOf = async (g: string): Promise<number> => {
      const probe = admin!.consumer({ groupId: g, autoCommit: false, autoOffsetReset: 'earliest' });
      probe.subscribe([topic]);
      const id = (await waitFor(async () => {
        // Polling keeps it joining (and in the group) however slow the machine is.
        await probe.poll(500);
        for (const id of c.brokerIds) {
          const r = await httpsCall(c.broker(id).process.httpPort, pki.ca, 'GET', `/groups/${g}`, { ...client, auth: `Basic ${Buffer.from('admin:admin-pw').toString('base64')}` });
          if (r.status === 200 && r.body.members?.length > 0) return id;
        }
        return undefined;
      }, { timeout: 60_000, message: `the coordinator of ${g}` }))!;
      await probe.close();
      return id;
    };
    const coordinator = await coordinatorOf(group);
    // A: a broker that neither leads the partition nor coordinates the group (any but the leader if those are one).
    const a = c.brokerIds.find((id) => id !== leader && id !== coordinator)!;
    const far = [...new Set([leader, coordinator])];
    expect(far).not.toContain(a);
    const port = c.broker(a).process.httpPort;
    const call = (method: string, path: string, user: string, body?: unknown) => httpsCall(port, pki.ca, method, path, { ...client, auth: basic(user), ...(body !== undefined ? { body } : {}) });
    const logins = (id: number, who: string) => c.broker(id).process.output.filter((l) => l.includes('"msg":"authenticated"') && l.includes(`"principal":"User:${who}"`) && l.includes('"mechanism":"OAUTHBEARER"')).length;

    // alice: an instance on A reads all 20 records and commits, through the far coordinator and leader.
    const base = `/consumers/${group}/instances/a1`;
    expect((await call('POST', `/consumers/${group}`, 'alice', { name: 'a1', auto_offset_reset: 'earliest' })).status).toBe(200);
    expect((await call('POST', `${base}/subscription`, 'alice', { topics: [topic] })).status).toBe(204);
    const got: Array<{ value: string }> = [];
    await waitFor(async () => {
      const r = await call('GET', `${base}/records?timeout_ms=500`, 'alice');
      expect(r.status).toBe(200);
      got.push(...r.body);
      return got.length >= 20;
    }, { timeout: 30_000, message: 'alice polling 20 records through broker A' });
    expect(got.map((r) => r.value)).toEqual(Array.from({ length: 20 }, (_, i) => `record ${i}`));
    expect((await call('POST', `${base}/offsets`, 'alice')).status).toBe(204);
    const d = await admin.groups().describeGroup(group);
    expect(d.offsets.map((o) => [o.partition, o.committedOffset])).toEqual([[0, 20]]);
    // The far brokers saw her instance log in as her (never as a super user or as broker A).
    for (const id of far) expect(logins(id, 'alice')).toBeGreaterThan(0);
    expect(c.brokerIds.flatMap((id) => c.broker(id).process.output).filter((l) => l.includes('"msg":"authenticated"') && l.includes('"mechanism":"OAUTHBEARER"') && l.includes('User:admin'))).toEqual([]);
    expect((await call('DELETE', base, 'alice')).status).toBe(204);

    // carol: may describe the topic, not read it. Her instance on A (never the leader) is refused by the leader.
    const deniedOn = (id: number) => c.broker(id).process.output.filter((l) => l.includes('"msg":"authorization denied"') && l.includes('"principal":"User:carol"') && l.includes(`"resource":"topic:${topic}"`)).length;
    const carolA = c.brokerIds.find((id) => id !== leader)!;
    const carolPort = c.broker(carolA).process.httpPort;
    const carolCall = (method: string, path: string, body?: unknown) => httpsCall(carolPort, pki.ca, method, path, { ...client, auth: basic('carol'), ...(body !== undefined ? { body } : {}) });
    const cbase = `/consumers/${carolGroup}/instances/c1`;
    expect((await carolCall('POST', `/consumers/${carolGroup}`, { name: 'c1', auto_offset_reset: 'earliest' })).status).toBe(200);
    expect((await carolCall('POST', `${cbase}/subscription`, { topics: [topic] })).status).toBe(204);
    const refused = (await waitFor(async () => {
      const r = await carolCall('GET', `${cbase}/records?timeout_ms=500`);
      if (r.status === 200) {
        expect(r.body).toEqual([]);
        return undefined;
      }
      return r;
    }, { timeout: 30_000, message: "carol's poll refused" }))!;
    expect([refused.status, refused.body.error.code]).toEqual([403, 'TOPIC_AUTHORIZATION_FAILED']);
    // The leader's log line reaches its output through a pipe, maybe after the answer: wait for it, then count.
    await waitFor(() => deniedOn(leader) > 0, { timeout: 10_000, message: `the leader's audit line (lines per broker: ${c.brokerIds.map((id) => `${id}=${deniedOn(id)}`).join(' ')})` });
    await new Promise((r) => setTimeout(r, 500));
    expect(c.brokerIds.map((id) => [id, deniedOn(id)])).toEqual(c.brokerIds.map((id) => [id, id === leader ? 1 : 0]));
    expect((await carolCall('DELETE', cbase)).status).toBe(204);
  }, 180_000);
});
