/**
 * TLS on the inter-broker and Raft links (inter.broker.tls.enabled), against a
 * real 3-broker cluster with certificates made by openssl at run time: the
 * cluster forms and serves over TLS (every peer presents its certificate and
 * verifies the other's); a plaintext dial to the TLS inter-broker or Raft
 * port fails with one log line; a peer whose certificate another CA signed
 * is refused at the handshake.
 */
import { readFileSync } from 'node:fs';
import { WebSocket } from 'ws';
import { MqClient } from '@mq/client';
import { Connection } from '@mq/client/internal';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { makePki, type Issued } from './src/pki.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

/** A CA, a second unrelated CA, a broker certificate (127.0.0.1, localhost) from the first and an outsider's from the second. */
async function makeClusterPki(): Promise<{ ca: string; broker: Issued; outsider: Issued }> {
  const pki = await makePki();
  const san = 'DNS:localhost,IP:127.0.0.1';
  return { ca: pki.ca, broker: pki.issue('broker', 'broker', san), outsider: pki.issue('outsider', 'outsider', san, 'other') };
}

function lines(c: TestCluster, id: number, re: RegExp): number {
  return c.broker(id).process.output.filter((l) => re.test(l)).length;
}

/** A raw WebSocket dial; resolves with how it ended (an error message, or the close code). */
function dial(url: string, options: ConstructorParameters<typeof WebSocket>[2] = {}): Promise<string> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { ...options, handshakeTimeout: 5000 });
    ws.on('open', () => {
      ws.terminate();
      resolve('open');
    });
    ws.on('error', (err) => resolve(`error: ${err.message}`));
  });
}

describe('cluster: TLS with peer verification on the inter-broker and Raft links (inter.broker.tls.enabled)', () => {
  it('serves over TLS; a plaintext dial and a certificate from another CA are refused with one log line each', async () => {
    const pki = await makeClusterPki();
    cluster = await startCluster({
      brokers: 3,
      // A broker-only process (id 4): its controller channel and fetches are TLS too.
      observers: 1,
      proxies: false,
      config: {
        ...FAST_FAILOVER_CONFIG,
        'inter.broker.tls.enabled': 'true',
        'inter.broker.tls.cert.file': pki.broker.cert,
        'inter.broker.tls.key.file': pki.broker.key,
        'inter.broker.tls.ca.file': pki.ca,
      },
    });
    const c = cluster;
    await c.waitHealthy();
    const client = new MqClient({ bootstrap: c.bootstrap });
    try {
      // The cluster forms (Raft over wss://) and replicates (peer fetches over wss://): acks=all to RF 3, then consume.
      const topic = uniqueName('ibtls');
      await client.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '3' } });
      const wide = uniqueName('ibtls-wide');
      await client.admin().createTopic(wide, { numPartitions: 4, replicationFactor: 4 });
      await c.waitHealthy(30_000, [wide]);
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all' });
      const m = await producer.send(topic, { value: 'over-tls', partition: 0 });
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([{ topic, partition: 0, offset: m.offset }]);
      expect((await consumer.poll(10_000)).map((r) => r.value!.toString())).toEqual(['over-tls']);
      await consumer.close();

      const id = c.brokerIds[0]!;
      const b = c.broker(id);
      const handshakeFailed = /TLS handshake failed: connection closed/;
      const raftHandshakeFailed = /raft transport: TLS handshake failed/;

      // A plaintext dial to the TLS inter-broker port: the connection fails, the broker logs one line.
      const before = lines(c, id, handshakeFailed);
      await expect(
        Connection.open({ address: `127.0.0.1:${b.interBrokerPort}`, clientId: 'plain', connectTimeoutMs: 5000, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 }),
      ).rejects.toMatchObject({ code: expect.stringMatching(/CONNECTION_ERROR|CONNECTION_CLOSED/) });
      await waitFor(() => lines(c, id, handshakeFailed) === before + 1, { timeout: 5000, message: 'one log line for the plaintext dial' });
      // And to the Raft port.
      const raftBefore = lines(c, id, raftHandshakeFailed);
      expect(await dial(`ws://127.0.0.1:${b.raftPort}`)).toMatch(/^error: /);
      await waitFor(() => lines(c, id, raftHandshakeFailed) === raftBefore + 1, { timeout: 5000, message: 'one log line for the plaintext Raft dial' });

      // A peer whose certificate another CA signed (it trusts the cluster's CA, so only its own certificate is wrong): refused.
      const ca = readFileSync(pki.ca);
      const outsider = { ca, cert: readFileSync(pki.outsider.cert), key: readFileSync(pki.outsider.key) };
      const before2 = lines(c, id, handshakeFailed);
      await expect(
        Connection.open({ address: `127.0.0.1:${b.interBrokerPort}`, clientId: 'outsider', connectTimeoutMs: 5000, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20, tls: outsider }),
      ).rejects.toMatchObject({ code: expect.stringMatching(/CONNECTION_ERROR|CONNECTION_CLOSED/) });
      await waitFor(() => lines(c, id, handshakeFailed) === before2 + 1, { timeout: 5000, message: 'one log line for the outsider certificate' });
      const raftBefore2 = lines(c, id, raftHandshakeFailed);
      expect(await dial(`wss://127.0.0.1:${b.raftPort}`, outsider)).toMatch(/^error: /);
      await waitFor(() => lines(c, id, raftHandshakeFailed) === raftBefore2 + 1, { timeout: 5000, message: 'one log line for the outsider on the Raft port' });
      // With the cluster's own certificate the same dial gets through TLS (so the refusals above are the certificate's).
      expect(await dial(`wss://127.0.0.1:${b.raftPort}`, { ca, cert: readFileSync(pki.broker.cert), key: readFileSync(pki.broker.key) })).toBe('open');

      // Everyone else is still served.
      const m2 = await producer.send(topic, { value: 'still-serving', partition: 0 });
      expect(m2.offset).toBe(m.offset + 1);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 180_000);
});
