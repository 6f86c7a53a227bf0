import { FramePool, MIN_POOLED_FRAME_BYTES } from './frame-pool.js';

describe('FramePool', () => {
  it('never hands out a buffer that is still outstanding; a released one is reused', () => {
    const pool = new FramePool(4);
    const a = pool.acquire(1000);
    const b = pool.acquire(1000);
    expect(b).not.toBe(a);
    expect(a.length).toBe(MIN_POOLED_FRAME_BYTES);
    a.fill(0xaa);
    // While `a` is out, no acquire of any size returns it.
    const more = Array.from({ length: 10 }, (_, i) => pool.acquire(100 * (i + 1)));
    expect(more).not.toContain(a);
    expect(new Set([a, b, ...more]).size).toBe(12);
    expect(a.every((x) => x === 0xaa)).toBe(true);
    pool.release(a);
    expect(pool.acquire(1000)).toBe(a);
    expect(pool.outstanding).toBe(12);
  });

  it('ignores a second release (a buffer is never on the free list twice)', () => {
    const pool = new FramePool(4);
    const a = pool.acquire(10);
    pool.release(a);
    pool.release(a);
    expect(pool.freeCount).toBe(1);
    expect(pool.acquire(10)).toBe(a);
    expect(pool.acquire(10)).not.toBe(a);
    pool.release(Buffer.alloc(10)); // never handed out: not taken
    expect(pool.freeCount).toBe(0);
  });

  it('fits a request with the smallest free buffer that is large enough, growing in powers of two', () => {
    const pool = new FramePool(4);
    const small = pool.acquire(MIN_POOLED_FRAME_BYTES);
    const big = pool.acquire(MIN_POOLED_FRAME_BYTES + 1);
    expect(big.length).toBe(2 * MIN_POOLED_FRAME_BYTES);
    pool.release(big);
    pool.release(small);
    expect(pool.acquire(100)).toBe(small);
    expect(pool.acquire(100)).toBe(big);
  });

  it('keeps at most maxBuffers free, preferring the larger ones', () => {
    const pool = new FramePool(2);
    const bufs = [1, 4, 2].map((k) => pool.acquire(k * MIN_POOLED_FRAME_BYTES));
    for (const b of bufs) pool.release(b);
    expect(pool.freeCount).toBe(2);
    const lens = [pool.acquire(1), pool.acquire(1)].map((b) => b.length / MIN_POOLED_FRAME_BYTES).sort();
    expect(lens).toEqual([2, 4]);
  });
});
