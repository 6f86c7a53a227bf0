import { deferred, Fifo } from './deferred.js';

describe('Fifo', () => {
  it('returns items in the order they were pushed, across compactions', () => {
    const q = new Fifo<number>();
    let next = 0;
    let expect_ = 0;
    for (let round = 0; round < 50; round++) {
      for (let i = 0; i < 97; i++) q.push(next++);
      for (let i = 0; i < 90; i++) expect(q.shift()).toBe(expect_++);
    }
    expect(q.length).toBe(next - expect_);
    expect(q.items()[0]).toBe(expect_);
    while (q.length > 0) expect(q.shift()).toBe(expect_++);
    expect(q.shift()).toBeUndefined();
  });

  it('removes an item from the middle without disturbing the order', () => {
    const q = new Fifo<string>();
    for (const s of ['a', 'b', 'c', 'd']) q.push(s);
    expect(q.shift()).toBe('a');
    expect(q.remove('c')).toBe(true);
    expect(q.remove('a')).toBe(false);
    expect(q.items()).toEqual(['b', 'd']);
  });
});

describe('deferred', () => {
  it('settles every waiter of a batch at once and swallows an unobserved rejection', async () => {
    const d = deferred();
    const seen: string[] = [];
    const waiters = [1, 2, 3].map((i) => d.promise.then(() => seen.push(`ok${i}`)));
    d.resolve();
    await Promise.all(waiters);
    expect(seen).toEqual(['ok1', 'ok2', 'ok3']);
    const failed = deferred();
    failed.reject(new Error('boom'));
    await expect(failed.promise).rejects.toThrow('boom');
  });
});
