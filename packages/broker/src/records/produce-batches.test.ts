import { decodeBatchSync, encodeBatchSync, readBatchHeader, validateBatch } from '@mq/protocol/batch';
import { checkProducedBatches, stampLogAppendTime } from './produce-batches.js';

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    return (err as { code?: string }).code;
  }
  return 'no error';
};

describe('produced batch checks', () => {
  const a = encodeBatchSync([{ value: 'one' }, { value: 'two' }], { now: 1000 });
  const b = encodeBatchSync([{ key: 'k', value: 'three' }], { now: 2000 });

  it('accepts concatenated batches and counts them', () => {
    const r = checkProducedBatches(Buffer.concat([a, b]), 1 << 20);
    expect(r).toEqual({ batches: 2, records: 3, bytes: a.length + b.length, positions: [0, a.length] });
  });

  it('refuses an empty buffer, a flipped bit, a lying length and trailing bytes with CORRUPT_MESSAGE', () => {
    expect(codeOf(() => checkProducedBatches(Buffer.alloc(0), 1 << 20))).toBe('CORRUPT_MESSAGE');
    const flipped = Buffer.from(a);
    flipped[flipped.length - 1]! ^= 1;
    expect(codeOf(() => checkProducedBatches(flipped, 1 << 20))).toBe('CORRUPT_MESSAGE');
    const lying = Buffer.from(a);
    lying.writeInt32BE(lying.readInt32BE(8) + 100, 8);
    expect(codeOf(() => checkProducedBatches(lying, 1 << 20))).toBe('CORRUPT_MESSAGE');
    // Even a length over the size limit is a lie first when the bytes are not there.
    lying.writeInt32BE(10_000_000, 8);
    expect(codeOf(() => checkProducedBatches(lying, 1 << 20))).toBe('CORRUPT_MESSAGE');
    expect(codeOf(() => checkProducedBatches(Buffer.concat([a, Buffer.alloc(10)]), 1 << 20))).toBe('CORRUPT_MESSAGE');
  });

  it('refuses a batch over the size limit with RECORD_TOO_LARGE', () => {
    expect(codeOf(() => checkProducedBatches(a, a.length - 1))).toBe('RECORD_TOO_LARGE');
  });

  it('refuses transactional batches', () => {
    const t = encodeBatchSync([{ value: 'x' }], { transactional: true, producerId: 1 });
    expect(codeOf(() => checkProducedBatches(t, 1 << 20))).toBe('INVALID_RECORD');
  });

  it('stamps log-append time and keeps the CRC valid without touching records', () => {
    const buf = Buffer.concat([a, b]);
    const checked = checkProducedBatches(buf, 1 << 20);
    stampLogAppendTime(buf, checked, 123456789);
    for (const pos of checked.positions) {
      const h = validateBatch(buf, pos);
      expect(h.maxTimestamp).toBe(123456789);
    }
    const decoded = decodeBatchSync(buf, 0);
    expect(decoded.records.map((r) => [r.value?.toString(), r.timestamp])).toEqual([
      ['one', 123456789],
      ['two', 123456789],
    ]);
    expect(readBatchHeader(buf, a.length).maxTimestamp).toBe(123456789);
  });
});
