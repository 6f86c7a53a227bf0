import { OFF_ATTRIBUTES, OFF_CRC, computeBatchCrc, encodeBatch, encodeBatchSync, setBaseOffset } from '@mq/protocol/batch';
import { CompletedFetch, endOfWholeBatches, type ConsumerRecord } from './record-decoder.js';

const T0 = 1_700_000_000_000;

function fetched(batches: Buffer[], fetchOffset = 0, checkCrcs = true): CompletedFetch {
  return new CompletedFetch('t', 3, Buffer.concat(batches), 0, fetchOffset, checkCrcs);
}

async function drainAll(f: CompletedFetch, minOffset = 0, step = 1000): Promise<ConsumerRecord[]> {
  const out: ConsumerRecord[] = [];
  while (!f.done) if ((await f.drain(out, step, minOffset)) === 0) break;
  return out;
}

describe('CompletedFetch', () => {
  it('decodes keys, values, nulls, headers and timestamps, lazily and repeatably', async () => {
    const batch = encodeBatchSync(
      [
        { key: 'k0', value: 'v0', timestamp: T0 },
        { key: null, value: null, timestamp: T0 + 5 },
        { key: Buffer.alloc(0), value: 'x'.repeat(300), timestamp: T0 + 300_000, headers: [{ key: 'h1', value: 'a' }, { key: 'hé', value: null }] },
        { value: 'last', headers: { trace: 'abc' } },
      ],
      { baseOffset: 40, now: T0 + 7 },
    );
    const records = await drainAll(fetched([batch], 40));
    expect(records.map((r) => r.offset)).toEqual([40, 41, 42, 43]);
    const [a, b, c, d] = records as [ConsumerRecord, ConsumerRecord, ConsumerRecord, ConsumerRecord];
    expect([a.topic, a.partition]).toEqual(['t', 3]);
    expect(a.key?.toString()).toBe('k0');
    expect(a.value?.toString()).toBe('v0');
    expect(a.value).toBe(a.value); // one view, made once
    expect(a.headers).toEqual([]);
    expect(a.timestamp).toBe(T0);
    expect(b.key).toBeNull();
    expect(b.value).toBeNull();
    expect(b.timestamp).toBe(T0 + 5);
    expect(c.key).toEqual(Buffer.alloc(0));
    expect(c.value?.toString()).toBe('x'.repeat(300));
    expect(c.timestamp).toBe(T0 + 300_000);
    expect(c.headers.map((h) => [h.key, h.value?.toString() ?? null])).toEqual([
      ['h1', 'a'],
      ['hé', null],
    ]);
    expect(c.headers).toBe(c.headers);
    // Reading the value first and the key afterwards (and the reverse) gives the same fields.
    expect(d.value?.toString()).toBe('last');
    expect(d.key).toBeNull();
    expect(d.headers.map((h) => [h.key, h.value?.toString()])).toEqual([['trace', 'abc']]);
    expect(d.timestamp).toBe(T0 + 7);
    expect(JSON.parse(JSON.stringify(a))).toMatchObject({ topic: 't', partition: 3, offset: 40, timestamp: T0, headers: [] });
  });

  it('gives LogAppendTime batches the batch max timestamp', async () => {
    const batch = encodeBatchSync([{ value: 'a', timestamp: T0 }, { value: 'b', timestamp: T0 + 9 }], { timestampType: 'log-append' });
    const records = await drainAll(fetched([batch]));
    expect(records.map((r) => r.timestamp)).toEqual([T0 + 9, T0 + 9]);
  });

  it('skips records before the fetch offset and stops at max, resuming where it stopped', async () => {
    const b1 = encodeBatchSync(Array.from({ length: 10 }, (_, i) => ({ value: `a${i}` })), { baseOffset: 0 });
    const b2 = encodeBatchSync(Array.from({ length: 10 }, (_, i) => ({ value: `b${i}` })), { baseOffset: 10 });
    const f = fetched([b1, b2], 4);
    const out: ConsumerRecord[] = [];
    expect(await f.drain(out, 3, 4)).toBe(3);
    expect(await f.drain(out, 10, 4)).toBe(10);
    expect(await f.drain(out, 10, 4)).toBe(3);
    expect(f.done).toBe(true);
    expect(out.map((r) => r.offset)).toEqual(Array.from({ length: 16 }, (_, i) => i + 4));
    expect(out.map((r) => r.value?.toString())).toEqual([...Array.from({ length: 6 }, (_, i) => `a${i + 4}`), ...Array.from({ length: 10 }, (_, i) => `b${i}`)]);
    expect(f.nextOffset).toBe(20);
    expect(endOfWholeBatches(Buffer.concat([b1, b2]))).toBe(20);
  });

  it('reports a corrupt record as CORRUPT_MESSAGE (CRC off, so the record checks are what catch it)', async () => {
    const batch = encodeBatchSync([{ key: 'k', value: 'value' }], { baseOffset: 0 });
    // The value length varint sits right before the value: make it run past the record.
    const at = batch.indexOf('value') - 1;
    const bad = Buffer.from(batch);
    bad[at] = 0x7e; // zig-zag 63
    await expect(drainAll(fetched([bad], 0, false))).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    // With CRCs checked the same damage is caught as a CRC mismatch.
    await expect(drainAll(fetched([bad], 0, true))).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
  });

  it('refuses a null header key', async () => {
    const batch = encodeBatchSync([{ value: 'v', headers: [{ key: 'hk', value: 'hv' }] }], { baseOffset: 0 });
    const bad = Buffer.from(batch);
    const at = bad.indexOf('hk') - 1;
    bad[at] = 0x01; // zig-zag -1: null
    await expect(drainAll(fetched([bad], 0, false))).rejects.toThrow(/null header key|does not match/);
  });

  it('reads a batch whose base offset was assigned after encoding', async () => {
    const batch = encodeBatchSync([{ value: 'x' }, { value: 'y' }]);
    setBaseOffset(batch, 0, 1_000_000_000_000);
    const records = await drainAll(fetched([batch], 1_000_000_000_000, false));
    expect(records.map((r) => r.offset)).toEqual([1_000_000_000_000, 1_000_000_000_001]);
    expect(records[1]!.value?.toString()).toBe('y');
  });
});

describe('batches no reader can decode (issue 22)', () => {
  const reseal = (b: Buffer) => {
    b.writeUInt32BE(computeBatchCrc(b, 0, b.length), OFF_CRC);
    return b;
  };

  it('a CRC-valid batch marked lz4 whose records are not lz4 is a typed error naming the offset to go on from', async () => {
    const poison = encodeBatchSync([{ value: 'a' }, { value: 'b' }], { baseOffset: 10, now: T0 });
    poison.writeInt16BE(3, OFF_ATTRIBUTES);
    const f = fetched([reseal(poison), encodeBatchSync([{ value: 'after' }], { baseOffset: 12, now: T0 })], 10);
    await expect(drainAll(f)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE', baseOffset: 10, lastOffset: 11, skipTo: 12, retriable: false });
  });

  it('a compression bomb is refused at the bound, never inflated (64 MiB of zeros against 1 MiB)', async () => {
    const bomb = await encodeBatch([{ value: Buffer.alloc(64 * 1024 * 1024) }], { baseOffset: 5, compression: 'gzip', now: T0 });
    const f = new CompletedFetch('t', 3, bomb, 0, 5, true, 1024 * 1024);
    const err = await drainAll(f).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CORRUPT_MESSAGE', skipTo: 6 });
    expect((err as Error).message).toMatch(/limit of 1048576 bytes/);
  });
});
