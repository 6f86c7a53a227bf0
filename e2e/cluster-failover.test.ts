/**
 * A 3-broker cluster of real processes under faults. RF=3,
 * min.insync.replicas=2, acks=all: producers write continuously while the
 * harness kills partition leaders (SIGKILL), pauses followers (SIGSTOP) and
 * isolates a leader from the other brokers. Afterwards every acknowledged
 * record is read back at its acknowledged offset, per-partition order of the
 * acknowledged records holds, the replicas' logs agree batch for batch, and
 * every partition is back to a full ISR.
 */
import { MqClient, type RecordMetadata } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { expectReplicasAgree, FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
const trace = (msg: string) => {
  if (process.env.MQ_E2E_TRACE) process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
};

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

interface Acked {
  partition: number;
  offset: number;
  seq: number;
}

describe('cluster: RF=3, min.insync=2, acks=all under leader kills, follower pauses and leader isolation', () => {
  it('keeps every acknowledged record at its offset, in order, identical on every replica, and heals to full ISR', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('failover');
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all', lingerMs: 2, maxInFlight: 1, deliveryTimeoutMs: 60_000 });
      const acked: Acked[] = [];
      let failed = 0;
      let stop = false;
      let seq = 0;
      // One pump per partition, so a partition stalled behind a dead or paused leader does not hold up the others.
      const pumpPartition = async (partition: number) => {
        const window: Array<Promise<void>> = [];
        let n = 0;
        while (!stop) {
          const s = seq++;
          window.push(
            producer.send(topic, { value: `v${s}`, partition }).then(
              (m: RecordMetadata) => void acked.push({ partition, offset: m.offset, seq: s }),
              () => void failed++,
            ),
          );
          if (window.length >= 16) await window.shift();
          // Let timers and I/O run even when sends settle at once (a refused send must not starve the event loop).
          if (++n % 16 === 0) await new Promise((r) => setImmediate(r));
        }
        await Promise.all(window);
      };
      const pump = Promise.all([0, 1, 2].map(pumpPartition));
      const progress = async (n: number, what: string) => {
        const target = acked.length + n;
        trace(`waiting for ${n} more acks ${what} (have ${acked.length}, ${failed} failed)`);
        await waitFor(() => acked.length >= target, { timeout: 45_000, interval: 50, message: `${n} more acks ${what} (had ${acked.length}, ${failed} failed)` });
      };
      await progress(300, 'before the faults');

      // 1. SIGKILL the leader of partition 0, then bring it back.
      const l0 = await leaderFor(c, topic, 0);
      await c.kill(l0);
      await progress(200, `after killing leader ${l0}`);
      await c.restart(l0);

      // 2. SIGSTOP a follower of partition 1 for longer than the session, then resume it.
      const l1 = await leaderFor(c, topic, 1);
      const f1 = c.ids.find((id) => id !== l1)!;
      c.pause(f1);
      await progress(200, `with follower ${f1} paused`);
      await new Promise((r) => setTimeout(r, 2500));
      c.resume(f1);
      await progress(100, `after resuming ${f1}`);

      // 3. Isolate the leader of partition 2 from the other brokers, then heal.
      await c.waitHealthy(40_000, [topic]);
      const l2 = await leaderFor(c, topic, 2);
      c.isolate(l2);
      await waitFor(async () => (await leaderFor(c, topic, 2, [l2])) !== l2, { timeout: 20_000, message: 'a new leader for partition 2' });
      await progress(200, `with leader ${l2} isolated`);
      c.healAll();

      // 4. Kill a leader again, under load, and restart it.
      const l0b = await leaderFor(c, topic, 0);
      await c.kill(l0b);
      await progress(200, `after killing leader ${l0b}`);
      await c.restart(l0b);
      await progress(100, 'after the last restart');

      stop = true;
      await pump;
      const status = await c.waitHealthy(60_000, [topic]);
      expect(status.offline).toEqual([]);

      // Every acknowledged record is where it was acknowledged.
      const consumer = client.consumer({ maxWaitMs: 200 });
      consumer.assign([0, 1, 2].map((partition) => ({ topic, partition, offset: 0 })));
      const byOffset = new Map<string, string>();
      const needed = new Set(acked.map((a) => `${a.partition}:${a.offset}`));
      await waitFor(
        async () => {
          for (const r of await consumer.poll(500)) byOffset.set(`${r.partition}:${r.offset}`, r.value!.toString());
          return [...needed].every((k) => byOffset.has(k));
        },
        { timeout: 30_000, message: 'reading back every acknowledged record' },
      );
      await consumer.close();
      for (const a of acked) expect(byOffset.get(`${a.partition}:${a.offset}`)).toBe(`v${a.seq}`);
      // Per partition, acknowledged records are in send order.
      for (const p of [0, 1, 2]) {
        const list = acked.filter((a) => a.partition === p).sort((x, y) => x.offset - y.offset);
        for (let i = 1; i < list.length; i++) expect(list[i]!.seq).toBeGreaterThan(list[i - 1]!.seq);
      }
      expect(acked.length).toBeGreaterThan(1000);

      // The replicas agree: stop the brokers and compare their logs batch by batch.
      await client.close();
      await expectReplicasAgree(c, topic, [0, 1, 2]);
      console.log(`acked ${acked.length} records, ${failed} sends failed (never acknowledged)`);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 170_000);
});
