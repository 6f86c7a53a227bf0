import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { createTopic, startTestBroker, TestClient, topicName, waitFor } from './helpers.js';

function keyed(records: Uint8Array): Array<[string, string | null, number]> {
  const buf = Buffer.from(records);
  const out: Array<[string, string | null, number]> = [];
  for (const span of iterateBatches(buf)) {
    for (const r of decodeBatchSync(buf, span.position).records) out.push([r.key!.toString(), r.value?.toString() ?? null, r.offset]);
  }
  return out;
}

describe('cleanup.policy=compact', () => {
  it('keeps the latest record per key at its offset, drops superseded ones and expired tombstones', async () => {
    const t = await startTestBroker({ 'log.cleaner.interval.ms': '50' });
    const c = await TestClient.connect(t.url);
    const name = topicName('compact');
    await createTopic(c, name, 1, { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'delete.retention.ms': '0', 'retention.ms': '1' });
    const produce = (key: string, value: string | null) =>
      c.request({
        produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ key, value }]) }] }] },
      });
    // Offsets 0..29: keys a, b, c rewritten ten times, then a tombstone for b, then filler to roll segments.
    for (let i = 0; i < 10; i++) for (const k of ['a', 'b', 'c']) await produce(k, `${k}${i}${'.'.repeat(120)}`);
    await produce('b', null); // offset 30
    for (let i = 0; i < 12; i++) await produce('z', `filler${i}${'.'.repeat(120)}`); // 31..42
    // The whole log: a fetch stops at a segment's end, and the cleaner may have compacted only the
    // older segments so far (a first segment holding just c7 and a8 must not look like the end state).
    const fetchAll = async () => {
      const all: Array<[string, string | null, number]> = [];
      for (let offset = 0; ; ) {
        const f = await c.request({ fetch: { maxBytes: 1 << 20, topics: [{ name, partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }] } });
        const p = f.fetch!.topics[0]!.partitions[0]!;
        const got = keyed(p.records!).filter(([, , o]) => o >= offset);
        if (got.length === 0) return all;
        all.push(...got);
        offset = got[got.length - 1]![2] + 1;
        if (offset >= Number(p.highWatermark)) return all;
      }
    };
    const compacted = await waitFor(async () => {
      const all = await fetchAll();
      return all.filter(([k]) => k !== 'z').length === 2 ? all : null;
    }, 20_000);
    const latest = compacted.filter(([k]) => k !== 'z');
    expect(latest).toEqual([
      ['a', `a9${'.'.repeat(120)}`, 27],
      ['c', `c9${'.'.repeat(120)}`, 29],
    ]);
    // Offsets only ever increase, and retention.ms did not delete anything: compact-only topics keep the latest values.
    const offsets = compacted.map(([, , o]) => o);
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    const lo = await c.request({ listOffsets: { topics: [{ name, partitions: [{ partition: 0, timestamp: -2 }] }] } });
    expect(lo.listOffsets!.topics[0]!.partitions[0]).toMatchObject({ offset: 0, highWatermark: 43 });
    // The cleaner logs its pass once compact() has returned, which can be just after the fetch above saw the result.
    await waitFor(() => t.lines.some((l) => l.msg === 'compacted' && l.topic === name), 5_000);
    await c.close();
    await t.cleanup();
  });

  it('refuses an unknown cleanup.policy', async () => {
    const t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    await expect(createTopic(c, topicName('bad'), 1, { 'cleanup.policy': 'shred' })).rejects.toThrow(/cleanup.policy/);
    await c.close();
    await t.cleanup();
  });
});
