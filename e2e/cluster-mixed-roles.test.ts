/**
 * A combined cluster grown with a broker-only process: 3 processes with
 * process.roles=broker,controller (the Raft voters) and one with
 * process.roles=broker that follows the metadata log from them. The
 * broker-only one gets replicas like any broker; SIGKILLed it is fenced
 * (its fetches stopped) and its partitions move; restarted it is back in
 * every ISR; the voters' liveness still comes from Raft.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: combined voters plus a broker-only process', () => {
  it('places replicas on the broker-only process and fences and unfences it by its metadata fetches', async () => {
    cluster = await startCluster({ brokers: 3, observers: 1, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    expect(c.controllerIds).toEqual([1, 2, 3]);
    expect(c.brokerIds).toEqual([1, 2, 3, 4]);
    await c.waitHealthy();
    const topic = uniqueName('mixed');
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: 4, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const d = await client.admin().describeTopic(topic);
      expect(d.partitions.filter((p) => p.replicas.includes(4)).length).toBe(3);
      expect(d.partitions.some((p) => p.leader === 4)).toBe(true);
      const producer = client.producer({ acks: 'all', lingerMs: 2 });
      await Promise.all(Array.from({ length: 400 }, (_, i) => producer.send(topic, { value: `v${i}`, partition: i % 4 })));

      await c.kill(4);
      await waitFor(
        async () => {
          const s = await c.anyStatus([4]);
          const t = await client.admin().describeTopic(topic);
          return s.brokers.some((b) => b.id === 4 && b.fenced) && t.partitions.every((p) => p.leader !== 4 && p.leader >= 0);
        },
        { timeout: 10_000, interval: 100, message: 'broker 4 fenced and its partitions moved' },
      );
      await Promise.all(Array.from({ length: 200 }, (_, i) => producer.send(topic, { value: `w${i}`, partition: i % 4 })));

      await c.restart(4);
      await c.waitHealthy(30_000, [topic]);
      const s4 = await c.status(4);
      expect(s4.controllerId).toBeGreaterThan(0);
      expect(s4.activeController).toBe(false);
      expect(s4.hosted.filter((h) => h.topic === topic).length).toBe(3);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 90_000);
});
