import fc from 'fast-check';
import {
  HEADER_SIZE,
  decodeBatch,
  decodeBatchSync,
  encodeBatch,
  encodeBatchSync,
  iterateBatches,
  readBatchHeader,
  setBaseOffset,
  setPartitionLeaderEpoch,
  validateBatch,
  type RecordInput,
} from './index.js';

describe('record batch codec', () => {
  it('round-trips records with keys, nulls and headers', () => {
    const records: RecordInput[] = [
      { key: 'k1', value: 'hello', timestamp: 1000 },
      { key: null, value: null, timestamp: 1005, headers: { a: 'x', b: null } },
      { value: Buffer.alloc(300, 7), timestamp: 999, headers: [{ key: 'h', value: Buffer.from([1, 2]) }] },
    ];
    const buf = encodeBatchSync(records, { baseOffset: 42, producerId: 7, producerEpoch: 1, baseSequence: 3 });
    const { header, records: out } = decodeBatchSync(buf);
    expect(header).toMatchObject({
      baseOffset: 42,
      recordCount: 3,
      lastOffsetDelta: 2,
      baseTimestamp: 999,
      maxTimestamp: 1005,
      producerId: 7,
      producerEpoch: 1,
      baseSequence: 3,
      magic: 2,
    });
    expect(out.map((r) => r.offset)).toEqual([42, 43, 44]);
    expect(out[0]!.key!.toString()).toBe('k1');
    expect(out[0]!.value!.toString()).toBe('hello');
    expect(out[1]!.key).toBeNull();
    expect(out[1]!.value).toBeNull();
    expect(out[1]!.headers).toEqual([
      { key: 'a', value: Buffer.from('x') },
      { key: 'b', value: null },
    ]);
    expect(out[2]!.timestamp).toBe(999);
    expect(out[2]!.value!.length).toBe(300);
  });

  it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const)('round-trips with %s compression', async (compression) => {
    const records = Array.from({ length: 50 }, (_, i) => ({ key: `key-${i}`, value: `value-${i}`.repeat(10) }));
    const buf = await encodeBatch(records, { compression });
    const { records: out } = await decodeBatch(buf);
    expect(out.map((r) => r.value!.toString())).toEqual(records.map((r) => r.value));
    if (compression !== 'none') expect(buf.length).toBeLessThan(encodeBatchSync(records).length);
  });

  it('lets the broker patch base offset and leader epoch without breaking the CRC', () => {
    const buf = encodeBatchSync([{ value: 'a' }, { value: 'b' }]);
    setBaseOffset(buf, 0, 2 ** 40 + 5);
    setPartitionLeaderEpoch(buf, 0, 9);
    const h = validateBatch(buf);
    expect(h.baseOffset).toBe(2 ** 40 + 5);
    expect(h.partitionLeaderEpoch).toBe(9);
  });

  it('rejects a flipped bit, a lying length and an oversize batch', () => {
    const buf = encodeBatchSync([{ value: 'payload' }]);
    const flipped = Buffer.from(buf);
    flipped[HEADER_SIZE + 3]! ^= 0x10;
    expect(() => validateBatch(flipped)).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
    const lying = Buffer.from(buf);
    lying.writeInt32BE(10_000, 8);
    expect(() => validateBatch(lying)).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
    expect(() => validateBatch(buf, 0, { maxBatchBytes: 10 })).toThrow(
      expect.objectContaining({ code: 'RECORD_TOO_LARGE' }),
    );
    expect(() => readBatchHeader(buf.subarray(0, 20))).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
  });

  it('iterates concatenated batches and stops at a partial tail', () => {
    const a = encodeBatchSync([{ value: 'a' }], { baseOffset: 0 });
    const b = encodeBatchSync([{ value: 'b' }, { value: 'c' }], { baseOffset: 1 });
    const all = Buffer.concat([a, b, b.subarray(0, 30)]);
    const spans = [...iterateBatches(all)];
    expect(spans.map((s) => s.header.baseOffset)).toEqual([0, 1]);
    expect(spans[1]!.position).toBe(a.length);
  });

  it('round-trips arbitrary records (property)', () => {
    const bytes = fc.option(fc.uint8Array({ maxLength: 200 }), { nil: null });
    const record = fc.record({
      key: bytes,
      value: bytes,
      timestamp: fc.integer({ min: 0, max: 2 ** 45 }),
      headers: fc.array(fc.record({ key: fc.string({ maxLength: 10 }), value: bytes }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 20 }), fc.integer({ min: 0, max: 2 ** 50 }), (rs, base) => {
        const buf = encodeBatchSync(rs, { baseOffset: base });
        const out = decodeBatchSync(buf).records;
        expect(out.length).toBe(rs.length);
        rs.forEach((r, i) => {
          expect(out[i]!.offset).toBe(base + i);
          expect(out[i]!.timestamp).toBe(r.timestamp);
          expect(out[i]!.key === null ? null : new Uint8Array(out[i]!.key!)).toEqual(r.key);
          expect(out[i]!.value === null ? null : new Uint8Array(out[i]!.value!)).toEqual(r.value);
          expect(out[i]!.headers.map((h) => h.key)).toEqual(r.headers.map((h) => h.key));
        });
      }),
      { numRuns: 200 },
    );
  });

  it('rejects garbage without crashing (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 300 }), (garbage) => {
        try {
          decodeBatchSync(Buffer.from(garbage), 0, { verifyCrc: false });
        } catch (e) {
          expect((e as { code?: string }).code).toMatch(/CORRUPT_MESSAGE|UNSUPPORTED_COMPRESSION|INVALID_RECORD/);
        }
      }),
    );
  });
});

describe('explicit offset deltas (compaction)', () => {
  test('records keep the offset deltas given and the batch its last offset delta', () => {
    const buf = encodeBatchSync(
      [
        { key: 'a', value: '1', offsetDelta: 2 },
        { key: 'b', value: null, offsetDelta: 5 },
      ],
      { baseOffset: 100, lastOffsetDelta: 9, now: 1000 },
    );
    const decoded = decodeBatchSync(buf);
    expect(decoded.header.lastOffsetDelta).toBe(9);
    expect(decoded.header.recordCount).toBe(2);
    expect(decoded.records.map((r) => r.offset)).toEqual([102, 105]);
  });

  test('deltas that do not increase, or a last delta below them, are INVALID_RECORD', () => {
    expect(() => encodeBatchSync([{ value: 'a', offsetDelta: 3 }, { value: 'b', offsetDelta: 3 }])).toThrow(
      expect.objectContaining({ code: 'INVALID_RECORD' }),
    );
    expect(() => encodeBatchSync([{ value: 'a', offsetDelta: 3 }], { lastOffsetDelta: 2 })).toThrow(expect.objectContaining({ code: 'INVALID_RECORD' }));
  });
});
