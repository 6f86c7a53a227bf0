import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { createTopic, startTestBroker, TestClient, topicName, type TestBroker } from '../../test/helpers.js';

function values(records: Uint8Array): string[] {
  const buf = Buffer.from(records);
  const out: string[] = [];
  for (const span of iterateBatches(buf)) {
    for (const r of decodeBatchSync(buf, span.position).records) out.push(`${r.offset}:${r.value?.toString()}`);
  }
  return out;
}

describe('fetch of several partitions', () => {
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

  async function fill(name: string, partitions: number, perPartition: number, size: number): Promise<void> {
    await createTopic(c, name, partitions);
    for (let p = 0; p < partitions; p++) {
      for (let i = 0; i < perPartition; i++) {
        const records = encodeBatchSync([{ value: `${p}-${i}-`.padEnd(size, 'x') }]);
        await c.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: p, records }] }] } });
      }
    }
  }

  it('reads partitions whose limits fit the budget at once, in request order, with errors in place', async () => {
    const name = topicName('par');
    await fill(name, 4, 3, 50);
    const f = await c.request({
      fetch: {
        maxBytes: 1 << 20,
        topics: [
          {
            name,
            partitions: [
              { partition: 3, fetchOffset: 1, partitionMaxBytes: 64 * 1024 },
              { partition: 0, fetchOffset: 0, partitionMaxBytes: 64 * 1024 },
              { partition: 1, fetchOffset: 99, partitionMaxBytes: 64 * 1024 },
              { partition: 2, fetchOffset: 0, partitionMaxBytes: 64 * 1024, currentLeaderEpoch: 7 },
            ],
          },
          { name: topicName('missing'), partitions: [{ partition: 0, fetchOffset: 0 }] },
        ],
      },
    });
    const [p3, p0, p1, p2] = f.fetch!.topics[0]!.partitions;
    expect(p3!.partition).toBe(3);
    expect(values(p3!.records).map((v) => v.slice(0, 6))).toEqual(['1:3-1-', '2:3-2-']);
    expect(values(p0!.records)).toHaveLength(3);
    expect(p1!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    expect(p2!.errorCode).toBe(errorNumber('UNKNOWN_LEADER_EPOCH'));
    expect(p2!.records).toHaveLength(0);
    expect(f.fetch!.topics[1]!.partitions[0]!.errorCode).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
  });

  it('over budget: the first data may exceed it, later partitions stop when it is spent, errors are still answered', async () => {
    const name = topicName('seq');
    await fill(name, 3, 4, 1000);
    const f = await c.request({
      fetch: {
        maxBytes: 2500,
        topics: [
          {
            name,
            partitions: [
              { partition: 0, fetchOffset: 0, partitionMaxBytes: 2000 },
              { partition: 1, fetchOffset: 0, partitionMaxBytes: 2000 },
              { partition: 2, fetchOffset: 0, partitionMaxBytes: 2000, currentLeaderEpoch: 9 },
            ],
          },
        ],
      },
    });
    const [p0, p1, p2] = f.fetch!.topics[0]!.partitions;
    const n0 = values(p0!.records).length;
    const n1 = values(p1!.records).length;
    expect(n0).toBeGreaterThanOrEqual(1);
    expect(p0!.records.length + p1!.records.length).toBeLessThanOrEqual(2500);
    expect(n0 + n1).toBeLessThanOrEqual(2);
    expect(p2!.errorCode).toBe(errorNumber('UNKNOWN_LEADER_EPOCH'));
  });

  it('answers a large multi-partition fetch in one frame that decodes to every record', async () => {
    const name = topicName('big');
    await fill(name, 3, 40, 2000);
    const f = await c.request({
      fetch: { maxBytes: 8 << 20, topics: [{ name, partitions: [0, 1, 2].map((partition) => ({ partition, fetchOffset: 0, partitionMaxBytes: 1 << 20 })) }] },
    });
    for (const [i, p] of f.fetch!.topics[0]!.partitions.entries()) {
      const v = values(p.records);
      expect(v).toHaveLength(40);
      expect(v[39]!.startsWith(`39:${i}-39-`)).toBe(true);
      expect(p.highWatermark).toBe(40);
    }
  });
});
