/**
 * SASL on the Kafka listeners of a 3-broker cluster of real processes: the
 * users live in the replicated metadata log, so a kafkajs client logs in with
 * SCRAM on every broker's Kafka port, creates a replicated topic as the super
 * user, and produces through one broker and consumes through another as a
 * user holding only the ACLs it needs; a wrong password is refused on each.
 */
import { Kafka, logLevel } from 'kafkajs';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { startCluster, type TestCluster } from './src/cluster-harness.js';

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

it('every broker logs Kafka clients in against the replicated users; alice, with only her ACLs, produces through one broker and consumes through another; a wrong password is refused on each', async () => {
  cluster = await startCluster({
    brokers: 3,
    config: { 'kafka.listener.port': '0', 'group.initial.rebalance.delay.ms': '0', 'authentication.enabled': 'true', 'authorization.enabled': 'true', 'super.users': 'User:admin' },
  });
  const c = cluster;
  // The first user from this machine without a login (the bootstrap exception), retried until the cluster has a controller.
  await waitFor(
    async () => {
      const first = new MqClient({ bootstrap: c.bootstrap, retry: { retries: 2, initialDelayMs: 100, maxDelayMs: 500 } });
      try {
        await first.admin().createUser('admin', 'admin-pw');
        return true;
      } finally {
        await first.close();
      }
    },
    { timeout: 30_000, message: 'the first user' },
  );
  const admin = new MqClient({ bootstrap: c.bootstrap, sasl: { mechanism: 'SCRAM-SHA-256', username: 'admin', password: 'admin-pw' } });
  const topic = uniqueName('ksasl-cluster');
  const group = uniqueName('ksasl-cluster-g');
  try {
    await admin.admin().createUser('alice', 'alice-pw', { mechanisms: ['SCRAM-SHA-512'] });
    await admin.admin().createAcls([
      { principal: 'User:alice', resourceType: 'topic', resourceName: topic, operation: 'write', permission: 'allow' },
      { principal: 'User:alice', resourceType: 'topic', resourceName: topic, operation: 'read', permission: 'allow' },
      { principal: 'User:alice', resourceType: 'group', resourceName: group, operation: 'read', permission: 'allow' },
    ]);
  } finally {
    await admin.close();
  }
  const ports = c.brokerIds.map((id) => kafkaPortOf(c, id));
  const kafka = (port: number, password: string, retries = 10) =>
    new Kafka({ clientId: 'ksasl-cluster', brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries, initialRetryTime: 200, maxRetryTime: 1000 }, sasl: { mechanism: 'scram-sha-512', username: 'alice', password } });

  // Each broker knows alice once the metadata log reached it: a login on each port.
  for (const port of ports) {
    await waitFor(
      async () => {
        const a = new Kafka({ brokers: [`127.0.0.1:${port}`], logLevel: logLevel.NOTHING, retry: { retries: 0 }, sasl: { mechanism: 'scram-sha-256', username: 'admin', password: 'admin-pw' } }).admin();
        try {
          await a.connect();
          if (port === ports[0]) await a.createTopics({ topics: [{ topic, numPartitions: 2, replicationFactor: 3 }] });
          return (await a.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length === 2;
        } finally {
          await a.disconnect();
        }
      },
      { timeout: 30_000, message: `admin on Kafka port ${port}` },
    );
  }

  const producer = kafka(ports[1]!, 'alice-pw').producer();
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ key: 'a', value: '1' }, { key: 'b', value: '2' }, { key: 'c', value: '3' }] });
  await producer.disconnect();
  const consumer = kafka(ports[2]!, 'alice-pw').consumer({ groupId: group, maxWaitTimeInMs: 200 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(`${message.key}=${message.value}`) });
    await waitFor(() => seen.length === 3, { timeout: 40_000, message: `3 records (got ${seen.length})` });
    expect(seen.sort()).toEqual(['a=1', 'b=2', 'c=3']);
  } finally {
    await consumer.disconnect();
  }

  for (const port of ports) {
    const err = await kafka(port, 'guess', 0)
      .admin()
      .connect()
      .then(
        () => undefined,
        (e: Error) => e,
      );
    expect(err?.name).toBe('KafkaJSSASLAuthenticationError');
  }
}, 120_000);
