import { OFF_ATTRIBUTES, OFF_CRC, computeBatchCrc, encodeBatchSync } from '@mq/protocol/batch';
import { MqClient, type ConsumerRecord } from '../src/index.js';
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

async function produce(topic: string, n: number, partition?: number, prefix = 'v'): Promise<void> {
  const p = client.producer({ lingerMs: 0, batchBytes: 1024 });
  await p.sendBatch(topic, Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${prefix}${i}`, partition, headers: { i: `${i}` } })));
  await p.close();
}

async function pollUntil(c: ReturnType<MqClient['consumer']>, n: number, timeoutMs = 5000): Promise<ConsumerRecord[]> {
  const out: ConsumerRecord[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n && Date.now() < deadline) out.push(...(await c.poll(200)));
  return out;
}

describe('consumer (manual assignment)', () => {
  it('reads from an explicit offset, in order, with keys, values, headers and timestamps', async () => {
    await produce('one', 100, 0);
    const c = client.consumer({ maxPollRecords: 30 });
    c.assign([{ topic: 'one', partition: 0, offset: 10 }]);
    const recs = await pollUntil(c, 90);
    expect(recs.map((r) => r.offset)).toEqual(Array.from({ length: 90 }, (_, i) => i + 10));
    expect(recs[0]).toMatchObject({ topic: 'one', partition: 0, offset: 10 });
    expect(recs[0]!.value!.toString()).toBe('v10');
    expect(recs[0]!.key!.toString()).toBe('k10');
    expect(recs[0]!.headers).toEqual([{ key: 'i', value: Buffer.from('10') }]);
    expect(Math.abs(recs[0]!.timestamp - Date.now())).toBeLessThan(60_000);
    expect(await c.position({ topic: 'one', partition: 0 })).toBe(100);
  });

  it('each poll returns a plain array of exactly the records it read (no holes, whatever it was sized for)', async () => {
    await produce('one', 100, 0);
    await produce('one', 3, 0, 'big-'.repeat(100)); // fewer, larger records than the array is sized for
    for (const maxRecords of [1, 7, 500]) {
      const c = client.consumer({ maxPollRecords: maxRecords });
      c.assign([{ topic: 'one', partition: 0, offset: 0 }]);
      const seen: number[] = [];
      const deadline = Date.now() + 5000;
      while (seen.length < 103 && Date.now() < deadline) {
        const recs = await c.poll(200);
        expect(recs.length).toBeLessThanOrEqual(maxRecords);
        expect(Object.keys(recs)).toHaveLength(recs.length); // every index holds a record
        for (const r of recs) seen.push(r.offset);
      }
      expect(seen).toEqual(Array.from({ length: 103 }, (_, i) => i));
      await c.close();
    }
  });

  it('autoOffsetReset earliest starts at the beginning, latest at the end', async () => {
    await produce('one', 5, 0);
    const early = client.consumer({ autoOffsetReset: 'earliest' });
    early.assign([{ topic: 'one', partition: 0 }]);
    expect((await pollUntil(early, 5)).map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    const late = client.consumer({ autoOffsetReset: 'latest' });
    late.assign([{ topic: 'one', partition: 0 }]);
    expect(await late.position({ topic: 'one', partition: 0 })).toBe(5);
    await produce('one', 2, 0, 'new');
    expect((await pollUntil(late, 2)).map((r) => r.value!.toString())).toEqual(['new0', 'new1']);
  });

  it('autoOffsetReset none throws OFFSET_OUT_OF_RANGE instead of guessing', async () => {
    await produce('one', 3, 0);
    const c = client.consumer({ autoOffsetReset: 'none' });
    c.assign([{ topic: 'one', partition: 0, offset: 50 }]);
    await expect(c.poll(2000)).rejects.toMatchObject({ code: 'OFFSET_OUT_OF_RANGE' });
    c.seek({ topic: 'one', partition: 0 }, 1);
    expect((await pollUntil(c, 2)).map((r) => r.offset)).toEqual([1, 2]);
    const fresh = client.consumer({ autoOffsetReset: 'none' });
    fresh.assign([{ topic: 'one', partition: 0 }]);
    await expect(fresh.poll(2000)).rejects.toThrow(/no position and autoOffsetReset is none/);
  });

  it('resets an out-of-range position per policy', async () => {
    await produce('one', 3, 0);
    const c = client.consumer({ autoOffsetReset: 'earliest' });
    c.assign([{ topic: 'one', partition: 0, offset: 99 }]);
    expect((await pollUntil(c, 3)).map((r) => r.offset)).toEqual([0, 1, 2]);
  });

  it('seek rewinds, and data fetched before the seek is dropped', async () => {
    await produce('one', 20, 0);
    const c = client.consumer({ maxPollRecords: 5 });
    c.assign([{ topic: 'one', partition: 0, offset: 0 }]);
    const first = await pollUntil(c, 5);
    expect(first.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4]);
    c.seek({ topic: 'one', partition: 0 }, 2);
    const again = await c.poll(2000);
    expect(again[0]!.offset).toBe(2);
  });

  it('two independent consumers read the same records', async () => {
    await produce('three', 60);
    const a = client.consumer({ autoOffsetReset: 'earliest' });
    const other = new MqClient({ bootstrap: broker.address });
    const b = other.consumer({ autoOffsetReset: 'earliest' });
    const all = [0, 1, 2].map((partition) => ({ topic: 'three', partition }));
    a.assign(all);
    b.assign(all);
    const ra = await pollUntil(a, 60);
    const rb = await pollUntil(b, 60);
    const ids = (rs: ConsumerRecord[]) => rs.map((r) => `${r.partition}:${r.offset}:${r.value}`).sort();
    expect(ra).toHaveLength(60);
    expect(ids(ra)).toEqual(ids(rb));
    await other.close();
  });

  it('pause stops a partition, resume restarts it', async () => {
    await produce('three', 30);
    const c = client.consumer({ autoOffsetReset: 'earliest' });
    c.assign([0, 1, 2].map((partition) => ({ topic: 'three', partition })));
    c.pause([{ topic: 'three', partition: 1 }]);
    const got = await pollUntil(c, 1000, 600);
    expect(got.some((r) => r.partition === 1)).toBe(false);
    expect(c.paused()).toEqual([{ topic: 'three', partition: 1 }]);
    c.resume([{ topic: 'three', partition: 1 }]);
    const more = await pollUntil(c, 1, 3000);
    expect(more.every((r) => r.partition === 1)).toBe(true);
    expect(more.length).toBeGreaterThan(0);
  });

  it('is an async iterator that reports what it holds', async () => {
    await produce('one', 10, 0);
    const c = client.consumer({ autoOffsetReset: 'earliest' });
    c.assign([{ topic: 'one', partition: 0 }]);
    const seen: number[] = [];
    for await (const r of c) {
      seen.push(r.offset);
      if (seen.length === 1) expect(c.pending.records).toBe(9);
      if (seen.length === 10) break;
    }
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('waits (long poll) for records produced after poll started', async () => {
    const c = client.consumer({ autoOffsetReset: 'latest', maxWaitMs: 2000 });
    c.assign([{ topic: 'one', partition: 0 }]);
    expect(await c.position({ topic: 'one', partition: 0 })).toBe(0);
    const pending = c.poll(3000);
    setTimeout(() => void produce('one', 1, 0, 'late'), 100);
    const recs = await pending;
    expect(recs.map((r) => r.value!.toString())).toEqual(['late0']);
  });

  it('keeps fetched bytes under maxBufferedBytes', async () => {
    await produce('one', 400, 0, 'x'.repeat(500));
    const c = client.consumer({ autoOffsetReset: 'earliest', maxBufferedBytes: 4096, partitionMaxBytes: 2048, fetchMaxBytes: 2048, maxPollRecords: 1 });
    c.assign([{ topic: 'one', partition: 0 }]);
    let max = 0;
    let n = 0;
    while (n < 400) {
      const r = await c.poll(1000);
      n += r.length;
      max = Math.max(max, c.pending.bytes);
    }
    expect(max).toBeLessThanOrEqual(4096 + 2048);
  });

  it('retries a fetch after NOT_LEADER with a metadata refresh', async () => {
    await produce('one', 3, 0);
    const c = client.consumer({ autoOffsetReset: 'earliest' });
    const before = broker.seen.metadata ?? 0;
    broker.failNext('fetch', 'NOT_LEADER', 2);
    c.assign([{ topic: 'one', partition: 0 }]);
    expect((await pollUntil(c, 3)).map((r) => r.offset)).toEqual([0, 1, 2]);
    expect(broker.seen.metadata ?? 0).toBeGreaterThan(before);
  });

  it('reports an unknown topic from poll with the fix', async () => {
    const c = client.consumer();
    c.assign([{ topic: 'missing', partition: 0 }]);
    await expect(c.poll(2000)).rejects.toThrow('topic "missing" does not exist (create it with: mq topic create missing)');
  });

  it('in a cluster, keeps asking for a topic the answering broker does not know yet, then reports a missing one', async () => {
    const cluster = await startFakeBroker({ peerIds: [2, 3] });
    const c2 = new MqClient({ bootstrap: cluster.address, retry: { initialDelayMs: 20, maxDelayMs: 100 } });
    try {
      const late = c2.consumer({ autoOffsetReset: 'earliest' });
      late.assign([{ topic: 'late', partition: 0 }]);
      // Created 300 ms later, with a record: the metadata of a new topic still propagating.
      setTimeout(() => {
        cluster.createTopic('late', 1);
        void c2.producer().send('late', { value: 'v', partition: 0 });
      }, 300);
      const got: ConsumerRecord[] = [];
      for (const t0 = Date.now(); got.length === 0 && Date.now() - t0 < 5000; ) got.push(...(await late.poll(200)));
      expect(got.map((r) => r.value!.toString())).toEqual(['v']);
      const missing = c2.consumer();
      missing.assign([{ topic: 'never', partition: 0 }]);
      const t0 = Date.now();
      await expect(missing.poll(UNKNOWN_TOPIC_GRACE_MS + 3000)).rejects.toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(UNKNOWN_TOPIC_GRACE_MS - 100);
      await late.close();
      await missing.close();
    } finally {
      await c2.close({ timeoutMs: 1000 });
      await cluster.close();
    }
  });

  it('decodes compressed batches', async () => {
    const p = client.producer({ compression: 'zstd' });
    await p.sendBatch('one', Array.from({ length: 20 }, (_, i) => ({ value: `z${i}`, partition: 0 })));
    const c = client.consumer({ autoOffsetReset: 'earliest' });
    c.assign([{ topic: 'one', partition: 0 }]);
    expect((await pollUntil(c, 20)).map((r) => r.value!.toString())).toEqual(Array.from({ length: 20 }, (_, i) => `z${i}`));
  });
});

describe('a batch no reader can decode (issue 22)', () => {
  it('is reported once as a typed error naming its offsets, and consumption goes on after it instead of stopping there', async () => {
    await produce('one', 2, 0);
    // A CRC-valid batch marked lz4 whose records are not lz4, stored before the broker verified records.
    const poison = encodeBatchSync([{ value: 'p0' }, { value: 'p1' }], { now: Date.now() });
    poison.writeInt16BE(3, OFF_ATTRIBUTES);
    poison.writeUInt32BE(computeBatchCrc(poison, 0, poison.length), OFF_CRC);
    broker.appendRaw('one', 0, poison);
    await produce('one', 2, 0, 'after');
    const c = client.consumer();
    c.assign([{ topic: 'one', partition: 0, offset: 0 }]);
    const offsets: number[] = [];
    const errors: unknown[] = [];
    const deadline = Date.now() + 5000;
    while (offsets.length < 4 && Date.now() < deadline) {
      try {
        for (const r of await c.poll(200)) offsets.push(r.offset);
      } catch (err) {
        errors.push(err);
      }
    }
    expect(offsets).toEqual([0, 1, 4, 5]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: 'CORRUPT_MESSAGE', topic: 'one', partition: 0, baseOffset: 2, lastOffset: 3, skipTo: 4 });
    await c.close();
  });
});
