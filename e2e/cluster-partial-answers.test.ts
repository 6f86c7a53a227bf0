/**
 * One slow partition holds back only itself (issue 21: "partitions it had
 * nothing to do with are not affected"). A producer packs the partitions a
 * broker leads into one produce request; a broker answered such a request
 * when every partition in it was done, so a partition whose follower is
 * paused (acks=all waits for the whole ISR) held back every partition sent
 * with it. With ProduceRequest.partial_answers the WebSocket door answers each
 * partition as it completes.
 *
 * Real processes: 3 brokers; topic `slow` (RF 2) led by broker L with follower
 * F; topic `fast` (RF 1) moved onto L. F is SIGSTOPped with a session and a
 * lag time far beyond the test, so it stays in `slow`'s ISR. One send to each
 * topic in the same turn goes out in one request to L: `fast` must be
 * acknowledged while `slow` still waits; after SIGCONT `slow` is acknowledged
 * too, and both records are read back at their offsets.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});
afterAll(async () => {
  await cleanup();
});

const LONG_SESSION = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '120000', 'replica.lag.time.max.ms': '120000', 'leader.imbalance.check.interval.ms': '3600000' };

describe('cluster: partial produce answers (issue 21)', () => {
  it('a partition waiting for a paused follower does not hold back another partition sent in the same request', async () => {
    cluster = await startCluster({ brokers: 3, config: LONG_SESSION });
    const c = cluster;
    await c.waitHealthy();
    const slow = uniqueName('slow');
    const fast = uniqueName('fast');
    const client = new MqClient({ bootstrap: c.bootstrap });
    const admin = client.admin();
    const producer = client.producer({ acks: 'all', lingerMs: 0 });
    try {
      await admin.createTopic(slow, { numPartitions: 1, replicationFactor: 2, configs: { 'min.insync.replicas': '1' } });
      await admin.createTopic(fast, { numPartitions: 1, replicationFactor: 1 });
      await c.waitHealthy(30_000, [slow, fast]);
      const leader = await leaderFor(c, slow, 0);
      const follower = await followerOf(c, slow, leader);
      if ((await leaderFor(c, fast, 0)) !== leader) {
        await admin.reassignPartition(fast, 0, [leader]);
        await waitFor(async () => (await leaderFor(c, fast, 0)) === leader, { timeout: 30_000 });
      }
      // Metadata and connections warm, both partitions' ISRs full.
      await Promise.all([producer.send(slow, { value: 'slow-0', partition: 0 }), producer.send(fast, { value: 'fast-0', partition: 0 })]);

      c.pause(follower);
      let slowAcked = false;
      try {
        // The same turn: one produce request to the leader carries both partitions.
        const slowSend = producer.send(slow, { value: 'slow-1', partition: 0 }).then((r) => {
          slowAcked = true;
          return r;
        });
        const fastSend = producer.send(fast, { value: 'fast-1', partition: 0 });
        const fastAck = await Promise.race([fastSend, new Promise<'held'>((r) => setTimeout(() => r('held'), 20_000))]);
        expect(fastAck).not.toBe('held');
        expect(slowAcked).toBe(false);
        c.resume(follower);
        const slowAck = await slowSend;
        expect(slowAck.offset).toBe(1);
        expect(fastAck === 'held' ? -1 : fastAck.offset).toBe(1);
      } finally {
        c.resume(follower);
      }
      const consumer = client.consumer();
      for (const [topic, prefix] of [
        [slow, 'slow'],
        [fast, 'fast'],
      ] as const) {
        consumer.assign([{ topic, partition: 0, offset: 0 }]);
        const seen: string[] = [];
        await waitFor(
          async () => {
            for (const r of await consumer.poll(500)) seen.push(`${r.offset}:${r.value?.toString()}`);
            return seen.length >= 2;
          },
          { timeout: 30_000 },
        );
        expect(seen).toEqual([`0:${prefix}-0`, `1:${prefix}-1`]);
      }
      await consumer.close();
    } finally {
      await producer.close();
      await client.close();
    }
  }, 180_000);
});

/** The broker other than `leader` that hosts `topic`-0 as a follower. */
async function followerOf(c: TestCluster, topic: string, leader: number): Promise<number> {
  let found = -1;
  await waitFor(
    async () => {
      for (const id of c.ids) {
        if (id === leader) continue;
        const s = await c.status(id).catch(() => undefined);
        if (s?.hosted.some((h) => h.topic === topic && h.partition === 0 && h.role === 'follower')) {
          found = id;
          return true;
        }
      }
      return false;
    },
    { timeout: 30_000 },
  );
  return found;
}
