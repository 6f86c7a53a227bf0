/**
 * The active controller is SIGKILLed while producers (acks=all) and a
 * consumer run: a new controller takes over, produce and fetch carry on for
 * the partitions whose leaders are alive (after at most the ISR shrink that
 * drops the dead follower), the dead controller's partitions get new leaders
 * from their ISR, and every acknowledged record is read back at its offset.
 * When the old controller is back in sync, leadership returns to the
 * preferred replicas.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startAckedPump, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: the active controller killed under load', () => {
  it('elects a new controller; healthy partitions keep taking writes and serving reads', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('ctrl');
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const controller = (await c.anyStatus()).controllerId;
      const leaders = await Promise.all([0, 1, 2].map((p) => leaderFor(c, topic, p)));
      const healthy = [0, 1, 2].filter((p) => leaders[p] !== controller);
      expect(healthy.length).toBeGreaterThan(0);

      const producer = client.producer({ acks: 'all', lingerMs: 2, maxInFlight: 1, deliveryTimeoutMs: 60_000 });
      const pump = startAckedPump(producer, topic, 3);
      const acked = pump.acked;
      // A consumer on the healthy partitions reads throughout.
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign(healthy.map((partition) => ({ topic, partition, offset: 0 })));
      const read = new Map<string, string>();
      let reading = true;
      const reader = (async () => {
        while (reading) for (const r of await consumer.poll(200)) read.set(`${r.partition}:${r.offset}`, r.value!.toString());
      })();

      await waitFor(() => acked.length >= 300, { timeout: 20_000, message: 'acks before the kill' });
      const killedAt = Date.now();
      await c.kill(controller);
      const next = await waitFor(async () => {
        const s = await c.anyStatus([controller]).catch(() => undefined);
        return s && s.controllerId !== controller ? s.controllerId : 0;
      }, { timeout: 15_000, message: 'a new active controller' });
      expect(next).not.toBe(controller);
      // Healthy partitions take acks=all writes again soon (the dead follower leaves their ISR first).
      for (const p of healthy) {
        await waitFor(() => acked.some((a) => a.partition === p && a.at > killedAt + 100), { timeout: 15_000, message: `acks on healthy partition ${p}` });
      }
      // The dead controller's partitions moved to a live ISR member.
      for (const p of [0, 1, 2].filter((x) => !healthy.includes(x))) {
        const l = await leaderFor(c, topic, p, [controller]);
        expect(l).not.toBe(controller);
      }
      const afterKill = acked.length;
      await waitFor(() => acked.length >= afterKill + 300, { timeout: 20_000, message: 'more acks with the controller dead' });
      await pump.stop();
      // The consumer saw the healthy partitions' acknowledged records, at their offsets.
      const wanted = acked.filter((a) => healthy.includes(a.partition));
      await waitFor(() => wanted.every((a) => read.has(`${a.partition}:${a.offset}`)), { timeout: 20_000, message: 'the consumer caught up' });
      reading = false;
      await reader;
      await consumer.close();
      for (const a of wanted) expect(read.get(`${a.partition}:${a.offset}`)).toBe(`v${a.seq}`);

      // The old controller comes back as a follower and everything heals; once it is in sync again,
      // leadership returns to each partition's preferred (first) replica.
      await c.restart(controller);
      await c.waitHealthy(40_000, [topic]);
      await waitFor(
        async () => (await client.admin().describeTopic(topic)).partitions.every((p) => p.leader === p.replicas[0]),
        { timeout: 20_000, interval: 250, message: 'leaders back on their preferred replicas' },
      );
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 120_000);
});
