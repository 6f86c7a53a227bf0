import { tempDir } from '../test/helpers.js';
import { nodeFileSystem } from './file-system.js';
import { PersistentLeaderEpochCache } from './leader-epoch-cache.js';

describe('leader epoch cache', () => {
  let leo = 0;
  const make = (dir: string) => new PersistentLeaderEpochCache(dir, nodeFileSystem, () => leo);

  test('answers OffsetForLeaderEpoch like Kafka', () => {
    const c = make('/nonexistent');
    expect(c.endOffsetFor(0)).toEqual({ epoch: -1, endOffset: -1 });
    c.assign(2, 0);
    c.assign(4, 10);
    c.assign(7, 25);
    leo = 40;
    expect(c.assign(7, 30)).toBe(false); // not newer
    expect(c.assign(3, 30)).toBe(false); // older epochs never go in
    expect(c.endOffsetFor(1)).toEqual({ epoch: -1, endOffset: -1 });
    expect(c.endOffsetFor(2)).toEqual({ epoch: 2, endOffset: 10 });
    expect(c.endOffsetFor(3)).toEqual({ epoch: 2, endOffset: 10 });
    expect(c.endOffsetFor(5)).toEqual({ epoch: 4, endOffset: 25 });
    expect(c.endOffsetFor(7)).toEqual({ epoch: 7, endOffset: 40 });
    expect(c.endOffsetFor(9)).toEqual({ epoch: 7, endOffset: 40 });
    expect(c.startOffsetFor(4)).toBe(10);
    expect(c.startOffsetFor(5)).toBe(-1);
  });

  test('a new epoch starting at or below older starts replaces them', () => {
    const c = make('/nonexistent');
    c.assign(1, 0);
    c.assign(2, 10);
    c.assign(3, 10);
    expect(c.entries).toEqual([
      { epoch: 1, startOffset: 0 },
      { epoch: 3, startOffset: 10 },
    ]);
  });

  test('truncation from the end and from the start', () => {
    const c = make('/nonexistent');
    c.assign(1, 0);
    c.assign(2, 10);
    c.assign(3, 20);
    expect(c.truncateFromEnd(20)).toBe(true);
    expect(c.latestEpoch).toBe(2);
    expect(c.truncateFromStart(15)).toBe(true);
    expect(c.entries).toEqual([{ epoch: 2, startOffset: 15 }]);
    expect(c.truncateFromStart(12)).toBe(false);
  });

  test('persists and loads; a malformed file is reported and leaves the cache empty', async () => {
    const { dir, cleanup } = tempDir();
    try {
      const c = make(dir);
      c.assign(5, 3);
      c.assign(6, 9);
      await c.persist();
      const d = make(dir);
      expect(await d.load()).toBeNull();
      expect(d.entries).toEqual(c.entries);
      await nodeFileSystem.writeFileAtomic(`${dir}/leader-epoch-checkpoint`, Buffer.from('0\n2\n6 9\n5 3\n'));
      const e = make(dir);
      expect(await e.load()).toMatch(/out of order/);
      expect(e.entries).toEqual([]);
    } finally {
      cleanup();
    }
  });
});
