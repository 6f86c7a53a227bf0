/**
 * Regression (issue 12): every acknowledged {partition, offset} holds the
 * record acknowledged, across a leader failover that makes an idempotent
 * producer's retry mix a batch the new leader already has with batches
 * queued since. 3 broker processes, RF=3, min.insync.replicas=2, acks=all.
 *
 * The script: an idempotent producer P and a plain producer Q write to one
 * partition. Follower F2 is paused (SIGSTOP), so the high watermark stalls:
 * P's request in flight (batch B1) and Q's requests behind it are on the
 * leader L and on the other follower F1 but unanswered, while P keeps
 * queueing batches. L is paused past the producers' request timeout (F2
 * resumes), then killed (SIGKILL). The controller elects F1 (the first live
 * ISR member in replica order), which holds B1 followed by Q's records, so
 * P's retry carries B1 (a duplicate: its original offsets) and new batches
 * (written at the log end, after Q's records). Before the fix, P resolved
 * the new batches at B1's base + count, offsets that hold Q's records.
 */
import { MqClient } from '@mq/client';
import { decodeBatchSync } from '@mq/protocol/batch';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, expectReplicasAgree, leaderFor, replicaBatches, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends `${prefix}0, ${prefix}1, …` to partition 0, `perTick` records every
 * 5 ms whether or not earlier ones were acknowledged (so batches queue behind
 * a request that waits, as an application's would), recording each ack.
 */
function pacedSends(producer: { send(topic: string, r: { value: string; partition: number }): Promise<{ offset: number }> }, topic: string, prefix: string, perTick: number) {
  const acked: Array<{ value: string; offset: number }> = [];
  const pending = new Set<Promise<void>>();
  let seq = 0;
  const timer = setInterval(() => {
    for (let i = 0; i < perTick; i++) {
      const value = `${prefix}${seq++}`;
      const sent: Promise<void> = producer.send(topic, { value, partition: 0 }).then(
        (m) => void acked.push({ value, offset: m.offset }),
        () => undefined, // refused: only acknowledged records must hold what they were acknowledged as
      );
      pending.add(sent);
      void sent.then(() => pending.delete(sent));
    }
  }, 5);
  return {
    acked,
    async stop(): Promise<void> {
      clearInterval(timer);
      await Promise.all(pending);
    },
  };
}

describe('cluster: acknowledged offsets across a leader failover (issue 12)', () => {
  it('an idempotent retry that gained batches resolves every record at the offset that holds it', async () => {
    // Pausing F2 must stall the high watermark, not shrink the ISR or fence F2: those limits are above the pause.
    const config = { ...FAST_FAILOVER_CONFIG, 'replica.lag.time.max.ms': '20000', 'broker.session.timeout.ms': '4000' };
    cluster = await startCluster({ brokers: 3, config });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('acked-offsets');
    const timeouts = { requestTimeoutMs: 1500, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } };
    const pClient = new MqClient({ bootstrap: c.bootstrap, clientId: 'idempotent', ...timeouts });
    const qClient = new MqClient({ bootstrap: c.bootstrap, clientId: 'plain', ...timeouts });
    try {
      await pClient.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const p = pClient.producer({ acks: 'all', idempotent: true, lingerMs: 2, ackTimeoutMs: 1500, deliveryTimeoutMs: 60_000 });
      const q = qClient.producer({ acks: 'all', lingerMs: 2, batchBytes: 1024, ackTimeoutMs: 1500, deliveryTimeoutMs: 60_000 });
      const pPump = pacedSends(p, topic, 'p', 5);
      const qPump = pacedSends(q, topic, 'q', 5);
      const progress = async (n: number, what: string) => {
        const target = pPump.acked.length + n;
        await waitFor(() => pPump.acked.length >= target, { timeout: 40_000, interval: 50, message: `${n} more acks of the idempotent producer ${what} (had ${pPump.acked.length})` });
      };
      await progress(200, 'before the faults');

      const leader = await leaderFor(c, topic, 0);
      const replicas = (await pClient.admin().describeTopic(topic)).partitions[0]!.replicas;
      const [f1, f2] = replicas.filter((id) => id !== leader);
      c.pause(f2!); // the high watermark stalls: what L and F1 take now stays unanswered
      await sleep(1000);
      c.pause(leader); // past the request timeout: the producers give up on L and keep queueing
      c.resume(f2!);
      await sleep(3200); // the producers' request timeout is 1.5 s + 1.5 s
      await c.kill(leader);
      await waitFor(async () => (await leaderFor(c, topic, 0, [leader])) === f1, { timeout: 30_000, interval: 200, message: `broker ${f1} leads after ${leader} died` });
      await progress(200, `after the failover from ${leader} to ${f1}`);
      await Promise.all([pPump.stop(), qPump.stop()]);
      await Promise.all([p.close(), q.close()]);
      await c.restart(leader);
      // Asked of the partition's leader: a restarted broker's own status replays its old metadata (a full ISR) at first.
      await waitFor(async () => (await c.status(f1!)).underReplicated.every((u) => u.topic !== topic), { timeout: 40_000, interval: 200, message: `broker ${leader} back in the ISR` });

      const counts = await expectReplicasAgree(c, topic, [0]);
      const log = new Map<number, string>();
      for (const b64 of (await replicaBatches(c.broker(f1!).dataDir, topic, 0)).values()) {
        for (const r of decodeBatchSync(Buffer.from(b64, 'base64')).records) log.set(r.offset, r.value!.toString());
      }
      const acked = [...pPump.acked, ...qPump.acked];
      const wrong = acked.filter((a) => log.get(a.offset) !== a.value).map((a) => `${a.value}@${a.offset} holds ${log.get(a.offset) ?? 'nothing'}`);
      expect(wrong).toEqual([]);
      process.stdout.write(`cluster-acked-offsets: ${pPump.acked.length} + ${qPump.acked.length} acknowledged, batches per replica ${c.ids.map((id, i) => `${id}:${counts[0]![i]}`).join(' ')} (leader ${leader} failed over to ${f1})\n`);
    } finally {
      await pClient.close().catch(() => undefined);
      await qClient.close().catch(() => undefined);
    }
  }, 120_000);
});
