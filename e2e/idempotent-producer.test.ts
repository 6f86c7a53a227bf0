/**
 * The idempotent producer against real broker processes:
 * - the partition's producer state survives a SIGKILL of the broker: after
 *   recovery, a retry of an acknowledged batch is still answered as a
 *   duplicate with its original offset, and a gap is still refused;
 * - a producer id the partition forgot (producer.id.expiration.ms) makes the
 *   next send fail with UNKNOWN_PRODUCER_ID, not a silent reorder, and later
 *   sends go on under the next epoch of the same producer id (KIP-360);
 * - responses lost while the broker is frozen (SIGSTOP past the request
 *   timeout) make the producer retry batches the broker then writes anyway:
 *   a plain producer ends up with duplicates in the log, an idempotent one
 *   with every record exactly once, in order.
 */
import { MqClient } from '@mq/client';
import { encodeBatchSync, iterateBatches, readBatchHeader } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { cleanup, startBroker, uniqueName } from './src/harness.js';
import { readPartition } from './src/wire-read.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

afterAll(async () => {
  await cleanup();
});

/** The partition's values in offset order. */
async function readAll(url: string, topic: string, partition: number): Promise<string[]> {
  return [...(await readPartition(url, topic, partition)).values()];
}

/** The producer id, epoch and base sequence of each batch of the partition, in offset order. */
async function batchHeaders(url: string, topic: string, partition: number): Promise<Array<{ producerId: number; producerEpoch: number; baseSequence: number }>> {
  const c = await TestClient.connect(url);
  try {
    const r = await c.request({ fetch: { maxBytes: 1 << 20, topics: [{ name: topic, partitions: [{ partition, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] } });
    const buf = Buffer.from(r.fetch!.topics[0]!.partitions[0]!.records);
    return [...iterateBatches(buf)].map((span) => {
      const h = readBatchHeader(buf, span.position);
      return { producerId: h.producerId, producerEpoch: h.producerEpoch, baseSequence: h.baseSequence };
    });
  } finally {
    await c.close().catch(() => undefined);
  }
}

describe('idempotent producer state across a broker SIGKILL', () => {
  it('a retry of an acknowledged batch is still a duplicate after recovery, and a gap is still refused', async () => {
    // Small segments: the state comes back from the snapshot of the last roll plus the batch headers after it.
    const broker = await startBroker({ args: ['--config-set', 'log.segment.bytes=4096', '--config-set', 'log.flush.policy=always'] });
    const url = `ws://127.0.0.1:${broker.port}`;
    const topic = uniqueName('idem-kill');
    let c = await TestClient.connect(url);
    const created = await c.request({ createTopics: { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }] } });
    expect(created.createTopics!.results[0]!.errorCode).toBe(0);
    const init = await c.request({ initProducerId: { transactionalId: '' } });
    const pid = Number(init.initProducerId!.producerId);
    const batch = (seq: number) =>
      encodeBatchSync(
        Array.from({ length: 4 }, (_, i) => ({ value: `s${seq + i}-${'x'.repeat(100)}` })),
        { producerId: pid, producerEpoch: 0, baseSequence: seq },
      );
    const produce = async (records: Buffer) => {
      const r = await c.request({ produce: { acks: -1, topics: [{ name: topic, partitions: [{ partition: 0, records }] }] } });
      return r.produce!.topics[0]!.partitions[0]!;
    };
    const offsets: number[] = [];
    for (let seq = 0; seq < 200; seq += 4) {
      const p = await produce(batch(seq));
      expect(p.errorCode).toBe(0);
      offsets.push(Number(p.baseOffset));
    }
    await c.close();
    await broker.kill();
    await broker.restart();
    c = await TestClient.connect(url);
    // The last batch again: answered with its original offset, not written.
    const again = await produce(batch(196));
    expect(again.errorCode).toBe(0);
    expect(Number(again.baseOffset)).toBe(offsets.at(-1));
    const gap = await produce(batch(204));
    expect(gap.errorCode).toBe(errorNumber('OUT_OF_ORDER_SEQUENCE_NUMBER'));
    const next = await produce(batch(200));
    expect(next.errorCode).toBe(0);
    expect(Number(next.baseOffset)).toBe(200);
    // A new producer id after the restart is larger than any before it.
    const after = await c.request({ initProducerId: { transactionalId: '' } });
    expect(Number(after.initProducerId!.producerId)).toBeGreaterThan(pid);
    await c.close();
    const values = await readAll(url, topic, 0);
    expect(values).toHaveLength(204);
    expect(new Set(values).size).toBe(204);
  });
});

describe('client: responses lost while the broker is frozen past the request timeout', () => {
  it.each([
    [false, 'duplicates'],
    [true, 'exactly once'],
  ] as const)('idempotent=%s: %s', async (idempotent, _expect) => {
    const broker = await startBroker();
    const url = `ws://127.0.0.1:${broker.port}`;
    const client = new MqClient({ bootstrap: broker.bootstrap, requestTimeoutMs: 800, retry: { initialDelayMs: 100, maxDelayMs: 300, retries: 100 } });
    try {
      const topic = uniqueName(`idem-lost-${idempotent}`);
      await client.admin().createTopic(topic, { numPartitions: 1 });
      const producer = client.producer({ acks: 'all', idempotent, ackTimeoutMs: 200, deliveryTimeoutMs: 60_000 });
      await producer.send(topic, { value: 'warm-up' }); // connection, metadata and producer id are in place
      // Freeze the broker: the next requests sit unread in its socket, the client times them out and retries.
      broker.pause();
      const sends = Array.from({ length: 20 }, (_, i) => producer.send(topic, { value: `v${i}` }));
      await new Promise((r) => setTimeout(r, 2500));
      broker.resume();
      const acked = await Promise.all(sends);
      await producer.close();
      const values = await readAll(url, topic, 0);
      const counts = new Map<string, number>();
      for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
      for (let i = 0; i < 20; i++) expect(counts.get(`v${i}`) ?? 0).toBeGreaterThanOrEqual(1);
      if (idempotent) {
        expect(values).toEqual(['warm-up', ...Array.from({ length: 20 }, (_, i) => `v${i}`)]);
        // Every acknowledged offset holds its record.
        acked.forEach((m, i) => expect(values[m.offset]).toBe(`v${i}`));
      } else {
        // The frozen requests were written once resumed, and their retries again.
        expect(values.length).toBeGreaterThan(21);
      }
    } finally {
      await client.close();
      await broker.kill();
    }
  });
});

describe('client: a sequence refusal', () => {
  it('fails the sends with a typed error and later sends use the next epoch of the same producer id (KIP-360)', async () => {
    // Forget producers idle for more than 1 s (checked every second).
    const broker = await startBroker({ args: ['--config-set', 'producer.id.expiration.ms=1000'] });
    const client = new MqClient({ bootstrap: broker.bootstrap, retry: { initialDelayMs: 50, maxDelayMs: 200, retries: 20 } });
    try {
      const topic = uniqueName('idem-expired');
      await client.admin().createTopic(topic, { numPartitions: 1 });
      const producer = client.producer({ acks: 'all', idempotent: true });
      // Expiry counts from the batch timestamp: an old one expires at the next check.
      await producer.send(topic, { value: 'a', timestamp: Date.now() - 60_000 });
      await new Promise((r) => setTimeout(r, 2500));
      const refused = producer.send(topic, { value: 'b' });
      await expect(refused).rejects.toMatchObject({ code: 'UNKNOWN_PRODUCER_ID' });
      await expect(refused).rejects.toThrow(/did not write these 1 records .* later sends use epoch 1 of producer id \d+/);
      const c = await producer.send(topic, { value: 'c' });
      expect(c.offset).toBe(1);
      await producer.close();
      const url = `ws://127.0.0.1:${broker.port}`;
      expect(await readAll(url, topic, 0)).toEqual(['a', 'c']);
      // The batches as stored: 'c' went under the same producer id, epoch 1, from sequence 0.
      const headers = await batchHeaders(url, topic, 0);
      expect(headers).toEqual([
        { producerId: headers[0]!.producerId, producerEpoch: 0, baseSequence: 0 },
        { producerId: headers[0]!.producerId, producerEpoch: 1, baseSequence: 0 },
      ]);
    } finally {
      await client.close();
      await broker.kill();
    }
  });
});
