import { OffsetIndex } from './offset-index.js';
import { TimeIndex } from './time-index.js';

describe('offset index', () => {
  test('lookup finds the last entry at or before an offset, growing as needed', () => {
    const idx = new OffsetIndex(1);
    for (let i = 1; i <= 200; i++) idx.append(i * 10, i * 1000);
    expect(idx.lookup(5)).toBe(0);
    expect(idx.lookup(10)).toBe(1000);
    expect(idx.lookup(15)).toBe(1000);
    expect(idx.lookup(2000)).toBe(200_000);
    expect(idx.lookup(99_999)).toBe(200_000);
    expect(() => idx.append(2000, 300_000)).toThrow(RangeError);
  });

  test('round-trips through its bytes and rejects damaged files unless lenient', () => {
    const idx = new OffsetIndex();
    idx.append(3, 100);
    idx.append(9, 400);
    const bytes = Buffer.from(idx.bytes());
    expect(OffsetIndex.fromBuffer(bytes, 1000)?.entries).toBe(2);
    expect(OffsetIndex.fromBuffer(bytes, 300)).toBeNull(); // points past the segment
    expect(OffsetIndex.fromBuffer(bytes.subarray(0, 12), 1000)).toBeNull(); // torn entry
    expect(OffsetIndex.fromBuffer(bytes.subarray(0, 12), 1000, true)?.entries).toBe(1);
    const swapped = Buffer.concat([bytes.subarray(8), bytes.subarray(0, 8)]);
    expect(OffsetIndex.fromBuffer(swapped, 1000)).toBeNull();
    expect(OffsetIndex.fromBuffer(swapped, 1000, true)?.entries).toBe(1);
  });

  test('truncate drops entries at or past an offset or position', () => {
    const idx = new OffsetIndex();
    for (let i = 1; i <= 5; i++) idx.append(i, i * 10);
    idx.truncate(4, Number.MAX_SAFE_INTEGER);
    expect(idx.entries).toBe(3);
    idx.truncate(Number.MAX_SAFE_INTEGER, 20);
    expect(idx.entries).toBe(1);
  });
});

describe('time index', () => {
  test('keeps only increasing timestamps and finds the last entry below a time', () => {
    const t = new TimeIndex(1);
    expect(t.maybeAppend(100, 0)).toBe(true);
    expect(t.maybeAppend(100, 5)).toBe(false);
    expect(t.maybeAppend(90, 5)).toBe(false);
    expect(t.maybeAppend(200, 7)).toBe(true);
    expect(t.maybeAppend(300, 12)).toBe(true);
    expect(t.lowerEntry(100)).toBe(-1);
    expect(t.lowerEntry(101)).toBe(0);
    expect(t.lowerEntry(300)).toBe(1);
    expect(t.lowerEntry(1e12)).toBe(2);
    const copy = TimeIndex.fromBuffer(Buffer.from(t.bytes()));
    expect(copy?.lastTimestamp()).toBe(300);
    expect(TimeIndex.fromBuffer(Buffer.alloc(13))).toBeNull();
    t.truncate(7);
    expect(t.entries).toBe(1);
  });
});
