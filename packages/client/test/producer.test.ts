import { decodeBatchSync, encodeBatchSync, readBatchHeader } from '@mq/protocol/batch';
import { MqClient } from '../src/index.js';
import { murmur2Partition } from '../src/partitioner.js';
import { UNKNOWN_TOPIC_GRACE_MS } from '../src/cluster.js';
import { startFakeBroker, type FakeBroker } from './fake-broker.js';

let broker: FakeBroker;
let client: MqClient;

beforeEach(async () => {
  broker = await startFakeBroker({ topics: { one: 1, three: 3 } });
  client = new MqClient({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 } });
});
afterEach(async () => {
  await client.close({ timeoutMs: 1000 });
  await broker.close();
});

function stored(topic: string, partition: number) {
  return broker.records(topic, partition).flatMap((b) => decodeBatchSync(b).records);
}

describe('producer', () => {
  it('resolves each record with batch base offset + index, in one batch', async () => {
    const p = client.producer({ lingerMs: 20 });
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => p.send('one', { value: `v${i}` })));
    expect(results.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(results.every((r) => r.partition === 0 && r.topic === 'one')).toBe(true);
    expect(broker.records('one', 0)).toHaveLength(1);
    const more = await p.send('one', { value: 'next' });
    expect(more.offset).toBe(10);
    expect(stored('one', 0).map((r) => r.value!.toString())).toEqual([...Array.from({ length: 10 }, (_, i) => `v${i}`), 'next']);
  });

  it.each([true, false])('reuses produce frame memory only after the socket wrote it (maskFrames %s): many requests in flight deliver every value intact', async (maskFrames) => {
    // Small batches and requests, several in flight per broker across three partitions: frames are
    // taken from and given back to the pool all the time while others are still being written.
    // Unmasked, the socket writes straight from the frame, so an early reuse would corrupt what is sent.
    await client.close();
    client = new MqClient({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 }, maskFrames });
    const p = client.producer({ batchBytes: 2048, maxRequestBytes: 4096, maxInFlight: 5, lingerMs: 0 });
    const value = (i: number) => Buffer.alloc(300 + (i % 7) * 50, i & 0xff);
    const n = 3000;
    const results = await Promise.all(Array.from({ length: n }, (_, i) => p.send('three', { key: `k${i % 13}`, value: value(i) })));
    const frames = (p as unknown as { sender: { frames: { outstanding: number; freeCount: number } } }).sender.frames;
    expect(frames.outstanding).toBe(0);
    expect(frames.freeCount).toBeGreaterThan(0);
    expect(broker.seen.produce).toBeGreaterThan(frames.freeCount); // so frames were reused
    for (let part = 0; part < 3; part++) {
      const sent = results.map((r, i) => ({ r, i })).filter(({ r }) => r.partition === part);
      const got = stored('three', part);
      expect(got).toHaveLength(sent.length);
      for (const { r, i } of sent) expect(Buffer.from(got[r.offset]!.value!).equals(value(i))).toBe(true);
    }
  });

  it('sendBatch resolves every record with one promise, in order', async () => {
    const p = client.producer({ lingerMs: 0 });
    const res = await p.sendBatch('three', Array.from({ length: 300 }, (_, i) => ({ key: `k${i % 7}`, value: `${i}` })));
    expect(res).toHaveLength(300);
    for (const [i, r] of res.entries()) expect(r.partition).toBe(murmur2Partition(`k${i % 7}`, 3));
    for (let part = 0; part < 3; part++) {
      const values = stored('three', part).map((r) => Number(r.value!.toString()));
      expect(values).toEqual([...values].sort((a, b) => a - b)); // per-partition order kept
    }
  });

  it('routes keys like Kafka, honours an explicit partition, and spreads unkeyed records stickily', async () => {
    const p = client.producer({ lingerMs: 0, batchBytes: 256, bufferMemory: 64 * 1024 });
    const keyed = await p.send('three', { key: 'user-42', value: 'x' });
    expect(keyed.partition).toBe(murmur2Partition('user-42', 3));
    const explicit = await p.send('three', { key: 'user-42', value: 'y', partition: (keyed.partition + 1) % 3 });
    expect(explicit.partition).toBe((keyed.partition + 1) % 3);
    const unkeyed = await p.sendBatch('three', Array.from({ length: 200 }, () => ({ value: 'z'.repeat(40) })));
    expect(new Set(unkeyed.map((r) => r.partition)).size).toBeGreaterThan(1);
  });

  it('fails with a helpful UNKNOWN_TOPIC_OR_PARTITION for a missing topic or partition', async () => {
    const p = client.producer();
    await expect(p.send('nope', { value: 'x' })).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic "nope" does not exist (create it with: mq topic create nope)',
    });
    await expect(p.send('three', { value: 'x', partition: 3 })).rejects.toThrow('partition 3 of topic "three" does not exist (it has 3 partitions)');
  });

  it('retries NOT_LEADER after refreshing metadata, and keeps the order', async () => {
    const p = client.producer({ lingerMs: 0 });
    await p.send('one', { value: 'warm' });
    const metadataBefore = broker.seen.metadata ?? 0;
    broker.failNext('produce', 'NOT_LEADER', 2);
    const res = await Promise.all([p.send('one', { value: 'a' }), p.send('one', { value: 'b' })]);
    expect(res.map((r) => r.offset)).toEqual([1, 2]);
    expect(broker.seen.metadata ?? 0).toBeGreaterThan(metadataBefore);
    expect(stored('one', 0).map((r) => r.value!.toString())).toEqual(['warm', 'a', 'b']);
  });

  it('does not retry a non-retriable error', async () => {
    const p = client.producer({ lingerMs: 0 });
    broker.failNext('produce', 'INVALID_RECORD', 5);
    await expect(p.send('one', { value: 'a' })).rejects.toMatchObject({ code: 'INVALID_RECORD' });
    expect(broker.seen.produce).toBe(1);
  });

  it('reconnects after the connection drops and delivers', async () => {
    const p = client.producer({ lingerMs: 0 });
    await p.send('one', { value: 'a' });
    broker.dropConnections();
    const r = await p.send('one', { value: 'b' });
    expect(r.offset).toBe(1);
  });

  it('applies backpressure: a full buffer makes send wait, never grow, then BUFFER_FULL after maxBlockMs', async () => {
    const p = client.producer({ lingerMs: 0, batchBytes: 1024, bufferMemory: 4096, maxBlockMs: 1000 });
    await p.send('one', { value: 'warm' });
    broker.holdProduce();
    const value = 'v'.repeat(900);
    const sentAt = Date.now();
    const sends = Array.from({ length: 8 }, () => p.send('one', { value }));
    // Four batches fill the 4 KiB buffer; the other four sends wait.
    expect(p.stats.bufferedBytes).toBe(4096);
    expect(p.stats.blockedSends).toBe(4);
    expect(p.writable).toBe(false);
    const settled = await Promise.allSettled(sends.slice(4));
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(1000);
    expect(p.stats.bufferedBytes).toBeLessThanOrEqual(4096);
    for (const s of settled) expect(s).toMatchObject({ status: 'rejected', reason: { code: 'BUFFER_FULL', retriable: true } });
    broker.release();
    const t = setInterval(() => broker.release(), 5);
    try {
      const ok = await Promise.all(sends.slice(0, 4));
      expect(ok.map((r) => r.offset)).toEqual([1, 2, 3, 4]);
      await p.flush();
    } finally {
      clearInterval(t);
    }
    expect(p.stats.bufferedBytes).toBe(0);
  });

  it('lets blocked sends through, in order, when memory frees up', async () => {
    const p = client.producer({ lingerMs: 0, batchBytes: 1024, bufferMemory: 2048, maxBlockMs: 5000 });
    await p.send('one', { value: 'warm' });
    broker.holdProduce();
    const sends = Array.from({ length: 6 }, (_, i) => p.send('one', { value: `${i}`.repeat(900) }));
    await new Promise((r) => setTimeout(r, 30));
    expect(p.stats.blockedSends).toBeGreaterThan(0);
    const drained = p.drain();
    broker.release();
    const t = setInterval(() => broker.release(), 5);
    try {
      const res = await Promise.all(sends);
      await drained;
      expect(res.map((r) => r.offset)).toEqual([1, 2, 3, 4, 5, 6]);
    } finally {
      clearInterval(t);
    }
  });

  it('fails at once with BUFFER_FULL when too many sends are already blocked', async () => {
    const p = client.producer({ lingerMs: 0, batchBytes: 1024, bufferMemory: 1024, maxBlockedSends: 2, maxBlockMs: 60_000 });
    await p.send('one', { value: 'warm' });
    broker.holdProduce();
    const value = 'v'.repeat(900);
    const first = p.send('one', { value });
    await new Promise((r) => setTimeout(r, 20));
    const blocked = [p.send('one', { value }), p.send('one', { value })];
    await expect(p.send('one', { value })).rejects.toMatchObject({ code: 'BUFFER_FULL' });
    broker.release();
    const t = setInterval(() => broker.release(), 5);
    try {
      await Promise.all([first, ...blocked]);
    } finally {
      clearInterval(t);
    }
  });

  it('rejects a record larger than a request with RECORD_TOO_LARGE', async () => {
    const p = client.producer({ maxRequestBytes: 4096, batchBytes: 1024 });
    await expect(p.send('one', { value: 'x'.repeat(10_000) })).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE', retriable: false });
    const big = await p.send('one', { value: 'y'.repeat(3000) }); // over batchBytes: a batch of its own
    expect(big.offset).toBe(0);
    const small = client.producer({ batchBytes: 1024, bufferMemory: 2048 });
    await expect(small.send('one', { value: 'z'.repeat(3000) })).rejects.toMatchObject({ code: 'RECORD_TOO_LARGE', message: expect.stringContaining('bufferMemory') });
  });

  it('acks=0 resolves with offset -1 once written', async () => {
    const p = client.producer({ acks: 0, lingerMs: 0 });
    const r = await p.send('one', { value: 'fire' });
    expect(r.offset).toBe(-1);
    await new Promise((res) => setTimeout(res, 20));
    expect(stored('one', 0)).toHaveLength(1);
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)('sends %s-compressed batches', async (compression) => {
    const p = client.producer({ compression, lingerMs: 5 });
    const res = await p.sendBatch('one', Array.from({ length: 50 }, (_, i) => ({ value: `compressible ${i} `.repeat(20) })));
    expect(res[49]!.offset).toBe(49);
  });

  it('flush sends lingering batches at once; close fails later sends with CLOSED', async () => {
    const p = client.producer({ lingerMs: 60_000 });
    const s = p.send('one', { value: 'a' });
    await p.flush({ timeoutMs: 2000 });
    await expect(s).resolves.toMatchObject({ offset: 0 });
    await p.close();
    await expect(p.send('one', { value: 'b' })).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('rejects bad options with INVALID_ARGUMENT', () => {
    expect(() => client.producer({ acks: 2 as 1 })).toThrow('acks must be 0, 1 or all, got 2');
    expect(() => client.producer({ compression: 'brotli' as 'gzip' })).toThrow(/compression must be one of/);
    expect(() => client.producer({ bufferMemory: 1000, batchBytes: 2000 })).toThrow(/bufferMemory/);
  });

  it('idempotent: one InitProducerId, contiguous sequences per partition, at most 5 batches of a partition per request, the same sequence on a retry', async () => {
    const p = client.producer({ idempotent: true, batchBytes: 256, maxRequestBytes: 1 << 20 });
    broker.holdProduce();
    const sends = Array.from({ length: 200 }, (_, i) => p.send('three', { value: `v${i}-${'x'.repeat(40)}`, partition: i % 2 }));
    await new Promise((r) => setTimeout(r, 50));
    broker.failNext('produce', 'NOT_LEADER', 1); // the first request after the release is refused and retried
    broker.release();
    await Promise.all(sends);
    expect(broker.seen.initProducerId).toBe(1);
    expect(Math.max(...broker.batchesPerPartitionRequest)).toBeLessThanOrEqual(5);
    expect(broker.batchesPerPartitionRequest.filter((n) => n === 5).length).toBeGreaterThan(0);
    for (const partition of [0, 1]) {
      let next = 0;
      for (const b of broker.records('three', partition)) {
        const h = readBatchHeader(b);
        expect({ producerId: h.producerId, producerEpoch: h.producerEpoch, baseSequence: h.baseSequence }).toEqual({ producerId: 42, producerEpoch: 0, baseSequence: next });
        next += h.recordCount;
      }
      expect(next).toBe(100);
      expect(stored('three', partition).map((r) => r.value!.toString().split('-')[0])).toEqual(Array.from({ length: 100 }, (_, i) => `v${2 * i + partition}`));
    }
  });

  it('regression (issue 12): an idempotent retry that gained a batch resolves each batch at the offsets the broker names for it', async () => {
    const p = client.producer({ idempotent: true, lingerMs: 0 });
    broker.holdProduce();
    const a = p.send('one', { value: 'a' });
    await waitFor(() => broker.seen.produce === 1);
    // Queued behind the request in flight: one new batch, which the retry of [a] will carry too.
    const bc = [p.send('one', { value: 'b' }), p.send('one', { value: 'c' })];
    await new Promise((resolve) => setImmediate(resolve)); // the sender's pass has seen them (the partition is busy)
    // [a] is written at 0 but its answer is lost (as in a leader failover); another producer then writes 1-2.
    broker.failNext('produce', 'REQUEST_TIMED_OUT', 1, { afterAppend: true });
    broker.release();
    broker.appendBatches('one', 0, encodeBatchSync([{ value: 'other-1' }, { value: 'other-2' }]));
    const acked = await Promise.all([a, ...bc]);
    // The retry [a, b c]: a answers its original offset 0, b and c the offsets 3-4 they were written at (not 1-2).
    expect(broker.batchesPerPartitionRequest).toEqual([1, 2]);
    expect(acked.map((r) => r.offset)).toEqual([0, 3, 4]);
    const byOffset = new Map(stored('one', 0).map((r) => [r.offset, r.value!.toString()]));
    expect(acked.map((r) => byOffset.get(r.offset))).toEqual(['a', 'b', 'c']);
  });

  it('refuses an idempotent producer without acks all, as Kafka does', () => {
    expect(() => client.producer({ idempotent: true, acks: 1 })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG', message: expect.stringContaining("needs acks 'all'") }));
    expect(() => client.producer({ idempotent: 'yes' as unknown as boolean })).toThrow(/idempotent must be true or false/);
  });

  it('write() is fire and forget: no promise, records land in order, flush resolves', async () => {
    const p = client.producer({ lingerMs: 1 });
    await client.admin().describeTopic('one'); // metadata cached: writes are taken at once
    for (let i = 0; i < 500; i++) expect(p.write('one', { value: `w${i}` })).toBe(true);
    await p.flush();
    expect(stored('one', 0).map((r) => r.value!.toString())).toEqual(Array.from({ length: 500 }, (_, i) => `w${i}`));
  });

  it('write() failures reach onWriteError and make the next flush reject, once', async () => {
    const seen: unknown[] = [];
    const p = client.producer({ lingerMs: 0, onWriteError: (err) => seen.push(err) });
    p.write('nope', { value: 'a' });
    p.write('nope', { value: 'b' });
    await expect(p.flush()).rejects.toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION', failedRecords: 2 });
    expect(seen).toHaveLength(2);
    await expect(p.flush()).resolves.toBeUndefined();
  });

  it('write() returns false when the buffer is full; drain() says when to go on', async () => {
    const p = client.producer({ lingerMs: 0, batchBytes: 1024, bufferMemory: 2048, maxBlockMs: 5000 });
    await p.send('one', { value: 'warm' });
    broker.holdProduce();
    const value = 'v'.repeat(900);
    let writable = true;
    let n = 0;
    while (writable) {
      writable = p.write('one', { value });
      n++;
    }
    expect(n).toBeLessThanOrEqual(3);
    const drained = p.drain();
    broker.release();
    const t = setInterval(() => broker.release(), 5);
    try {
      await drained;
      expect(p.writable).toBe(true);
      await p.flush();
    } finally {
      clearInterval(t);
    }
    expect(stored('one', 0)).toHaveLength(n + 1);
  });

  it('in a cluster, waits a moment for a topic the answering broker does not know yet, then fails a missing one', async () => {
    const cluster = await startFakeBroker({ peerIds: [2, 3] });
    const c = new MqClient({ bootstrap: cluster.address, retry: { initialDelayMs: 50, maxDelayMs: 200 } });
    try {
      const p = c.producer({ lingerMs: 0 });
      // Created on the broker 300 ms after the first send: the metadata of a new topic still propagating.
      setTimeout(() => cluster.createTopic('late', 1), 300);
      await expect(p.send('late', { value: 'x' })).resolves.toMatchObject({ partition: 0, offset: 0 });
      const t0 = Date.now();
      await expect(p.send('never', { value: 'x' })).rejects.toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
      const waited = Date.now() - t0;
      expect(waited).toBeGreaterThanOrEqual(UNKNOWN_TOPIC_GRACE_MS - 100);
      expect(waited).toBeLessThan(UNKNOWN_TOPIC_GRACE_MS + 3000);
      await p.close();
    } finally {
      await c.close();
      await cluster.close();
    }
  });

  it('fails queued records soon (not at the delivery timeout) when their topic is deleted', async () => {
    const p = client.producer({ lingerMs: 0 });
    await p.send('one', { value: 'warm' });
    broker.topics.delete('one');
    const t0 = Date.now();
    await expect(p.send('one', { value: 'lost' })).rejects.toMatchObject({
      code: 'UNKNOWN_TOPIC_OR_PARTITION',
      message: 'topic "one" does not exist (create it with: mq topic create one)',
    });
    expect(Date.now() - t0).toBeLessThan(5000);
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}
