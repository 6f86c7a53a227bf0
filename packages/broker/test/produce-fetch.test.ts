import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import { createTopic, startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

function values(records: Uint8Array): string[] {
  const buf = Buffer.from(records);
  const out: string[] = [];
  for (const span of iterateBatches(buf)) {
    for (const r of decodeBatchSync(buf, span.position).records) out.push(`${r.offset}:${r.value?.toString()}`);
  }
  return out;
}

function produceReq(topic: string, partition: number, vals: string[], acks = 1, timeoutMs = 0): Omit<mq.IRequestFrame, 'correlationId'> {
  return { produce: { acks, timeoutMs, topics: [{ name: topic, partitions: [{ partition, records: encodeBatchSync(vals.map((value) => ({ value }))) }] }] } };
}

describe('produce and fetch', () => {
  let t: TestBroker;
  let c: TestClient;
  beforeAll(async () => {
    t = await startTestBroker();
    c = await TestClient.connect(t.url);
  });
  afterAll(async () => {
    await c.close();
    await t.cleanup();
  });

  it('answers the base offset of each append, and fetch returns the raw batches with watermarks', async () => {
    const name = topicName('pf');
    await createTopic(c, name, 2);
    const a = await c.request(produceReq(name, 0, ['a', 'b', 'c']));
    const b = await c.request(produceReq(name, 0, ['d'], -1));
    const p1 = await c.request(produceReq(name, 1, ['x']));
    expect(a.produce!.topics[0]!.partitions[0]).toMatchObject({ partition: 0, errorCode: 0, baseOffset: 0, logAppendTime: -1, logStartOffset: 0 });
    expect(b.produce!.topics[0]!.partitions[0]!.baseOffset).toBe(3);
    expect(p1.produce!.topics[0]!.partitions[0]!.baseOffset).toBe(0);

    const f = await c.request({
      fetch: {
        replicaId: -1,
        maxWaitMs: 0,
        topics: [{ name, partitions: [{ partition: 0, fetchOffset: 1, partitionMaxBytes: 1 << 20 }, { partition: 1, fetchOffset: 0 }] }],
      },
    });
    const [p0, pp1] = f.fetch!.topics[0]!.partitions;
    expect(p0).toMatchObject({ partition: 0, errorCode: 0, highWatermark: 4, logStartOffset: 0, logEndOffset: 4, currentLeaderEpoch: 0 });
    // Whole batches from the one holding offset 1.
    expect(values(p0!.records)).toEqual(['0:a', '1:b', '2:c', '3:d']);
    expect(values(pp1!.records)).toEqual(['0:x']);
    // The leader epoch was stamped into the stored batches.
    expect(Buffer.from(p0!.records).readInt32BE(12)).toBe(0);
  });

  it('keeps per-partition order for many produce requests in flight on one connection', async () => {
    const name = topicName('order');
    await createTopic(c, name, 1);
    const n = 200;
    const responses = await Promise.all(Array.from({ length: n }, (_, i) => c.request(produceReq(name, 0, [`m${i}`]))));
    expect(responses.map((r) => r.produce!.topics[0]!.partitions[0]!.baseOffset)).toEqual(Array.from({ length: n }, (_, i) => i));
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] } });
    expect(values(f.fetch!.topics[0]!.partitions[0]!.records)).toEqual(Array.from({ length: n }, (_, i) => `${i}:m${i}`));
  });

  it('refuses an acks=all timeout above 2^31-1 ms (INVALID_REQUEST) rather than timing out at once, and takes the largest one', async () => {
    const name = topicName('timeout');
    await createTopic(c, name, 1);
    const r = await c.request(produceReq(name, 0, ['refused'], -1, 2 ** 32 - 1));
    expect(r.produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: errorNumber('INVALID_REQUEST') });
    expect(r.produce!.topics[0]!.partitions[0]!.errorMessage).toMatch(/produce timeout 4294967295 ms is outside \[1, 2147483647\] ms/);
    const ok = await c.request(produceReq(name, 0, ['patient'], -1, 2 ** 31 - 1));
    expect(ok.produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, baseOffset: 0 });
  });

  it('sends nothing for acks=0 but still writes', async () => {
    const name = topicName('acks0');
    await createTopic(c, name, 1);
    const id = c.fire(produceReq(name, 0, ['quiet'], 0));
    const after = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    // listOffsets may run before the append finished; poll until it shows.
    let high = after.listOffsets!.topics[0]!.partitions[0]!.highWatermark;
    for (let i = 0; i < 50 && high === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      high = (await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1 }] }] } })).listOffsets!.topics[0]!.partitions[0]!.highWatermark;
    }
    expect(high).toBe(1);
    expect(c.unmatched.find((f) => f.correlationId === id)).toBeUndefined();
  });

  it('refuses acks other than 0, 1 and -1 with INVALID_REQUIRED_ACKS and writes nothing', async () => {
    const name = topicName('acks');
    await createTopic(c, name, 1);
    for (const acks of [2, -2, 100]) {
      const r = await c.request(produceReq(name, 0, ['no'], acks));
      expect(r.produce!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('INVALID_REQUIRED_ACKS'));
    }
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]!.highWatermark).toBe(0);
  });

  it('refuses min.insync.replicas above the replication factor when the topic is created (acks=all could never succeed)', async () => {
    const name = topicName('isr');
    const r = await c.request({ createTopics: { topics: [{ name, numPartitions: 1, replicationFactor: 1, configs: { 'min.insync.replicas': '2' } }] } });
    expect(r.createTopics!.results[0]).toMatchObject({ errorCode: errorNumber('INVALID_CONFIG'), errorMessage: expect.stringMatching(/min.insync.replicas 2 is more than the replication factor 1/) });
    await createTopic(c, name, 1, { 'min.insync.replicas': '1' });
    const all = await c.request(produceReq(name, 0, ['x'], -1));
    expect(all.produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, baseOffset: 0 });
  });

  it('stamps log-append time for topics that ask for it', async () => {
    const name = topicName('lat');
    await createTopic(c, name, 1, { 'message.timestamp.type': 'LogAppendTime' });
    const before = Date.now();
    const r = await c.request({
      produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'v', timestamp: 5 }]) }] }] },
    });
    const lat = r.produce!.topics[0]!.partitions[0]!.logAppendTime;
    expect(lat).toBeGreaterThanOrEqual(before);
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    const rec = decodeBatchSync(Buffer.from(f.fetch!.topics[0]!.partitions[0]!.records), 0).records[0]!;
    expect(rec.timestamp).toBeGreaterThanOrEqual(before);
  });

  it('answers fetches out of range with OFFSET_OUT_OF_RANGE and the watermarks', async () => {
    const name = topicName('oor');
    await createTopic(c, name, 1);
    await c.request(produceReq(name, 0, ['a', 'b']));
    for (const fetchOffset of [-1, 3, 2 ** 52]) {
      const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset }] }] } });
      expect(f.fetch!.topics[0]!.partitions[0]).toMatchObject({ errorCode: errorNumber('OFFSET_OUT_OF_RANGE'), highWatermark: 2, logStartOffset: 0 });
    }
    // The log end itself is in range: empty, no error.
    const end = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 2 }] }] } });
    expect(end.fetch!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 2 });
    expect(end.fetch!.topics[0]!.partitions[0]!.records).toHaveLength(0);
    const unknown = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 7, fetchOffset: 0 }] }, { name: 'zzz-none', partitions: [{ partition: 0 }] }] } });
    expect(unknown.fetch!.topics.map((x) => x.partitions[0]!.errorCode)).toEqual([
      errorNumber('UNKNOWN_TOPIC_OR_PARTITION'),
      errorNumber('UNKNOWN_TOPIC_OR_PARTITION'),
    ]);
  });

  it('long-polls: a fetch with min_bytes waits for an append and wakes on it', async () => {
    const name = topicName('poll');
    await createTopic(c, name, 1);
    const started = Date.now();
    const fetching = c.request({
      fetch: { maxWaitMs: 5000, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] },
    });
    await new Promise((r) => setTimeout(r, 100));
    const other = await TestClient.connect(t.url);
    await other.request(produceReq(name, 0, ['wake']));
    const f = await fetching;
    expect(Date.now() - started).toBeLessThan(4000);
    expect(values(f.fetch!.topics[0]!.partitions[0]!.records)).toEqual(['0:wake']);
    await other.close();
  });

  it('long-polls until max_wait_ms when nothing arrives', async () => {
    const name = topicName('wait');
    await createTopic(c, name, 1);
    const started = Date.now();
    const f = await c.request({ fetch: { maxWaitMs: 300, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(f.fetch!.topics[0]!.partitions[0]!.records).toHaveLength(0);
  });

  it('bounds the response by max_bytes but always returns one whole batch first', async () => {
    const name = topicName('max');
    await createTopic(c, name, 2);
    const big = 'x'.repeat(4000);
    for (let i = 0; i < 5; i++) {
      await c.request(produceReq(name, 0, [big]));
      await c.request(produceReq(name, 1, [big]));
    }
    const f = await c.request({
      fetch: {
        maxBytes: 100,
        topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 100 }, { partition: 1, fetchOffset: 0 }] }],
      },
    });
    const [p0, p1] = f.fetch!.topics[0]!.partitions;
    expect(values(p0!.records)).toHaveLength(1);
    expect(p1!.records).toHaveLength(0);
    expect(p1!.highWatermark).toBe(5);
    const roomy = await c.request({
      fetch: { maxBytes: 1 << 20, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 9000 }] }] },
    });
    expect(values(roomy.fetch!.topics[0]!.partitions[0]!.records).length).toBeGreaterThanOrEqual(2);
    expect(roomy.fetch!.topics[0]!.partitions[0]!.records.length).toBeLessThanOrEqual(9000 + 4200);
  });

  it('lists offsets: earliest, latest, log end, by timestamp, always with the watermarks', async () => {
    const name = topicName('lo');
    await createTopic(c, name, 1);
    const base = 1_700_000_000_000;
    for (let i = 0; i < 3; i++) {
      await c.request({
        produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: `v${i}`, timestamp: base + i * 1000 }]) }] }] },
      });
    }
    const ask = async (timestamp: number) =>
      (await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp }] }] } })).listOffsets!.topics[0]!.partitions[0]!;
    expect(await ask(-2)).toMatchObject({ errorCode: 0, offset: 0, logStartOffset: 0, highWatermark: 3 });
    expect(await ask(-1)).toMatchObject({ offset: 3, logStartOffset: 0, highWatermark: 3 });
    expect(await ask(-3)).toMatchObject({ offset: 3 });
    expect(await ask(base + 500)).toMatchObject({ offset: 1, timestamp: base + 1000 });
    expect(await ask(base + 10_000)).toMatchObject({ offset: -1, highWatermark: 3 });
    expect((await ask(-7)).errorCode).toBe(errorNumber('INVALID_REQUEST'));
  });

  it('answers OffsetForLeaderEpoch from the epoch cache', async () => {
    const name = topicName('ofle');
    await createTopic(c, name, 1);
    await c.request(produceReq(name, 0, ['a', 'b']));
    const r = await c.request({ offsetForLeaderEpoch: { replicaId: -1, topics: [{ name, partitions: [{ partition: 0, currentLeaderEpoch: 0, leaderEpoch: 0 }] }] } });
    expect(r.offsetForLeaderEpoch!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, leaderEpoch: 0, endOffset: 2 });
    const fenced = await c.request({ offsetForLeaderEpoch: { topics: [{ name, partitions: [{ partition: 0, currentLeaderEpoch: 5, leaderEpoch: 0 }] }] } });
    expect(fenced.offsetForLeaderEpoch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('UNKNOWN_LEADER_EPOCH'));
  });
});

describe('shutdown and retention', () => {
  it('close() answers waiting long polls and in-flight produces before it returns', async () => {
    const t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('close');
    await createTopic(c, name, 2);
    // The long poll waits on partition 1, which nothing is written to: only the shutdown answers it.
    const poll = c.request({ fetch: { maxWaitMs: 20_000, minBytes: 1, topics: [{ name, partitions: [{ partition: 1, fetchOffset: 0 }] }] } });
    const produced = c.request(produceReq(name, 0, ['last words'], -1));
    // Both requests reached the broker (no sleep: a loaded machine may take longer than any fixed wait).
    const metric = (text: string, series: string) => Number(new RegExp(`^${series.replace(/[{}"]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
    for (let i = 0; ; i++) {
      const text = await (await fetch(`${t.httpUrl}/metrics`)).text();
      if (metric(text, 'mq_fetch_purgatory_size{kind="consumer"}') >= 1 && metric(text, 'mq_requests_total{api="produce"}') >= 1) break;
      if (i >= 500) throw new Error('the long poll and the produce did not reach the broker in 500 tries');
      await new Promise((r) => setTimeout(r, 20));
    }
    const started = Date.now();
    await t.broker.close();
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await poll).fetch!.topics[0]!.partitions[0]!.errorCode).toBe(0);
    expect((await produced).produce!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, baseOffset: 0 });
    expect((await c.closed).code).toBe(1001);
    await t.restart();
    const c2 = await TestClient.connect(t.url);
    const f = await c2.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(values(f.fetch!.topics[0]!.partitions[0]!.records)).toEqual(['0:last words']);
    await c2.close();
    await t.cleanup();
  });

  it('a fetch waiting on a topic that is deleted answers UNKNOWN_TOPIC_OR_PARTITION', async () => {
    const t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('gone');
    await createTopic(c, name, 1);
    const poll = c.request({ fetch: { maxWaitMs: 10_000, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    await new Promise((r) => setTimeout(r, 50));
    await c.request({ deleteTopics: { topics: [name] } });
    expect((await poll).fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
    await c.close();
    await t.cleanup();
  });

  it('applies retention periodically and moves the log start offset', async () => {
    const t = await startTestBroker({ 'log.retention.check.interval.ms': '100' });
    const c = await TestClient.connect(t.url);
    const name = topicName('ret');
    await createTopic(c, name, 1, { 'segment.bytes': '1024', 'retention.bytes': '1024' });
    for (let i = 0; i < 10; i++) await c.request(produceReq(name, 0, ['y'.repeat(400)]));
    const low = async () =>
      (await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -2 }] }] } })).listOffsets!.topics[0]!.partitions[0]!;
    const deadline = Date.now() + 5000;
    let r = await low();
    while (r.offset === 0 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 50));
      r = await low();
    }
    expect(r.offset).toBeGreaterThan(0);
    expect(r.highWatermark).toBe(10);
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    await waitFor(() => t.lines.some((l) => l.msg === 'retention deleted old segments'));
    await c.close();
    await t.cleanup();
  });
});
