import { createKeySalter, unsaltKey } from './key-salting.js';
import { murmur2Partition } from './partitioner.js';

describe('hot-key salting', () => {
  it('spreads a named hot key over up to `salts` partitions, leaves other keys alone, and unsaltKey gives the key back', () => {
    const s = createKeySalter({ hotKeys: ['hot'], salts: 4 });
    const keys = Array.from({ length: 8 }, () => s.salt('hot'));
    expect(new Set(keys).size).toBe(4);
    expect(new Set(keys.map((k) => murmur2Partition(k, 12))).size).toBeGreaterThan(1);
    for (const k of keys) expect(unsaltKey(k)).toBe('hot');
    expect(s.salt('cold')).toBe('cold');
    expect(unsaltKey('cold')).toBe('cold');
    expect(unsaltKey('order-17')).toBe('order-17');
    const bytes = s.salt(Buffer.from('hot'));
    expect(Buffer.from(unsaltKey(bytes)).toString()).toBe('hot');
    expect(s.salt(null)).toBeNull();
  });

  it('detects a key over the rate threshold and salts it the next second', () => {
    let t = 10_000;
    const s = createKeySalter({ hotRecordsPerSec: 5, salts: 3, now: () => t });
    for (let i = 0; i < 10; i++) expect(s.salt('burst')).toBe('burst');
    expect(s.salt('calm')).toBe('calm');
    t += 1000;
    expect(s.hot()).toEqual(['burst']);
    expect(s.salt('burst')).not.toBe('burst');
    expect(s.salt('calm')).toBe('calm');
    t += 2000; // a quiet second: no longer hot
    expect(s.salt('burst')).toBe('burst');
  });
});
