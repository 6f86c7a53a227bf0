/**
 * Issue 21, a partition leader SIGSTOPped past its session while an
 * idempotent producer writes steadily (real processes, no timing
 * assertions). The client's first connection is to that leader (its
 * bootstrap), so its metadata requests go there until it is avoided:
 *
 * - the partition's writes go on on the new leader while the old one is
 *   still paused, though a metadata request of the same client is left
 *   unanswered by the paused broker (a leader check that joined that
 *   refresh held them until the pause ended: the failover bench's 4 s stops);
 * - when the old leader runs again it answers those requests from its old
 *   view: that must not send batches back to it (it refused them with
 *   OUT_OF_ORDER_SEQUENCE_NUMBER, failing the sends: 121 in one bench run);
 * - no send fails, and every acknowledged record is in the log exactly once,
 *   at its acknowledged offset.
 */
import { decodeBatchSync } from '@mq/protocol/batch';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, expectReplicasAgree, leaderFor, replicaBatches, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});
afterAll(async () => {
  await cleanup();
});

interface Acked {
  partition: number;
  offset: number;
  value: string;
}

describe('cluster: a paused partition leader under a steady idempotent producer (issue 21)', () => {
  it('writes go on on the new leader during the pause, none goes back to the old one after it, no send fails, every acknowledged record is in the log once', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('paused-leader-steady');
    const admin = new MqClient({ bootstrap: c.bootstrap });
    try {
      await admin.admin().createTopic(topic, { numPartitions: 2, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
    } finally {
      await admin.close();
    }
    const leader = await leaderFor(c, topic, 0);
    // Timeouts far beyond the test's waits: only the leader check and the metadata can move the writes.
    const client = new MqClient({ bootstrap: c.broker(leader).process.bootstrap, requestTimeoutMs: 120_000 });
    const producer = client.producer({ acks: 'all', idempotent: true, ackTimeoutMs: 120_000, lingerMs: 1 });
    const acked: Acked[] = [];
    const failed: string[] = [];
    let stopped = false;
    const pump = (async () => {
      const inFlight: Array<Promise<void>> = [];
      for (let seq = 0; !stopped; seq++) {
        const partition = seq % 2;
        const value = `v${seq}`;
        inFlight.push(
          producer.send(topic, { value, partition }).then(
            (m) => void acked.push({ partition, offset: m.offset, value }),
            (err: Error & { code?: string }) => void failed.push(`${value}: ${err.code ?? ''} ${err.message}`),
          ),
        );
        if (inFlight.length >= 16) await inFlight.shift();
        if (seq % 16 === 0) await new Promise((r) => setImmediate(r));
      }
      await Promise.all(inFlight);
    })();
    const ackedOn = (partition: number) => acked.filter((a) => a.partition === partition).length;
    try {
      await waitFor(() => ackedOn(0) >= 200, { timeout: 60_000, interval: 20, message: 'acks before the pause' });
      c.pause(leader);
      // A metadata refresh of this client, in flight to the paused broker until it runs again.
      const held = client.admin().describeCluster().catch(() => undefined);
      let resumed = false;
      try {
        const before = ackedOn(0);
        // No deadline but the test's: with the request timeout at 120 s, only a move to the new leader gets these.
        await waitFor(() => ackedOn(0) >= before + 200 || resumed, { timeout: 100_000, interval: 20, message: `acks on partition 0 while its leader ${leader} is paused` });
        expect(resumed).toBe(false);
        expect(await leaderFor(c, topic, 0, [leader])).not.toBe(leader);
      } finally {
        resumed = true;
        c.resume(leader);
      }
      // The old leader answers what it held, from its old view; the producer goes on.
      await held;
      await c.waitHealthy(60_000, [topic]);
      const after = ackedOn(0);
      await waitFor(() => ackedOn(0) >= after + 500, { timeout: 60_000, interval: 20, message: 'acks after the old leader resumed' });
    } finally {
      stopped = true;
      await pump;
      await producer.close();
      await client.close();
    }
    expect(failed).toEqual([]);
    await c.waitHealthy(60_000, [topic]);
    const newLeader = await leaderFor(c, topic, 0);
    await expectReplicasAgree(c, topic, [0, 1]); // (stops every broker)
    for (const partition of [0, 1]) {
      const log = new Map<number, string>();
      const copies = new Map<string, number>();
      for (const b64 of (await replicaBatches(c.broker(newLeader).dataDir, topic, partition)).values()) {
        for (const r of decodeBatchSync(Buffer.from(b64, 'base64')).records) {
          const v = r.value!.toString();
          log.set(r.offset, v);
          copies.set(v, (copies.get(v) ?? 0) + 1);
        }
      }
      const mine = acked.filter((a) => a.partition === partition);
      expect(mine.filter((a) => log.get(a.offset) !== a.value).map((a) => `${a.value}@${a.offset} holds ${log.get(a.offset) ?? 'nothing'}`)).toEqual([]);
      expect([...copies].filter(([, n]) => n > 1)).toEqual([]);
    }
    process.stdout.write(`cluster-paused-leader: ${acked.length} acknowledged, leader ${leader} paused, ${newLeader} leads at the end\n`);
  }, 240_000);
});
