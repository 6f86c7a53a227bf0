/**
 * The idempotent producer in a 3-broker cluster of real processes (RF=3,
 * min.insync.replicas=2, acks=all): while an idempotent producer writes
 * continuously, partition leaders are killed with SIGKILL (twice) and
 * restarted. Produce requests whose answers die with a leader are retried
 * against the new leader, which learnt the producer's sequences from
 * replication. Afterwards, per partition: no record is in the log twice,
 * every acknowledged record is at its acknowledged offset, and the log
 * holds the producer's records in send order (no gap among acknowledged
 * records, nothing reordered); the replicas agree batch for batch.
 */
import { MqClient } from '@mq/client';
import { decodeBatchSync } from '@mq/protocol/batch';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, expectReplicasAgree, leaderFor, replicaBatches, startAckedPump, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: idempotent producer, acks=all, under leader SIGKILLs', () => {
  it('leaves no duplicates and no gaps among acknowledged records', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('idem-cluster');
    const partitions = 2;
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 3000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: partitions, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all', idempotent: true, lingerMs: 2, deliveryTimeoutMs: 60_000 });
      const pump = startAckedPump(producer, topic, partitions, 64);
      const progress = async (n: number, what: string) => {
        const target = pump.acked.length + n;
        await waitFor(() => pump.acked.length >= target, { timeout: 45_000, interval: 50, message: `${n} more acks ${what} (had ${pump.acked.length})` });
      };
      await progress(500, 'before the faults');
      for (const partition of [0, 1]) {
        const leader = await leaderFor(c, topic, partition);
        await c.kill(leader);
        await progress(500, `after killing leader ${leader} of partition ${partition}`);
        await c.restart(leader);
        await c.waitHealthy(40_000, [topic]);
      }
      await progress(300, 'after the restarts');
      await pump.stop();
      await producer.close();
      await client.close();

      const acked = pump.acked;
      expect(acked.length).toBeGreaterThan(1800);
      const counts = await expectReplicasAgree(c, topic, [0, 1]);
      for (let partition = 0; partition < partitions; partition++) {
        // Every replica's log (they agree wherever two hold an offset, checked above): offset -> value. A replica that
        // was restarted last may still have been catching up when the brokers stopped, so no single one is the log:
        // the longest is, and every acknowledged record (acks=all, min.insync.replicas 2) must be on at least two.
        const logs = await Promise.all(
          c.ids.map(async (id) => {
            const log = new Map<number, string>();
            for (const b64 of (await replicaBatches(c.broker(id).dataDir, topic, partition)).values())
              for (const r of decodeBatchSync(Buffer.from(b64, 'base64')).records) log.set(r.offset, r.value!.toString());
            return log;
          }),
        );
        expect(logs.map((l) => l.size > 0)).toContain(true);
        const log = logs.reduce((a, b) => (b.size > a.size ? b : a));
        const seqs = [...log.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => Number(v.slice(1)));
        // No duplicates: each sent value at most once.
        expect(new Set(seqs).size).toBe(seqs.length);
        // In send order: the idempotent producer never reorders a partition.
        for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
        // No gap: every acknowledged record is at its acknowledged offset (and, above, in send order) on two replicas.
        const mine = acked.filter((a) => a.partition === partition);
        const misplaced = mine.filter((a) => log.get(a.offset) !== `v${a.seq}`);
        expect(misplaced.slice(0, 3)).toEqual([]);
        const underReplicated = mine.filter((a) => logs.filter((l) => l.get(a.offset) === `v${a.seq}`).length < 2);
        expect({ underReplicated: underReplicated.slice(0, 3), replicaSizes: logs.map((l) => l.size) }).toEqual({ underReplicated: [], replicaSizes: expect.any(Array) });
      }
      process.stdout.write(`cluster-idempotent: ${acked.length} acknowledged, logs hold ${counts.map((x) => x[0]).join('/')} batches\n`);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 170_000);
});
