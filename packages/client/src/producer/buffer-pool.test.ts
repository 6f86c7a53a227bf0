import { BufferPool } from './buffer-pool.js';

describe('BufferPool', () => {
  it('never hands out more than its total', () => {
    const pool = new BufferPool(1000, 300);
    const a = pool.tryAllocate(300)!;
    const b = pool.tryAllocate(300)!;
    const c = pool.tryAllocate(300)!;
    expect(pool.tryAllocate(300)).toBeUndefined();
    expect(pool.tryAllocate(101)).toBeUndefined();
    expect(pool.tryAllocate(100)).toBeDefined();
    expect(pool.usedBytes).toBe(1000);
    pool.release(a);
    expect(pool.usedBytes).toBe(700);
    expect(pool.tryAllocate(300)).toBe(a); // reused
    void b;
    void c;
  });

  it('drops pooled buffers to make room for an odd size', () => {
    const pool = new BufferPool(1000, 300);
    const bufs = [pool.tryAllocate(300)!, pool.tryAllocate(300)!, pool.tryAllocate(300)!];
    for (const b of bufs) pool.release(b);
    expect(pool.usedBytes).toBe(0);
    const big = pool.tryAllocate(900);
    expect(big?.length).toBe(900);
    expect(pool.tryAllocate(200)).toBeUndefined();
  });

  it('tells listeners when memory is released', () => {
    const pool = new BufferPool(300, 300);
    let calls = 0;
    pool.onRelease(() => calls++);
    pool.release(pool.tryAllocate(300)!);
    expect(calls).toBe(1);
  });
});
