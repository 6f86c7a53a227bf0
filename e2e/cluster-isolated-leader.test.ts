/**
 * One producer (acks=all, one record at a time) writes to a partition whose
 * leader is then cut off from the other brokers while the client can still
 * reach it. The cut-off broker resigns once it has missed the controller for
 * its session and, from then on, refuses Metadata (BROKER_NOT_AVAILABLE)
 * instead of answering from its stale view that it still leads; the client
 * asks another broker, finds the new leader and carries on well before its
 * delivery timeout. Every acknowledged record is read back at its offset.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, expectReplicasAgree, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: a leader cut off from the other brokers but not from its client', () => {
  it('the client moves to the new leader (not stuck on the old one until its delivery timeout)', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('iso');
    // Bootstrap only through the broker that will be cut off, so its stale view is the first one the client sees.
    const admin = new MqClient({ bootstrap: c.bootstrap });
    await admin.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
    await c.waitHealthy(30_000, [topic]);
    await admin.close();
    const leader = await leaderFor(c, topic, 0);
    // /health and /metrics describe the cluster's topics and this broker's replicas (not a local topic manager).
    // A broker's replica of the new partition can show up in its metrics a moment after the ISR is full.
    for (const id of c.ids) {
      const http = c.broker(id).process.httpUrl;
      expect(((await (await fetch(`${http}/health`)).json()) as { topics: number }).topics).toBe(1);
      const metrics = await waitFor(
        async () => {
          const text = await (await fetch(`${http}/metrics`)).text();
          return text.includes(`mq_partition_leader{topic="${topic}",partition="0"}`) ? text : null;
        },
        { timeout: 10_000, message: `broker ${id}'s /metrics to show its replica of ${topic}-0` },
      );
      expect(metrics).toContain('mq_topics 1');
      expect(metrics).toContain(`mq_partition_leader{topic="${topic}",partition="0"} ${id === leader ? 1 : 0}`);
      expect(metrics).toMatch(new RegExp(`mq_partition_high_watermark\\{topic="${topic}",partition="0"\\} \\d+`));
      expect(metrics).toContain('mq_under_replicated_partitions 0');
    }
    const client = new MqClient({
      bootstrap: [c.broker(leader).process.bootstrap],
      requestTimeoutMs: 4000,
      retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 1000 },
    });
    try {
      const producer = client.producer({ acks: 'all', lingerMs: 0, maxInFlight: 1, deliveryTimeoutMs: 60_000 });
      const acked: Array<{ offset: number; seq: number; at: number }> = [];
      let stop = false;
      const pump = (async () => {
        for (let seq = 0; !stop; seq++) {
          const m = await producer.send(topic, { value: `v${seq}`, partition: 0 }).catch(() => undefined);
          if (m) acked.push({ offset: m.offset, seq, at: Date.now() });
          // A refused send settles at once: let timers run (a closed client must not spin this loop forever).
          else await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const stopPump = () => {
        stop = true;
        return pump;
      };
      try {
        await waitFor(() => acked.length >= 100, { timeout: 20_000, message: 'acks before the cut' });
        const cutAt = Date.now();
        c.isolate(leader);
        const next = await leaderFor(c, topic, 0, [leader]);
        expect(next).not.toBe(leader);
        // The one sequential producer is acknowledged again, by the new leader, long before its 60 s delivery timeout.
        await waitFor(() => acked.some((a) => a.at > cutAt + 200 && a.offset > acked[0]!.offset), {
          timeout: 25_000,
          interval: 100,
          message: 'acks from the new leader after the cut',
        });
        const resumedMs = acked.find((a) => a.at > cutAt + 200)!.at - cutAt;
        if (process.env.MQ_E2E_TRACE) console.log(`acks again ${resumedMs} ms after the leader was cut off (session 2000 ms)`);
        const afterCut = acked.length;
        await waitFor(() => acked.length >= afterCut + 50, { timeout: 20_000, message: 'more acks on the new leader' });
      } finally {
        await stopPump();
      }

      c.healAll();
      await c.waitHealthy(40_000, [topic]);
      // Every acknowledged record is where it was acknowledged, once, in send order.
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([{ topic, partition: 0, offset: 0 }]);
      const last = acked[acked.length - 1]!.offset;
      const read = new Map<number, string>();
      await waitFor(
        async () => {
          for (const r of await consumer.poll(200)) read.set(r.offset, r.value!.toString());
          return read.has(last);
        },
        { timeout: 20_000, message: 'read back every acknowledged record' },
      );
      await consumer.close();
      for (const a of acked) expect(read.get(a.offset)).toBe(`v${a.seq}`);
      for (let i = 1; i < acked.length; i++) expect(acked[i]!.offset).toBeGreaterThan(acked[i - 1]!.offset);
      await client.close();
      await expectReplicasAgree(c, topic, [0]);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 120_000);
});
