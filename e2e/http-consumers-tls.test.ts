/**
 * HTTP consumer instances on a broker whose listeners speak TLS only (issue 17), against a real `mq broker start`
 * process with tls.cert.file/tls.key.file (certificates made by openssl at run time): an instance is created over
 * https://, subscribes, long-polls the 300 records produced over wss:// (every byte checked) and commits, and the group's committed offset
 * says so. The instance's client reaches the broker's own client listener in process (before, it dialled
 * ws://127.0.0.1:<port> in plaintext, which the TLS listener refuses: every poll answered nothing).
 */
import { readFileSync } from 'node:fs';
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { httpsCall, makePki, type Pki } from './src/pki.js';

let pki: Pki;
let broker: BrokerProcess;
let client: MqClient;

beforeAll(async () => {
  pki = await makePki();
  const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
  broker = await startBroker({ args: ['group.initial.rebalance.delay.ms=0', `tls.cert.file=${server.cert}`, `tls.key.file=${server.key}`].flatMap((c) => ['--config-set', c]) });
  client = new MqClient({ bootstrap: `localhost:${broker.port}`, tls: { ca: readFileSync(pki.ca) } });
}, 60_000);

afterAll(async () => {
  await client?.close({ timeoutMs: 2_000 });
  await cleanup();
});

describe('HTTP consumer instances on a TLS-only broker', () => {
  it('an instance is created, subscribes, polls the records and commits; the group says so', async () => {
    const topic = uniqueName('httpc-tls');
    const group = uniqueName('httpc-tls-g');
    const call = (method: string, p: string, body?: unknown) => httpsCall(broker.httpPort, pki.ca, method, p, body === undefined ? {} : { body });
    await client.admin().createTopic(topic, { numPartitions: 1 });
    // 300 records of ~1 KiB: several fetches, each answered from the broker's pooled read buffers through the in-process pair.
    const N = 300;
    const value = (i: number) => `tls record ${i} ${'x'.repeat(1000)}`;
    const producer = client.producer({ acks: 'all', lingerMs: 5 });
    await Promise.all(Array.from({ length: N }, (_, i) => producer.send(topic, { key: `k${i}`, value: value(i) })));
    await producer.close();

    const created = await call('POST', `/consumers/${group}`, { name: 'i1', auto_offset_reset: 'earliest' });
    expect(created.status).toBe(200);
    const base = created.body.base_uri as string;
    expect((await call('POST', `${base}/subscription`, { topics: [topic] })).status).toBe(204);
    const got: any[] = [];
    let last: { status: number; body: any } | undefined;
    try {
      await waitFor(
        async () => {
          last = await call('GET', `${base}/records?timeout_ms=500`);
          if (last.status === 200) got.push(...last.body);
          return got.length >= N;
        },
        { timeout: 30_000, message: `the instance polling ${N} records over TLS` },
      );
    } catch (err) {
      throw new Error(`${(err as Error).message}; last poll: ${JSON.stringify(last)}; broker: ${broker.output.filter((l) => l.includes('http-consumers')).slice(-5).join('\n')}`);
    }
    expect(got.map((r) => r.value)).toEqual(Array.from({ length: N }, (_, i) => value(i)));
    expect((await call('POST', `${base}/offsets`)).status).toBe(204);
    expect((await client.groups().describeGroup(group)).offsets.find((o) => o.topic === topic && o.partition === 0)?.committedOffset).toBe(N);
    expect((await call('GET', `${base}/assignments`)).body).toEqual({ partitions: [{ topic, partition: 0 }] });
    expect((await call('DELETE', base)).status).toBe(204);
    // Nothing of it reached the listener as a failed TLS handshake.
    expect(broker.output.filter((l) => l.includes('TLS handshake failed'))).toEqual([]);
  });

  it('a broker stopping closes its instances first: they leave their groups, then it exits cleanly', async () => {
    const group = uniqueName('httpc-tls-stop');
    const call = (method: string, p: string, body?: unknown) => httpsCall(broker.httpPort, pki.ca, method, p, body === undefined ? {} : { body });
    const created = await call('POST', `/consumers/${group}`, { name: 'i2', auto_offset_reset: 'earliest' });
    expect(created.status).toBe(200);
    await client.close({ timeoutMs: 2_000 });
    expect(await broker.stop()).toBe(0);
    const closed = broker.output.filter((l) => l.includes('"msg":"HTTP consumer instance closed"') && l.includes(`"group":"${group}"`));
    expect(closed.map((l) => (JSON.parse(l) as { reason: string }).reason)).toEqual(['broker stopping']);
  });
});
