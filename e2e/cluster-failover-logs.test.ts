/**
 * Regression (issue 12): an ordinary event of a failover is not logged as an
 * error. A client whose connection closes while its acks=all produce waits
 * for the followers (here: both paused, so the high watermark stalls) leaves
 * a request nobody waits for: the leader drops it quietly instead of logging
 * `produce failed … internal error: This operation was aborted` (UNKNOWN).
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: failover logs (issue 12)', () => {
  it('a client connection closing during an acks=all wait is no error on the leader', async () => {
    // The paused followers must stall the high watermark, not leave the ISR or be fenced.
    cluster = await startCluster({ brokers: 3, config: { ...FAST_FAILOVER_CONFIG, 'replica.lag.time.max.ms': '20000', 'broker.session.timeout.ms': '10000' } });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('abandoned');
    const admin = new MqClient({ bootstrap: c.bootstrap });
    try {
      await admin.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
    } finally {
      await admin.close();
    }
    const leader = await leaderFor(c, topic, 0);
    const followers = c.ids.filter((id) => id !== leader);
    const leaderOut = c.broker(leader).process.output;
    const client = new MqClient({ bootstrap: [c.broker(leader).process.bootstrap] });
    const producer = client.producer({ acks: 'all', lingerMs: 0, ackTimeoutMs: 20_000 });
    await producer.send(topic, { value: 'before' });
    for (const f of followers) c.pause(f);
    try {
      const sent = producer.send(topic, { value: 'abandoned' }).catch((err: unknown) => err);
      await waitFor(async () => (await c.status(leader)).hosted.some((h) => h.topic === topic && h.logEndOffset === 2), { timeout: 10_000, message: 'the leader appended the record' });
      const mark = leaderOut.length;
      await client.close({ timeoutMs: 0 }); // the connection closes while the produce waits for the followers
      await sent;
      for (const f of followers) c.resume(f);
      await c.waitHealthy(30_000, [topic]);
      const errors = leaderOut.slice(mark).filter((l) => l.includes('"level":50'));
      expect(errors).toEqual([]);
    } finally {
      for (const f of followers) c.resume(f);
      await client.close().catch(() => undefined);
    }
  }, 90_000);
});
