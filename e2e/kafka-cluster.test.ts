/**
 * kafkajs against the Kafka listeners of a 3-broker cluster of real
 * processes: each broker advertises its own Kafka address in Metadata, and
 * a kafkajs producer (acks -1, idempotent) and consumer keep working through
 * a SIGKILL of the partition's leader, with every acknowledged record read
 * back at its acknowledged offset.
 */
import { Kafka, logLevel } from 'kafkajs';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

/** The Kafka port a broker process logged when it started listening. */
function kafkaPortOf(c: TestCluster, id: number): number {
  for (const line of c.broker(id).process.output) {
    if (!line.includes('"broker listening"')) continue;
    const port = (JSON.parse(line) as { kafkaPort?: number }).kafkaPort;
    if (port) return port;
  }
  throw new Error(`broker ${id} logged no Kafka port`);
}

async function ensureCluster(): Promise<TestCluster> {
  cluster ??= await startCluster({ brokers: 3, config: { ...FAST_FAILOVER_CONFIG, 'kafka.listener.port': '0', 'group.initial.rebalance.delay.ms': '0' } });
  await cluster.waitHealthy();
  return cluster;
}

it("kafkajs' partition reassignment admin calls move a replica (AlterPartitionReassignments, ListPartitionReassignments)", async () => {
  const c = await ensureCluster();
  const topic = uniqueName('kafka-reassign');
  const mq = new MqClient({ bootstrap: c.bootstrap });
  try {
    await mq.admin().createTopic(topic, { numPartitions: 2, replicationFactor: 2 });
    await c.waitHealthy(30_000, [topic]);
    const before = (await mq.admin().describeTopic(topic)).partitions[0]!.replicas;
    const outsider = [1, 2, 3].find((id) => !before.includes(id))!;
    const target = [before[0]!, outsider];
    const kafka = new Kafka({ clientId: 'kafka-reassign', brokers: c.brokerIds.map((id) => `127.0.0.1:${kafkaPortOf(c, id)}`), logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    try {
      await admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 0, replicas: target }] }] });
      await waitFor(async () => (await admin.listPartitionReassignments({})).topics.length === 0, { timeout: 30_000, message: 'the reassignment completed' });
      await waitFor(async () => {
        const p = (await mq.admin().describeTopic(topic)).partitions[0]!;
        return p.replicas.join() === target.join() && p.isr.length === 2;
      }, { timeout: 30_000, message: `partition 0 on ${target.join(',')}` });
      // Bad input gets Kafka's error codes: an unknown partition.
      await expect(admin.alterPartitionReassignments({ topics: [{ topic, partitionAssignment: [{ partition: 9, replicas: target }] }] })).rejects.toThrow();
    } finally {
      await admin.disconnect();
    }
  } finally {
    await mq.close();
  }
}, 120_000);

it('a kafkajs producer and consumer keep working through a leader SIGKILL; every acknowledged record is read back at its offset', async () => {
  const c = await ensureCluster();
  const topic = uniqueName('kafka-failover');
  const mq = new MqClient({ bootstrap: c.bootstrap });
  await mq.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  await mq.close();
  await c.waitHealthy(30_000, [topic]);
  const ports = c.brokerIds.map((id) => kafkaPortOf(c, id));
  const kafka = new Kafka({ clientId: 'kafka-failover', brokers: ports.map((p) => `127.0.0.1:${p}`), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  // Each broker is named at its own Kafka address.
  const described = await admin.describeCluster();
  expect(described.brokers.map((b) => b.port).sort()).toEqual([...ports].sort());
  await admin.disconnect();

  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const acked = new Map<number, string>();
  let stop = false;
  let seq = 0;
  const pump = (async () => {
    while (!stop) {
      const value = `v${seq++}`;
      try {
        const [r] = await producer.send({ topic, acks: -1, messages: [{ value }] });
        acked.set(Number(r!.baseOffset), value);
      } catch {
        // not acknowledged: may or may not be stored
      }
    }
  })();
  await waitFor(() => acked.size >= 100, { timeout: 30_000, message: 'acks before the kill' });
  const leader = await leaderFor(c, topic, 0);
  await c.kill(leader);
  const before = acked.size;
  await waitFor(() => acked.size >= before + 100, { timeout: 45_000, message: `acks after killing leader ${leader}` });
  stop = true;
  await pump;
  await producer.disconnect();

  const consumer = kafka.consumer({ groupId: uniqueName('kafka-failover-group'), heartbeatInterval: 500 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const read = new Map<number, string>();
  await consumer.run({ eachMessage: async ({ message }) => void read.set(Number(message.offset), message.value!.toString()) });
  const last = Math.max(...acked.keys());
  await waitFor(() => read.has(last), { timeout: 45_000, message: `reading up to offset ${last}` });
  await consumer.disconnect();
  for (const [offset, value] of acked) expect(`${offset}:${read.get(offset)}`).toBe(`${offset}:${value}`);
}, 180_000);
