import fc from 'fast-check';
import { decodeBatch, decodeBatchSync, validateBatch } from '@mq/protocol/batch';
import { coarseNow as recordNow } from '../coarse-clock.js';
import { BatchBuilder, measureRecord, type ProducerRecord } from './batch-builder.js';
import type { RecordSink } from './record-sink.js';

const sink: RecordSink = { ok: () => {}, fail: () => {} };

function build(records: ProducerRecord[], size = 64 * 1024, now = 1_700_000_000_000): BatchBuilder {
  const b = new BatchBuilder(Buffer.alloc(size), 't', 0, now);
  for (const [i, r] of records.entries()) {
    const s = measureRecord(r);
    expect(b.tryAppend(r, s, r.timestamp ?? now + i, sink, i)).toBe(true);
  }
  return b;
}

describe('BatchBuilder', () => {
  it.each(['none', 'gzip'] as const)('writes idempotent producer fields set before close inside the CRC (%s)', async (codec) => {
    const b = build([{ value: 'a' }, { value: 'b' }]);
    b.producerId = 2 ** 40 + 7;
    b.producerEpoch = 3;
    b.baseSequence = 2 ** 31 - 1;
    const bytes = await b.close(codec);
    const h = validateBatch(bytes, 0); // the CRC check passes
    expect(h).toMatchObject({ producerId: 2 ** 40 + 7, producerEpoch: 3, baseSequence: 2 ** 31 - 1 });
    // A retry closes again: the same bytes, the same sequence.
    expect(await b.close(codec)).toBe(bytes);
  });

  it('leaves the producer fields at -1 for a plain producer', () => {
    const h = validateBatch(build([{ value: 'a' }]).close('none') as Buffer, 0);
    expect(h).toMatchObject({ producerId: -1, producerEpoch: -1, baseSequence: -1 });
  });

  it('writes batches the protocol codec decodes, field for field', () => {
    const records: ProducerRecord[] = [
      { key: 'k1', value: 'hello' },
      { key: null, value: Buffer.from([0, 1, 2, 255]) },
      { key: Buffer.from('bin'), value: null, headers: { trace: 'abc', empty: null } },
      { value: 'ünïcødé 日本 🎉', headers: [{ key: 'a', value: '1' }, { key: 'a', value: Buffer.from('2') }] },
      { value: 'x'.repeat(5000), timestamp: 1_699_999_000_000 },
      { value: new Uint8Array([7, 8, 9]) },
      { value: '' },
    ];
    const b = build(records);
    const bytes = b.close('none') as Buffer;
    const h = validateBatch(bytes);
    expect(h.recordCount).toBe(records.length);
    const decoded = decodeBatchSync(bytes);
    expect(decoded.records.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(decoded.records[0]!.key!.toString()).toBe('k1');
    expect(decoded.records[0]!.value!.toString()).toBe('hello');
    expect(decoded.records[1]!.key).toBeNull();
    expect([...decoded.records[1]!.value!]).toEqual([0, 1, 2, 255]);
    expect(decoded.records[2]!.value).toBeNull();
    expect(decoded.records[2]!.headers.map((x) => [x.key, x.value?.toString() ?? null])).toEqual([
      ['trace', 'abc'],
      ['empty', null],
    ]);
    expect(decoded.records[3]!.value!.toString()).toBe('ünïcødé 日本 🎉');
    expect(decoded.records[3]!.headers.map((x) => [x.key, x.value!.toString()])).toEqual([
      ['a', '1'],
      ['a', '2'],
    ]);
    expect(decoded.records[4]!.value!.length).toBe(5000);
    expect(decoded.records[4]!.timestamp).toBe(1_699_999_000_000);
    expect(decoded.records[0]!.timestamp).toBe(1_700_000_000_000);
    expect(decoded.records[6]!.value!.length).toBe(0);
    expect(h.maxTimestamp).toBe(1_700_000_000_006);
  });

  it.each(['gzip', 'snappy', 'lz4', 'zstd'] as const)('compresses the records section with %s', async (codec) => {
    const records = Array.from({ length: 200 }, (_, i) => ({ key: `key-${i}`, value: `value ${i} `.repeat(10) }));
    const b = build(records);
    const bytes = await b.close(codec);
    expect(bytes.length).toBeLessThan(b.pos);
    const decoded = await decodeBatch(bytes);
    expect(decoded.records).toHaveLength(200);
    expect(decoded.records[199]!.value!.toString()).toBe('value 199 '.repeat(10));
  });

  it('refuses a record that does not fit, writing nothing', () => {
    const b = new BatchBuilder(Buffer.alloc(200), 't', 0, 0);
    const small = { value: 'x'.repeat(50) };
    expect(b.tryAppend(small, measureRecord(small), 0, sink, 0)).toBe(true);
    const pos = b.pos;
    const big = { value: 'y'.repeat(200) };
    expect(b.tryAppend(big, measureRecord(big), 0, sink, 1)).toBe(false);
    expect(b.pos).toBe(pos);
    expect(b.count).toBe(1);
  });

  it('rejects values that are not bytes or strings with INVALID_ARGUMENT', () => {
    expect(() => measureRecord({ value: 42 as unknown as string })).toThrow(expect.objectContaining({ code: 'INVALID_ARGUMENT' }));
    expect(() => measureRecord({ value: 'a', headers: { h: {} as unknown as string } })).toThrow(/header "h"/);
  });

  it('encodes any string key, value and header exactly as Buffer.from(string) (ASCII fast path and UTF-8 path)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ key: fc.option(fc.string({ unit: 'binary', maxLength: 60 })), value: fc.string({ unit: 'binary', maxLength: 120 }), h: fc.string({ maxLength: 50 }) }), {
          minLength: 1,
          maxLength: 20,
        }),
        (rs) => {
          const records = rs.map((r) => ({ key: r.key, value: r.value, headers: { h: r.h } }));
          const decoded = decodeBatchSync(build(records, 64 * 1024).close('none') as Buffer).records;
          decoded.forEach((d, i) => {
            expect(d.key).toEqual(records[i]!.key === null ? null : Buffer.from(records[i]!.key!));
            expect(d.value).toEqual(Buffer.from(records[i]!.value));
            expect(d.headers[0]!.value).toEqual(Buffer.from(records[i]!.headers.h));
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('coarseNow', () => {
  it('stays within a millisecond or so of the clock, and refreshes on the next tick', async () => {
    const a = recordNow();
    expect(Math.abs(a - Date.now())).toBeLessThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 15));
    const b = recordNow();
    expect(b - a).toBeGreaterThanOrEqual(10);
    for (let i = 0; i < 1000; i++) recordNow();
    expect(Math.abs(recordNow() - Date.now())).toBeLessThanOrEqual(2);
  });
});
