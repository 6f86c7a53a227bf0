import fc from 'fast-check';
import {
  RecordBatchBuilder,
  RecordSection,
  RecordView,
  decodeBatchSync,
  measureRecord,
  recordsSectionSync,
  scanRecord,
  scanned,
  validateBatch,
} from './index.js';

const bytes = fc.oneof(fc.constant(null), fc.string({ maxLength: 50 }), fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)));
const record = fc.record({
  key: bytes,
  value: bytes,
  headers: fc.array(fc.record({ key: fc.string({ maxLength: 10 }), value: bytes }), { maxLength: 3 }),
  // Deltas from the first record's timestamp, either way (the first record sets the base).
  timestamp: fc.integer({ min: 1_600_000_000_000, max: 1_800_000_000_000 }),
});
const asBuffer = (b: string | Buffer | null) => (b === null ? null : Buffer.from(b));

describe('RecordBatchBuilder and RecordView (the fast paths)', () => {
  it('round-trip: records written in place read back lazily, field for field, with every codec run synchronously (property)', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 30 }), fc.constantFrom('none', 'gzip', 'snappy', 'lz4' as const), (records, codec) => {
        // A pooled buffer, larger than needed and dirty, as the producer's are.
        const b = new RecordBatchBuilder(Buffer.alloc(64 * 1024, 0xee));
        for (const r of records) {
          measureRecord(r);
          expect(b.tryWrite(r, r.timestamp)).toBe(true);
        }
        b.baseOffset = 100;
        const batch = b.closeSync(codec);
        const h = validateBatch(batch, 0);
        expect(h).toMatchObject({ recordCount: records.length, lastOffsetDelta: records.length - 1, baseTimestamp: records[0]!.timestamp });
        expect(h.maxTimestamp).toBe(Math.max(...records.map((r) => r.timestamp)));
        const section = recordsSectionSync(batch, 0, h);
        const s = new RecordSection(section, h);
        let pos = 0;
        for (const [i, r] of records.entries()) {
          pos = scanRecord(section, pos, section.length);
          const v = new RecordView(s, scanned.start, h.baseOffset + scanned.offsetDelta, scanned.valuePos);
          expect(v.offset).toBe(100 + i);
          expect(v.timestamp).toBe(r.timestamp);
          expect(v.key).toEqual(asBuffer(r.key));
          expect(v.value).toEqual(asBuffer(r.value));
          expect(v.headers).toEqual(r.headers.map((x) => ({ key: x.key, value: asBuffer(x.value) })));
        }
        expect(pos).toBe(section.length);
        // The generic decoder reads the same batch the same way.
        expect(decodeBatchSync(batch).records.map((x) => x.offset)).toEqual(records.map((_, i) => 100 + i));
      }),
      { numRuns: 200 },
    );
  });

  it('tryWrite refuses a record that does not fit and writes nothing', () => {
    const b = new RecordBatchBuilder(Buffer.alloc(100));
    measureRecord({ value: 'x'.repeat(10) });
    expect(b.tryWrite({ value: 'x'.repeat(10) }, 1)).toBe(true);
    const pos = b.pos;
    measureRecord({ value: 'y'.repeat(50) });
    expect(b.tryWrite({ value: 'y'.repeat(50) }, 2)).toBe(false);
    expect(b.pos).toBe(pos);
    expect(b.count).toBe(1);
  });

  it('scanRecord rejects a record whose fields run past its length with CORRUPT_MESSAGE', () => {
    const b = new RecordBatchBuilder(Buffer.alloc(200));
    measureRecord({ key: 'k', value: 'value' });
    b.tryWrite({ key: 'k', value: 'value' }, 1);
    const batch = b.closeSync('none');
    const section = Buffer.from(batch.subarray(61));
    section[0] = 2; // record length 1: the fields do not fit
    expect(() => scanRecord(section, 0, section.length)).toThrow(expect.objectContaining({ code: 'CORRUPT_MESSAGE' }));
  });
});
