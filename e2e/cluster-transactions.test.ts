/**
 * Read-process-write exactly once in a 3-broker cluster of real processes
 * (RF=3, min.insync.replicas=2; `__transaction_state` and
 * `__consumer_offsets` replicated too): a copier process (txn-copier.mjs)
 * copies topic A to topic B in transactions with its input offsets in the
 * same transaction while, at moments spread over the copy, the copier is
 * SIGKILLed, the broker that is its transaction coordinator is SIGKILLed
 * (its `__transaction_state` partition moves: the new leader loads the state
 * and completes or aborts whatever was prepared), and the leader of a
 * partition of B is SIGKILLed (markers go to the new leader). Each killed
 * broker is restarted. A read_committed reader of B then sees every record
 * of A exactly once, in per-partition order.
 */
import { MqClient } from '@mq/client';
import { TestClient } from '../packages/broker/test/wire-client.js';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';
import { Copier, readTopic } from './src/txn-copier.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

/** The broker coordinating `transactionalId` now (FindCoordinator key type 1). */
async function coordinatorOf(c: TestCluster, transactionalId: string): Promise<number> {
  return waitFor(
    async () => {
      for (const id of c.ids) {
        const b = c.broker(id).process;
        if (b.exited) continue;
        const w = await TestClient.connect(`ws://127.0.0.1:${b.port}`).catch(() => undefined);
        if (!w) continue;
        try {
          const r = (await w.request({ findCoordinator: { key: transactionalId, keyType: 1 } })).findCoordinator!;
          if (r.errorCode === 0 && r.nodeId > 0) return r.nodeId;
        } finally {
          await w.close();
        }
      }
      return 0;
    },
    { timeout: 20_000, interval: 200, message: `the coordinator of ${transactionalId}` },
  );
}

describe('cluster: read-process-write under SIGKILL of the copier, its coordinator and a leader', () => {
  it('a read_committed reader of B sees each record of A exactly once, in order', async () => {
    const config = { ...FAST_FAILOVER_CONFIG, 'transaction.state.log.num.partitions': '2', 'offsets.topic.num.partitions': '2' };
    cluster = await startCluster({ brokers: 3, config });
    const c = cluster;
    await c.waitHealthy();
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 3000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    const source = uniqueName('ctxn-a');
    const dest = uniqueName('ctxn-b');
    const partitions = 2;
    const total = 600;
    const copiers: Copier[] = [];
    try {
      const topicConfigs = { 'min.insync.replicas': '2' };
      await client.admin().createTopic(source, { numPartitions: partitions, replicationFactor: 3, configs: topicConfigs });
      await client.admin().createTopic(dest, { numPartitions: partitions, replicationFactor: 3, configs: topicConfigs });
      await c.waitHealthy(30_000, [source, dest]);
      const producer = client.producer({ lingerMs: 0, idempotent: true });
      const expected: string[][] = Array.from({ length: partitions }, () => []);
      await Promise.all(
        Array.from({ length: total }, (_, i) => {
          const partition = i % partitions;
          const value = `r${i}`;
          expected[partition]!.push(value);
          return producer.send(source, { value, partition });
        }),
      );
      await producer.close();
      const copierConfig = { bootstrap: c.bootstrap, source, dest, partitions, transactionalId: uniqueName('ccopier'), group: uniqueName('ccopier-group'), perTxn: 10 };
      const run = async (what: string, fault: () => Promise<void>) => {
        const copier = new Copier(copierConfig);
        copiers.push(copier);
        await waitFor(() => copier.events.some((e) => e.ev === 'ready' || e.ev === 'error'), { timeout: 40_000, message: `copier ready (${what})` });
        const start = copier.committed;
        // Let it commit some transactions, then fault in the middle of the next ones.
        await waitFor(() => copier.committed >= start + 30 || copier.errors().length > 0, { timeout: 40_000, message: `progress before ${what}` });
        await fault();
        return copier;
      };
      // 1: the copier alone.
      const first = await run('killing the copier', async () => undefined);
      await first.kill();
      // 2: its transaction coordinator's broker, while it copies (then the copier too, its answers lost).
      const second = await run('killing the coordinator', async () => {
        const coordinator = await coordinatorOf(c, copierConfig.transactionalId);
        await c.kill(coordinator);
        await new Promise((r) => setTimeout(r, 1500));
        await c.restart(coordinator);
      });
      await second.kill();
      await c.waitHealthy(40_000, [source, dest]);
      // 3: the leader of B-0, which receives data and markers.
      const third = await run('killing the leader of B-0', async () => {
        const leader = await leaderFor(c, dest, 0);
        await c.kill(leader);
        await new Promise((r) => setTimeout(r, 1500));
        await c.restart(leader);
      });
      await third.kill();
      await c.waitHealthy(40_000, [source, dest]);
      const last = new Copier(copierConfig);
      copiers.push(last);
      const deadline = Date.now() + 90_000;
      let seen: string[][] = [];
      while (Date.now() < deadline) {
        seen = await readTopic(client, dest, partitions, 'read_committed', total, 2000);
        if (seen.reduce((n, l) => n + l.length, 0) >= total || last.errors().length > 0) break;
      }
      expect(last.errors()).toEqual([]);
      expect(copiers.slice(0, 3).every((x) => x.committed > 0)).toBe(true);
      expect(seen).toEqual(expected);
      await last.kill();
    } finally {
      for (const x of copiers) await x.kill().catch(() => undefined);
      await client.close().catch(() => undefined);
    }
  });
});
