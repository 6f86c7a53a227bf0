/**
 * kafkajs (a dev dependency) against the Kafka listener, unchanged: admin
 * (create, metadata, configs, partitions, delete), producers with acks -1
 * (idempotent), 1 and 0 and gzip, a consumer group with eachMessage and
 * commits, eachBatch with manual resolveOffset, heartbeat and commit,
 * records read identically by @mq/client, and a kafkajs consumer and an
 * @mq/client consumer sharing one group.
 */
import { AssignerProtocol, CompressionCodecs, CompressionTypes, Kafka, PartitionAssigners, logLevel, type Consumer, type PartitionAssigner } from 'kafkajs';
import { createRequire } from 'node:module';
import { MqClient } from '@mq/client';
import { compress, decompress, type CompressionCodec } from '@mq/protocol/batch';
import { startTestBroker, topicName, waitFor, type TestBroker } from './helpers.js';

const require = createRequire(import.meta.url);
// kafkajs-snappy is the kafkajs codec package; kafkajs-lz4 and @kafkajs/zstd need native builds this
// machine's npm does not run, so LZ4 and ZSTD are kafkajs codecs over @mq/protocol's (Kafka's LZ4 frame and zstd).
CompressionCodecs[CompressionTypes.Snappy] = require('kafkajs-snappy') as () => never;
const mqCodec = (codec: CompressionCodec) => () => ({
  compress: async (encoder: { buffer: Buffer }) => compress(codec, encoder.buffer),
  decompress: async (buffer: Buffer) => decompress(codec, buffer),
});
CompressionCodecs[CompressionTypes.LZ4] = mqCodec('lz4') as () => never;
CompressionCodecs[CompressionTypes.ZSTD] = mqCodec('zstd') as () => never;

/** kafkajs's round robin under the protocol name @mq/client's round robin uses, so both can lead the same group. */
const roundRobinNamedLikeMq: PartitionAssigner = (config) => {
  const rr = PartitionAssigners.roundRobin(config);
  return {
    ...rr,
    name: 'roundrobin',
    protocol: ({ topics }: { topics: string[] }) => ({ name: 'roundrobin', metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics, userData: Buffer.alloc(0) }) }),
  };
};

describe('kafkajs against the Kafka listener', () => {
  let t: TestBroker;
  let kafka: Kafka;
  const consumers: Consumer[] = [];
  beforeAll(async () => {
    t = await startTestBroker({ 'kafka.listener.port': '0', 'group.initial.rebalance.delay.ms': '0' });
    kafka = new Kafka({ clientId: 'kafkajs-test', brokers: [`127.0.0.1:${t.broker.kafkaPort}`], logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
  });
  afterAll(async () => {
    for (const c of consumers) await c.disconnect().catch(() => undefined);
    await t.cleanup();
  });

  it('admin: createTopics, fetchTopicMetadata, describeConfigs, alterConfigs, createPartitions, describeCluster, deleteTopics', async () => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const topic = topicName('kjs-admin');
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '3600000' }] }] })).toBe(true);
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] })).toBe(false);
      const md = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(md.topics[0]!.partitions.map((p) => [p.partitionId, p.leader, p.isr])).toEqual([
        [0, t.broker.brokerId, [t.broker.brokerId]],
        [1, t.broker.brokerId, [t.broker.brokerId]],
      ]);
      const cfg = await admin.describeConfigs({ resources: [{ type: 2, name: topic, configNames: ['retention.ms'] }], includeSynonyms: false });
      expect(cfg.resources[0]!.configEntries.map((e) => [e.configName, e.configValue])).toEqual([['retention.ms', '3600000']]);
      // AlterConfigs replaces the topic's configs: retention.ms goes back to its default, cleanup.policy is set.
      await admin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] });
      const after = await admin.describeConfigs({ resources: [{ type: 2, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }], includeSynonyms: false });
      expect(after.resources[0]!.configEntries.map((e) => [e.configName, e.configValue, e.isDefault]).sort()).toEqual([
        ['cleanup.policy', 'compact', false],
        ['retention.ms', String(7 * 24 * 3600 * 1000), true],
      ]);
      await admin.createPartitions({ topicPartitions: [{ topic, count: 3 }] });
      expect((await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions).toHaveLength(3);
      expect((await admin.describeCluster()).brokers).toEqual([{ nodeId: t.broker.brokerId, host: '127.0.0.1', port: t.broker.kafkaPort }]);
      await admin.deleteTopics({ topics: [topic] });
      await waitFor(async () => !(await admin.listTopics()).includes(topic) || undefined);
    } finally {
      await admin.disconnect();
    }
  });

  it('produces with acks -1 (idempotent), 1 and 0, gzip, and a consumer group reads everything with eachMessage and commits', async () => {
    const topic = topicName('kjs-pc');
    const group = topicName('kjs-group');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const idempotent = kafka.producer({ idempotent: true });
    const plain = kafka.producer();
    await Promise.all([idempotent.connect(), plain.connect()]);
    const sent = [
      ...(await idempotent.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [{ key: 'a', value: 'all-1', headers: { h: 'x' } }, { key: 'b', value: 'all-2' }] })),
      ...(await plain.send({ topic, acks: 1, messages: [{ key: 'c', value: 'one-1', timestamp: '1700000000000' }] })),
    ];
    expect(sent.every((r) => r.errorCode === 0)).toBe(true);
    await plain.send({ topic, acks: 0, messages: [{ key: 'd', value: 'zero-1' }] });
    await Promise.all([idempotent.disconnect(), plain.disconnect()]);

    const consumer = kafka.consumer({ groupId: group, heartbeatInterval: 500 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: Array<{ key: string; value: string; header?: string; ts: string }> = [];
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push({ key: message.key!.toString(), value: message.value!.toString(), header: message.headers?.h?.toString(), ts: message.timestamp });
      },
    });
    await waitFor(() => seen.length === 4 || undefined, 20_000);
    expect(seen.map((s) => s.value).sort()).toEqual(['all-1', 'all-2', 'one-1', 'zero-1']);
    expect(seen.find((s) => s.key === 'a')!.header).toBe('x');
    expect(seen.find((s) => s.key === 'c')!.ts).toBe('1700000000000');
    await consumer.disconnect();
    // The commits are the group's: kafkajs's admin sees them, and so does @mq/client.
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    const total = offsets[0]!.partitions.reduce((n, p) => n + Number(p.offset), 0);
    expect(total).toBe(4);
    await admin.disconnect();
    const mq = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}` });
    try {
      const reader = mq.consumer({ autoOffsetReset: 'earliest' });
      reader.assign([0, 1].map((partition) => ({ topic, partition })));
      const records = [];
      for await (const r of reader) {
        records.push(r);
        if (records.length === 4) break;
      }
      const a = records.find((r) => r.key?.toString() === 'a')!;
      expect(a.value!.toString()).toBe('all-1');
      expect(a.headers.map((h) => [h.key, Buffer.from(h.value!).toString()])).toEqual([['h', 'x']]);
      expect(records.find((r) => r.key?.toString() === 'c')!.timestamp).toBe(1700000000000);
    } finally {
      await mq.close();
    }
  });

  it('transactions: commit, abort and sendOffsets from kafkajs; a read_committed kafkajs consumer and @mq/client agree', async () => {
    const topic = topicName('kjs-txn');
    const group = topicName('kjs-txn-group');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const producer = kafka.producer({ transactionalId: topicName('kjs-tx'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const committed = await producer.transaction();
    await committed.send({ topic, messages: [{ key: 'a', value: 'c-1', partition: 0 }, { key: 'b', value: 'c-2', partition: 1 }] });
    await committed.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 0, offset: '1' }] }] });
    await committed.commit();
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: [{ value: 'x-1', partition: 0 }, { value: 'x-2', partition: 1 }] });
    await aborted.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 0, offset: '3' }] }] });
    await aborted.abort();
    const last = await producer.transaction();
    await last.send({ topic, messages: [{ value: 'c-3', partition: 0 }] });
    await last.commit();
    await producer.disconnect();
    // The offsets of the committed transaction are the group's; the aborted one's never were.
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    expect(offsets[0]!.partitions.find((p) => p.partition === 0)!.offset).toBe('1');
    await admin.disconnect();

    // kafkajs consumers read committed by default (readUncommitted: false).
    const consumer = kafka.consumer({ groupId: topicName('kjs-txn-reader'), heartbeatInterval: 500 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    await waitFor(() => seen.length >= 3 || undefined, 20_000);
    await new Promise((r) => setTimeout(r, 300));
    await consumer.disconnect();
    expect(seen.sort()).toEqual(['c-1', 'c-2', 'c-3']);
    const mq = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}` });
    try {
      const read = async (isolationLevel: 'read_committed' | 'read_uncommitted', n: number) => {
        const reader = mq.consumer({ autoOffsetReset: 'earliest', isolationLevel });
        reader.assign([0, 1].map((partition) => ({ topic, partition })));
        const values: string[] = [];
        for await (const r of reader) {
          values.push(r.value!.toString());
          if (values.length === n) break;
        }
        await reader.close();
        return values.sort();
      };
      expect(await read('read_committed', 3)).toEqual(['c-1', 'c-2', 'c-3']);
      expect(await read('read_uncommitted', 5)).toEqual(['c-1', 'c-2', 'c-3', 'x-1', 'x-2']);
    } finally {
      await mq.close();
    }
  });

  it('produces with snappy, lz4 and zstd; kafkajs and @mq/client read every record back', async () => {
    const topic = topicName('kjs-codecs');
    const producer = kafka.producer();
    const mq = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}` });
    try {
      await mq.admin().createTopic(topic, { numPartitions: 1 });
      await producer.connect();
      const codecs = { snappy: CompressionTypes.Snappy, lz4: CompressionTypes.LZ4, zstd: CompressionTypes.ZSTD };
      for (const [name, compression] of Object.entries(codecs)) {
        await producer.send({ topic, acks: -1, compression, messages: Array.from({ length: 20 }, (_, i) => ({ key: name, value: `${name}-${i}-${'x'.repeat(100)}` })) });
      }
      const reader = mq.consumer({ autoOffsetReset: 'earliest' });
      reader.assign([{ topic, partition: 0 }]);
      const values: string[] = [];
      for await (const r of reader) if (values.push(r.value!.toString()) === 60) break;
      expect(values.map((v) => v.split('-').slice(0, 2).join('-'))).toEqual(Object.keys(codecs).flatMap((name) => Array.from({ length: 20 }, (_, i) => `${name}-${i}`)));
      const consumer = kafka.consumer({ groupId: topicName('kjs-codecs-group') });
      consumers.push(consumer);
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
      await waitFor(() => seen.length === 60 || undefined, 20_000);
      expect(seen).toEqual(values);
      await consumer.disconnect();
    } finally {
      await producer.disconnect();
      await mq.close();
    }
  });

  it('a kafkajs consumer with eachBatch: batches per partition with their high watermark and lag, manual resolveOffset, heartbeat and commit', async () => {
    const topic = topicName('kjs-batch');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const producer = kafka.producer();
    await producer.connect();
    // several produce requests, so a partition's records span several stored batches
    for (let round = 0; round < 3; round++) {
      await producer.send({ topic, acks: 1, messages: Array.from({ length: 20 }, (_, i) => ({ key: `k${round}-${i}`, value: `r${round}-${i}`, partition: i % 2 })) });
    }
    await producer.disconnect();

    const group = topicName('kjs-batch-group');
    const consumer = kafka.consumer({ groupId: group, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen = new Map<number, string[]>([[0, []], [1, []]]);
    const highWatermarks = new Map<number, string>();
    let lagAtLast = -1;
    await consumer.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, commitOffsetsIfNecessary, isRunning, isStale }) => {
        for (const message of batch.messages) {
          if (!isRunning() || isStale()) break;
          seen.get(batch.partition)!.push(`${message.offset}:${message.value!.toString()}`);
          resolveOffset(message.offset);
          await heartbeat();
        }
        highWatermarks.set(batch.partition, batch.highWatermark);
        if (batch.messages.length > 0 && batch.lastOffset() === String(Number(batch.highWatermark) - 1)) lagAtLast = Number(batch.offsetLag());
        await commitOffsetsIfNecessary();
      },
    });
    await waitFor(() => (seen.get(0)!.length === 30 && seen.get(1)!.length === 30) || undefined, 20_000);
    // in offset order per partition, every record once
    for (const p of [0, 1]) {
      expect(seen.get(p)!.map((x) => Number(x.split(':')[0]))).toEqual(Array.from({ length: 30 }, (_, i) => i));
      expect(highWatermarks.get(p)).toBe('30');
    }
    expect(seen.get(1)!.slice(0, 2)).toEqual(['0:r0-1', '1:r0-3']);
    expect(lagAtLast).toBe(0); // offsetLag() of the batch that reached the high watermark
    await consumer.disconnect();
    const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    expect(offsets[0]!.partitions.map((p) => [p.partition, p.offset]).sort()).toEqual([[0, '30'], [1, '30']]);

    // Resolving only part of a batch commits only that far: a second group resolves offsets < 10 of partition 0.
    const partial = topicName('kjs-batch-partial');
    const c2 = kafka.consumer({ groupId: partial, heartbeatInterval: 300, maxWaitTimeInMs: 200 });
    consumers.push(c2);
    await c2.connect();
    await c2.subscribe({ topic, fromBeginning: true });
    let done = false;
    await c2.run({
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, commitOffsetsIfNecessary }) => {
        if (batch.partition !== 0) return;
        for (const m of batch.messages) if (Number(m.offset) < 10) resolveOffset(m.offset);
        await commitOffsetsIfNecessary();
        done = true;
      },
    });
    await waitFor(() => done || undefined, 20_000);
    await c2.disconnect();
    const p0 = (await admin.fetchOffsets({ groupId: partial, topics: [topic] }))[0]!.partitions.find((p) => p.partition === 0)!;
    expect(p0.offset).toBe('10');
    await admin.disconnect();
  });

  it('a kafkajs consumer seeks, pauses and resumes', async () => {
    const topic = topicName('kjs-seek');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    await admin.disconnect();
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic, acks: 1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}`, partition: i % 2 })) });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: topicName('kjs-seek-group'), heartbeatInterval: 300, maxWaitTimeInMs: 200 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ partition, message }) => void seen.push(`${partition}:${message.offset}`) });
    await waitFor(() => seen.length === 10 || undefined, 20_000);
    // Paused partition 1 gets nothing while partition 0 is read again from a seek.
    consumer.pause([{ topic, partitions: [1] }]);
    seen.length = 0;
    consumer.seek({ topic, partition: 0, offset: '3' });
    await waitFor(() => seen.length === 2 || undefined, 20_000);
    expect(seen).toEqual(['0:3', '0:4']);
    consumer.resume([{ topic, partitions: [1] }]);
    consumer.seek({ topic, partition: 1, offset: '4' });
    await waitFor(() => seen.length === 3 || undefined, 20_000);
    expect(seen[2]).toBe('1:4');
    await consumer.disconnect();
  });

  it('a key lands on the same partition from kafkajs\'s default partitioner and from @mq/client\'s', async () => {
    const topic = topicName('kjs-keys');
    const mq = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}` });
    const producer = kafka.producer();
    try {
      await mq.admin().createTopic(topic, { numPartitions: 6 });
      await producer.connect();
      const keys = Array.from({ length: 24 }, (_, i) => `customer-${i * 7}`);
      const fromKafkajs = [];
      for (const key of keys) fromKafkajs.push((await producer.send({ topic, acks: 1, messages: [{ key, value: 'kafkajs' }] }))[0]!.partition);
      const mqProducer = mq.producer({ acks: 1 });
      const fromMq = [];
      for (const key of keys) fromMq.push((await mqProducer.send(topic, { key, value: 'mq' })).partition);
      expect(fromMq).toEqual(fromKafkajs);
      expect(new Set(fromMq).size).toBeGreaterThan(1);
    } finally {
      await producer.disconnect();
      await mq.close();
    }
  });

  it('a kafkajs consumer and an @mq/client consumer in one group split the partitions, and see each other\'s commits', async () => {
    const topic = topicName('kjs-mixed');
    const group = topicName('kjs-mixed-group');
    const mq = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}` });
    try {
      await mq.admin().createTopic(topic, { numPartitions: 4 });
      const producer = mq.producer({ acks: 'all' });
      for (let p = 0; p < 4; p++) await producer.send(topic, { partition: p, value: `p${p}` });
      const mine = mq.consumer({ groupId: group, autoOffsetReset: 'earliest', partitionAssigners: ['roundrobin'], heartbeatIntervalMs: 300 });
      const mqSeen = new Set<number>();
      mine.subscribe([topic]);
      const running = mine.run({ eachMessage: async ({ partition }) => void mqSeen.add(partition) });
      await waitFor(() => mqSeen.size === 4 || undefined, 20_000);

      const theirs = kafka.consumer({ groupId: group, partitionAssigners: [roundRobinNamedLikeMq], heartbeatInterval: 300, sessionTimeout: 10_000, rebalanceTimeout: 10_000 });
      consumers.push(theirs);
      const kjsAssigned = new Set<number>();
      await theirs.connect();
      theirs.on(theirs.events.GROUP_JOIN, (e) => {
        kjsAssigned.clear();
        for (const p of e.payload.memberAssignment[topic] ?? []) kjsAssigned.add(p);
      });
      await theirs.subscribe({ topic, fromBeginning: true });
      const kjsSeen: number[] = [];
      await theirs.run({ eachMessage: async ({ partition }) => void kjsSeen.push(partition) });
      // Two members, four partitions: two each, none shared.
      await waitFor(() => (kjsAssigned.size === 2 && mine.assignment().length === 2) || undefined, 30_000);
      const mqParts = mine.assignment().map((tp) => tp.partition);
      expect([...kjsAssigned, ...mqParts].sort()).toEqual([0, 1, 2, 3]);
      // The kafkajs member starts at the offsets @mq/client committed: nothing is read twice.
      await new Promise((r) => setTimeout(r, 1000));
      expect(kjsSeen).toEqual([]);
      // New records reach the member that owns their partition, whichever client it is.
      mqSeen.clear();
      for (let p = 0; p < 4; p++) await producer.send(topic, { partition: p, value: `again-p${p}` });
      await waitFor(() => (kjsSeen.length === 2 && mqSeen.size === 2) || undefined, 20_000);
      expect([...kjsSeen].sort()).toEqual([...kjsAssigned].sort());
      expect([...mqSeen].sort()).toEqual([...mqParts].sort());
      await theirs.disconnect();
      await mine.close();
      await running.catch(() => undefined);
    } finally {
      await mq.close();
    }
  });
});
