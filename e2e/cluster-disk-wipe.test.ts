/**
 * A follower loses its log directory (every partition log, checkpoint and
 * its broker metadata; its Raft metadata log is kept, see
 * TestCluster.wipeAndRestart) and restarts empty: it registers as a new
 * run (so it leaves the ISR and leads nothing), rebuilds every partition
 * from the leaders, rejoins the ISR, and its copy is then good enough to
 * take over: after the old leader is killed, every acknowledged record is
 * still there at its offset.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { expectReplicasAgree, FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: a follower with a wiped disk', () => {
  it('rebuilds from the leader, rejoins the ISR and can then lead without losing acknowledged records', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('wipe');
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all', lingerMs: 2 });
      const acked: Array<{ offset: number; value: string }> = [];
      const send = async (n: number, tag: string) => {
        const rs = await Promise.all(Array.from({ length: n }, (_, i) => producer.send(topic, { value: `${tag}-${i}`, partition: 0 }).then((m) => ({ offset: m.offset, value: `${tag}-${i}` }))));
        acked.push(...rs);
      };
      await send(2000, 'before');

      const leader = await leaderFor(c, topic, 0);
      const controller = (await c.anyStatus()).controllerId;
      // A follower that is not the controller.
      const victim = c.ids.find((id) => id !== leader && id !== controller) ?? c.ids.find((id) => id !== leader)!;
      await c.wipeAndRestart(victim);
      const rejoined = await waitFor(
        async () => {
          const s = await c.status(victim);
          const h = s.hosted.find((x) => x.topic === topic && x.partition === 0);
          const meta = await c.anyStatus();
          const inIsr = !meta.underReplicated.some((u) => u.topic === topic) && meta.brokers.some((b) => b.id === victim && !b.fenced);
          return h && h.logEndOffset >= 2000 && inIsr ? h : undefined;
        },
        { timeout: 40_000, interval: 200, message: `broker ${victim} rebuilt and back in the ISR` },
      ).catch(async (err: unknown) => {
        const v = await c.status(victim).catch((e: unknown) => String(e));
        throw new Error(`${String(err)}\nvictim: ${JSON.stringify(v)}\nmeta: ${JSON.stringify(await c.anyStatus().catch(() => null))}\n${c.broker(victim).process.output.slice(-30).join('\n')}`);
      });
      expect(rejoined!.role).toBe('follower');
      if (process.env.MQ_E2E_TRACE) {
        for (const id of c.ids) {
          const lines = c.broker(id).process.output.filter((l) => /ISR|fenc|registered|leading|following/.test(l));
          process.stderr.write(`--- broker ${id}\n${lines.map((l) => l.slice(0, 400)).join('\n')}\n`);
        }
      }
      await send(500, 'after');

      // The rebuilt replica is complete: kill the leader; the others (one of them rebuilt) carry everything.
      await c.kill(leader);
      await send(200, 'failover');
      expect(await leaderFor(c, topic, 0, [leader])).not.toBe(leader);
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([{ topic, partition: 0, offset: 0 }]);
      const read = new Map<number, string>();
      await waitFor(
        async () => {
          for (const r of await consumer.poll(300)) read.set(r.offset, r.value!.toString());
          return acked.every((a) => read.has(a.offset));
        },
        { timeout: 20_000, message: 'reading back every acknowledged record' },
      );
      await consumer.close();
      for (const a of acked) expect(read.get(a.offset)).toBe(a.value);
      await c.restart(leader);
      await c.waitHealthy(40_000, [topic]);
      await client.close();
      const counts = await expectReplicasAgree(c, topic, [0]);
      expect(counts[0]!.every((n) => n > 0)).toBe(true);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 120_000);
});
