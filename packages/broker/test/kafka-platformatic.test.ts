/**
 * @platformatic/kafka 2.x (a dev dependency) against the Kafka listener:
 * admin (create, metadata, delete), a producer with keys and headers, and a
 * consumer stream in a group. @platformatic/kafka 2.x is written for Node 22
 * (Promise.withResolvers); on Node 20 this test supplies that one function
 * before loading it.
 */
import { startTestBroker, topicName, waitFor, type TestBroker } from './helpers.js';

type Platformatic = typeof import('@platformatic/kafka');

function withResolvers<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

describe('@platformatic/kafka against the Kafka listener', () => {
  let t: TestBroker;
  let pk: Platformatic;
  let bootstrapBrokers: string[];
  beforeAll(async () => {
    const p = Promise as unknown as { withResolvers?: typeof withResolvers };
    p.withResolvers ??= withResolvers;
    pk = await import('@platformatic/kafka');
    t = await startTestBroker({ 'kafka.listener.port': '0', 'group.initial.rebalance.delay.ms': '0' });
    bootstrapBrokers = [`127.0.0.1:${t.broker.kafkaPort}`];
  });
  afterAll(() => t.cleanup());

  it('admin creates a topic and reads its metadata; a producer sends with keys and headers; a group consumer stream reads them; admin deletes it', async () => {
    const topic = topicName('plat');
    const admin = new pk.Admin({ clientId: 'plat-admin', bootstrapBrokers });
    const producer = new pk.Producer({ clientId: 'plat-producer', bootstrapBrokers, serializers: pk.stringSerializers });
    const consumer = new pk.Consumer({ groupId: topicName('plat-group'), clientId: 'plat-consumer', bootstrapBrokers, deserializers: pk.stringDeserializers });
    try {
      await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
      const md = await admin.metadata({ topics: [topic] });
      expect(md.topics.get(topic)!.partitions.map((p) => [p.leader, p.isr])).toEqual([
        [t.broker.brokerId, [t.broker.brokerId]],
        [t.broker.brokerId, [t.broker.brokerId]],
      ]);
      await producer.send({ messages: [{ topic, key: 'k1', value: 'v1', headers: { h: 'x' }, partition: 0 }, { topic, key: 'k2', value: 'v2', partition: 1 }] });
      const stream = await consumer.consume({ autocommit: true, topics: [topic], sessionTimeout: 10_000, heartbeatInterval: 500, mode: pk.MessagesStreamModes.EARLIEST });
      const seen: string[] = [];
      stream.on('data', (m) => seen.push(`${m.partition}|${m.key}|${m.value}|${[...m.headers].map(([k, v]) => `${k}=${v}`).join(',')}`));
      await waitFor(() => seen.length === 2 || undefined, 20_000);
      expect(seen.sort()).toEqual(['0|k1|v1|h=x', '1|k2|v2|']);
      await admin.deleteTopics({ topics: [topic] });
    } finally {
      await consumer.close(true);
      await producer.close();
      await admin.close();
    }
  });
});
