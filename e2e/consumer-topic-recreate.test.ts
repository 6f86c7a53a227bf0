/**
 * Issue 22: a consumer positioned in a topic that is deleted and re-created
 * does not carry on in the new topic at the old offset. Its fetches carry the
 * topic id its position belongs to; the broker answers INCONSISTENT_TOPIC_ID
 * (or UNKNOWN_TOPIC_ID) for another incarnation; the consumer refreshes
 * metadata and resets per autoOffsetReset (Kafka fetch v13+). Without the
 * topic id, the consumer below fetched from offset 10 of the new topic and
 * missed its first 10 records. The offsets a group committed for a deleted
 * topic are removed with it (a new member of the group used to start the
 * re-created topic at the old committed offset).
 */
import { MqClient, type ConsumerRecord } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
let client: MqClient;

beforeAll(async () => {
  broker = await startBroker();
  client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'e2e-recreate' });
});
afterAll(async () => {
  await client?.close({ timeoutMs: 1000 }).catch(() => undefined);
  await cleanup();
});

async function produce(topic: string, prefix: string, count: number): Promise<void> {
  const producer = client.producer({ acks: 'all', lingerMs: 0 });
  for (let i = 0; i < count; i++) await producer.send(topic, { value: `${prefix}-${i}`, partition: 0 });
  await producer.close();
}

async function pollUntil(consumer: ReturnType<MqClient['consumer']>, count: number, timeoutMs = 15_000): Promise<ConsumerRecord[]> {
  const out: ConsumerRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < count && Date.now() < deadline) out.push(...(await consumer.poll(250)));
  return out;
}

/** Deletes `topic`, waits until it is gone, creates it again with one partition. */
async function recreate(topic: string): Promise<void> {
  const admin = client.admin();
  await admin.deleteTopics([topic]);
  await waitFor(async () => !(await admin.listTopics()).includes(topic), { timeout: 15_000 });
  await admin.createTopic(topic, { numPartitions: 1 });
}

describe('a consumer group across a topic deleted and re-created', () => {
  it('the offsets it committed for the deleted topic are removed: a new member starts the new topic per autoOffsetReset', async () => {
    const topic = uniqueName('recreate-group');
    const groupId = uniqueName('recreate-group');
    await client.admin().createTopic(topic, { numPartitions: 1 });
    await produce(topic, 'old', 10);
    const first = client.consumer({ groupId, autoOffsetReset: 'earliest' });
    first.subscribe([topic]);
    await first.waitForAssignment();
    expect(await pollUntil(first, 10)).toHaveLength(10);
    await first.commit();
    await first.close();
    await recreate(topic);
    await produce(topic, 'new', 15);
    const second = client.consumer({ groupId, autoOffsetReset: 'earliest' });
    second.subscribe([topic]);
    await second.waitForAssignment();
    const got = await pollUntil(second, 15);
    expect(got.map((r) => `${r.offset}:${r.value?.toString()}`)).toEqual(Array.from({ length: 15 }, (_, i) => `${i}:new-${i}`));
    await second.close();
  }, 90_000);
});

describe('a consumer across a topic deleted and re-created', () => {
  it('autoOffsetReset earliest: reads the new topic from its start, not from the old position', async () => {
    const topic = uniqueName('recreate-earliest');
    await client.admin().createTopic(topic, { numPartitions: 1 });
    await produce(topic, 'old', 10);
    const consumer = client.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([{ topic, partition: 0 }]);
    expect((await pollUntil(consumer, 10)).map((r) => r.value?.toString())).toEqual(Array.from({ length: 10 }, (_, i) => `old-${i}`));
    consumer.pause([{ topic, partition: 0 }]);
    await recreate(topic);
    await produce(topic, 'new', 15);
    consumer.resume([{ topic, partition: 0 }]);
    const got = await pollUntil(consumer, 15);
    expect(got.map((r) => `${r.offset}:${r.value?.toString()}`)).toEqual(Array.from({ length: 15 }, (_, i) => `${i}:new-${i}`));
    await consumer.close();
  }, 60_000);

  it('autoOffsetReset none: poll() says the topic was re-created instead of reading on at the old offset', async () => {
    const topic = uniqueName('recreate-none');
    await client.admin().createTopic(topic, { numPartitions: 1 });
    await produce(topic, 'old', 5);
    const consumer = client.consumer({ autoOffsetReset: 'none' });
    consumer.assign([{ topic, partition: 0, offset: 0 }]);
    expect(await pollUntil(consumer, 5)).toHaveLength(5);
    consumer.pause([{ topic, partition: 0 }]);
    await recreate(topic);
    await produce(topic, 'new', 8);
    consumer.resume([{ topic, partition: 0 }]);
    const deadline = Date.now() + 15_000;
    let error: (Error & { code?: string }) | undefined;
    const read: ConsumerRecord[] = [];
    while (!error && Date.now() < deadline) {
      try {
        read.push(...(await consumer.poll(250)));
      } catch (err) {
        error = err as Error & { code?: string };
      }
    }
    expect(read.map((r) => r.value?.toString())).toEqual([]);
    expect(error?.code).toBe('OFFSET_OUT_OF_RANGE');
    expect(error?.message).toMatch(/re-created/);
    // A seek into the new topic reads it.
    consumer.seek({ topic, partition: 0 }, 0);
    expect((await pollUntil(consumer, 8)).map((r) => r.value?.toString())).toEqual(Array.from({ length: 8 }, (_, i) => `new-${i}`));
    await consumer.close();
  }, 60_000);
});
