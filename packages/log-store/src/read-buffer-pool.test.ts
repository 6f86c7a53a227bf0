import { batch, tempDir, values } from '../test/helpers.js';
import { openLog, type Log } from './log.js';
import { ReadBufferPool } from './read-buffer-pool.js';

describe('ReadBufferPool', () => {
  test('hands a released buffer out again for a read of the same size class, and not before it is released', () => {
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 64 * 1024 });
    const a = pool.take(3000);
    expect(a.length).toBe(3000);
    const b = pool.take(3000);
    expect(b.buffer).not.toBe(a.buffer);
    pool.release(a.subarray(10, 20));
    const c = pool.take(2500);
    expect(c.buffer).toBe(a.buffer);
    expect(c.length).toBe(2500);
    expect(pool.stats()).toMatchObject({ outstanding: 2, allocated: 2, reused: 1 });
  });

  test('ignores buffers it did not hand out and a second release of the same one', () => {
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 64 * 1024 });
    pool.release(Buffer.alloc(4096));
    const a = pool.take(4096);
    pool.release(a);
    pool.release(a);
    const b = pool.take(4096);
    const c = pool.take(4096);
    expect(b.buffer).toBe(a.buffer);
    expect(c.buffer).not.toBe(a.buffer);
  });

  test('sizes outside the pooled classes get buffers of their own', () => {
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 4096 });
    const small = pool.take(100);
    const large = pool.take(10_000);
    expect([small.length, large.length]).toEqual([100, 10_000]);
    expect(pool.stats()).toMatchObject({ outstanding: 0, allocated: 0 });
  });

  test('keeps at most maxIdleBytes in its free lists', () => {
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 4096, maxIdleBytes: 8192 });
    const bufs = [pool.take(4096), pool.take(4096), pool.take(4096)];
    for (const b of bufs) pool.release(b);
    expect(pool.stats()).toMatchObject({ outstanding: 0, idleBytes: 8192 });
  });

  test('refuses sizes that are not positive integers', () => {
    expect(() => new ReadBufferPool({ minPooledBytes: 0 })).toThrow(RangeError);
    expect(() => new ReadBufferPool({ minPooledBytes: 8192, maxPooledBytes: 4096 })).toThrow(RangeError);
    expect(() => new ReadBufferPool({ maxIdleBytes: -1 })).toThrow(RangeError);
  });
});

describe('Log.read into a pool', () => {
  let dir: string;
  let cleanup: () => void;
  let log: Log;

  beforeEach(async () => {
    ({ dir, cleanup } = tempDir());
    log = await openLog(dir, { checkpointIntervalMs: 0, indexIntervalBytes: 1024 });
  });

  afterEach(async () => {
    await log.close();
    cleanup();
  });

  test('returns the same bytes as a read without one, and every buffer comes back on release', async () => {
    for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 5, { valueBytes: 500 }));
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 1024 * 1024 });
    let offset = 0;
    const seen: string[] = [];
    while (offset < log.logEndOffset) {
      const plain = await log.read(offset, 8 * 1024);
      const pooled = await log.read(offset, 8 * 1024, { pool });
      expect(Buffer.compare(pooled.records, plain.records)).toBe(0);
      expect(pooled.nextOffset).toBe(plain.nextOffset);
      seen.push(...values(pooled.records).map((r) => r.value.slice(0, 4)));
      pool.release(pooled.records);
      offset = pooled.nextOffset;
    }
    expect(seen).toHaveLength(200);
    expect(pool.stats().outstanding).toBe(0);
    expect(pool.stats().reused).toBeGreaterThan(0);
  });

  test('a read from the middle of a batch range (no read hint) and an empty read leave nothing outstanding', async () => {
    for (let i = 0; i < 20; i++) await log.append(batch(`b${i}`, 5, { valueBytes: 300 }));
    const pool = new ReadBufferPool({ minPooledBytes: 1024, maxPooledBytes: 1024 * 1024 });
    const mid = await log.read(52, 4096, { pool });
    expect(values(mid.records)[0]!.offset).toBe(50);
    pool.release(mid.records);
    const none = await log.read(30, 4096, { pool, maxOffset: 30 });
    expect(none.records.length).toBe(0);
    // Above maxOffset: located, then dropped.
    const above = await log.read(30, 4096, { pool, maxOffset: 32 });
    expect(above.records.length).toBe(0);
    expect(pool.stats().outstanding).toBe(0);
  });
});
