/**
 * Regression (issue 22, "deleting and recreating a topic copies the old
 * topic's records into the new one"): partitions are identified by topic id,
 * so nothing of a deleted incarnation is served, fetched or kept.
 *
 * The script: 3 brokers, a topic of 3 partitions with RF 3 (each broker
 * leads one), N records in every partition. Broker S (not the active
 * controller) is paused (SIGSTOP): it misses the topic's deletion and its
 * re-creation under the same name, whose partitions are led as before (the
 * placement cursor moved by a multiple of 3), all at leader epoch 0 again.
 * While S sleeps, the followers of the new partition S leads send it their
 * fetches (offset 0, epoch 0); the followers S had of the old incarnation
 * fetch, with the same names and epochs, from leaders that now lead the new
 * one. S resumes, M new records go to every partition. Then every replica's
 * log holds exactly the M new records (in one directory named for the new
 * topic id, none left of the old), a fetch from each partition's leader
 * returns only them, no broker logged "truncating below the high
 * watermark", and the replicas agree batch for batch.
 */
import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { readPartition } from './src/wire-read.js';
import { TestClient } from '../packages/broker/test/wire-client.js';
import { FAST_FAILOVER_CONFIG, expectReplicasAgree, leaderFor, replicaBatches, startCluster, type TestCluster } from './src/cluster-harness.js';
import { decodeBatchSync } from '@mq/protocol/batch';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function dirsOfSync(dir: string, topic: string): string[] {
  return readdirSync(dir).filter((d) => d.startsWith(`${topic}-`) || d === '.deleted');
}
const PARTITIONS = 3;
const OLD = 10;
const NEW = 4;

async function produce(client: MqClient, topic: string, prefix: string, count: number, partitions = PARTITIONS): Promise<void> {
  const producer = client.producer({ acks: 'all', lingerMs: 0, ackTimeoutMs: 20_000, deliveryTimeoutMs: 60_000 });
  try {
    for (let p = 0; p < partitions; p++) {
      for (let i = 0; i < count; i++) await producer.send(topic, { value: `${prefix}-${p}-${i}`, partition: p });
    }
  } finally {
    await producer.close();
  }
}

describe('cluster: delete and recreate a topic (issue 22: topic-id identity)', () => {
  it('deleting and recreating a topic copies the old topic\'s records into the new one: a replica that slept through both keeps, serves and fetches nothing of the old incarnation', async () => {
    // S must stay registered and in the ISR while it sleeps (the new topic needs 3 live brokers).
    const config = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '20000', 'replica.lag.time.max.ms': '20000' };
    cluster = await startCluster({ brokers: 3, config });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('recreate');
    const admin = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 20_000 });
    let sleeper = 0;
    try {
      await admin.admin().createTopic(topic, { numPartitions: PARTITIONS, replicationFactor: 3 });
      await c.waitHealthy(30_000, [topic]);
      const oldId = (await admin.admin().describeTopic(topic)).topicId;
      await produce(admin, topic, 'old', OLD);
      // Every replica holds the old records before S sleeps.
      await waitFor(async () => {
        for (const id of c.ids) {
          const s = await c.status(id);
          if (s.hosted.filter((h) => h.topic === topic && h.logEndOffset === OLD && h.highWatermark === OLD).length !== PARTITIONS) return false;
        }
        return true;
      }, { timeout: 20_000, message: 'every replica at the old log end' });

      const controllerId = await c.activeController();
      sleeper = c.brokerIds.find((id) => id !== controllerId)!;
      const awake = c.brokerIds.filter((id) => id !== sleeper);
      c.pause(sleeper);
      const others = new MqClient({ bootstrap: awake.map((id) => c.broker(id).process.bootstrap), requestTimeoutMs: 20_000 });
      let newId: string;
      try {
        await others.admin().deleteTopics([topic]);
        // Every awake broker has dropped the old incarnation before it is created again.
        await waitFor(async () => {
          for (const id of awake) if ((await c.status(id)).hosted.some((h) => h.topic === topic)) return false;
          return true;
        }, { timeout: 20_000, message: 'the old incarnation gone from the awake brokers' });
        await others.admin().createTopic(topic, { numPartitions: PARTITIONS, replicationFactor: 3 });
        newId = (await others.admin().describeTopic(topic)).topicId;
        expect(newId).not.toBe(oldId);
        // The awake followers of the partition S leads again send it their fetches (queued while it sleeps).
        await sleep(1500);
      } finally {
        await others.close();
        c.resume(sleeper);
      }

      await c.waitHealthy(60_000, [topic]);
      for (let p = 0; p < PARTITIONS; p++) await leaderFor(c, topic, p);
      await produce(admin, topic, 'new', NEW);
      await waitFor(async () => {
        for (const id of c.ids) {
          const s = await c.status(id);
          if (s.hosted.filter((h) => h.topic === topic && h.logEndOffset === NEW && h.highWatermark === NEW).length !== PARTITIONS) return false;
        }
        return true;
      }, { timeout: 30_000, message: `every replica at the new log end ${NEW}` });

      // A fetch from each partition's leader returns the new records only; the other brokers serve none.
      for (let p = 0; p < PARTITIONS; p++) {
        const leader = await leaderFor(c, topic, p);
        const got = await readPartition(`ws://${c.broker(leader).process.bootstrap}`, topic, p);
        expect([...got.values()]).toEqual(Array.from({ length: NEW }, (_, i) => `new-${p}-${i}`));
        for (const id of c.ids.filter((x) => x !== leader)) {
          await expect(readPartition(`ws://${c.broker(id).process.bootstrap}`, topic, p)).rejects.toThrow(/is not the leader/);
        }
      }

      // A consumer's fetch of every partition from one broker: one answer for the topic, holding every partition (led there or not).
      const wire = await TestClient.connect(`ws://${c.broker(c.ids[0]!).process.bootstrap}`);
      try {
        const r = await wire.request({ fetch: { maxBytes: 1 << 20, topics: [{ name: topic, partitions: [0, 1, 2].map((partition) => ({ partition, fetchOffset: 0, partitionMaxBytes: 1 << 20 })) }] } });
        expect(r.fetch!.topics.map((t) => t.name)).toEqual([topic]);
        expect(r.fetch!.topics[0]!.partitions.map((p) => p.partition).sort()).toEqual([0, 1, 2]);
      } finally {
        await wire.close();
      }

      // No replica truncated records it had seen committed (the old incarnation's, fetched into the new one).
      const truncations = c.ids.flatMap((id) => c.broker(id).process.output.filter((l) => l.includes('truncating below the high watermark')).map((l) => `broker ${id}: ${l}`));
      expect(truncations).toEqual([]);

      // On disk: one directory per partition on every broker, the new incarnation's, holding exactly the new records.
      await expectReplicasAgree(c, topic, [0, 1, 2]);
      for (const id of c.ids) {
        const dirs = (await readdir(path.join(c.broker(id).dataDir, 'cluster-logs'))).filter((d) => d.startsWith(`${topic}-`));
        expect(dirs.filter((d) => !d.endsWith('.hw')).sort()).toEqual([0, 1, 2].map((p) => `${topic}-${p}.${newId}`));
        for (let p = 0; p < PARTITIONS; p++) {
          const batches = await replicaBatches(c.broker(id).dataDir, topic, p);
          const values = [...batches.values()].flatMap((b) => decodeBatchSync(Buffer.from(b, 'base64'), 0).records.map((r) => r.value!.toString()));
          expect({ broker: id, partition: p, values }).toEqual({ broker: id, partition: p, values: Array.from({ length: NEW }, (_, i) => `new-${p}-${i}`) });
        }
      }
    } finally {
      if (sleeper) c.resume(sleeper);
      await admin.close().catch(() => undefined);
    }
  }, 180_000);

  it('a broker that was down while a topic was deleted removes that incarnation\'s logs when it starts', async () => {
    await cluster?.close();
    cluster = await startCluster({ brokers: 3, config: { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '4000' } });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('deleted-while-down');
    const admin = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 20_000 });
    try {
      await admin.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3 });
      await c.waitHealthy(30_000, [topic]);
      const oldId = (await admin.admin().describeTopic(topic)).topicId;
      await produce(admin, topic, 'old', OLD, 1);
      const controllerId = await c.activeController();
      const down = c.brokerIds.find((id) => id !== controllerId)!;
      const logs = path.join(c.broker(down).dataDir, 'cluster-logs');
      const dirsOf = async () => (await readdir(logs)).filter((d) => d.startsWith(`${topic}-`)).sort();
      await waitFor(async () => (await c.status(down)).hosted.some((h) => h.topic === topic && h.logEndOffset === OLD), { timeout: 20_000, message: `broker ${down} holds the records` });
      await c.kill(down);
      expect(await dirsOf()).toContain(`${topic}-0.${oldId}`);
      await admin.admin().deleteTopics([topic]);
      await admin.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 2 });
      const newId = (await admin.admin().describeTopic(topic)).topicId;
      await c.restart(down);
      // Removed as soon as the broker has caught up with the metadata (it hosts no replica of the new incarnation, or one in its own directory).
      await waitFor(async () => !(await dirsOf()).some((d) => d.includes(oldId)), { timeout: 30_000, message: `broker ${down} removed the deleted incarnation's log` }).catch((err: Error) => {
        // What the broker did meanwhile (registration, metadata, partitions), for whoever reads the failure.
        const lines = c.broker(down).process.output.filter((l) => /registered|catch|replicas|partition|deleted|sweep|removing/.test(l)).slice(-40);
        throw new Error(`${err.message}; cluster-logs: ${JSON.stringify(dirsOfSync(logs, topic))}\n${lines.join('\n')}`);
      });
      expect((await dirsOf()).every((d) => d.includes(newId))).toBe(true);
    } finally {
      await admin.close().catch(() => undefined);
    }
  }, 120_000);
});
