import { Mutex, RwLock } from './locks.js';

const tick = () => new Promise((r) => setImmediate(r));

test('mutex runs one at a time, in order, and survives a rejection', async () => {
  const m = new Mutex();
  const log: string[] = [];
  const a = m.run(async () => {
    log.push('a1');
    await tick();
    log.push('a2');
  });
  const b = m.run(async () => {
    log.push('b');
    throw new Error('boom');
  });
  const c = m.run(async () => log.push('c'));
  await a;
  await expect(b).rejects.toThrow('boom');
  await c;
  expect(log).toEqual(['a1', 'a2', 'b', 'c']);
});

test('readers share; a writer waits for them and runs alone; later readers wait for a waiting writer', async () => {
  const rw = new RwLock();
  const log: string[] = [];
  let releaseReader!: () => void;
  const r1 = rw.read(async () => {
    log.push('r1 start');
    await new Promise<void>((r) => (releaseReader = r));
    log.push('r1 end');
  });
  const r2 = rw.read(async () => log.push('r2'));
  await tick();
  const w = rw.write(async () => {
    log.push('w');
  });
  const r3 = rw.read(async () => log.push('r3'));
  await tick();
  expect(log).toEqual(['r1 start', 'r2']);
  releaseReader();
  await Promise.all([r1, r2, w, r3]);
  expect(log).toEqual(['r1 start', 'r2', 'r1 end', 'w', 'r3']);
});

test('RwLock is not readable between a writer ending and the readers it woke starting (synchronous work would overtake them)', async () => {
  const rw = new RwLock();
  let releaseWriter!: () => void;
  const w = rw.write(() => new Promise<void>((r) => (releaseWriter = r)));
  let started = false;
  const r = rw.read(async () => {
    started = true;
  });
  await tick();
  expect(rw.readable).toBe(false);
  releaseWriter();
  const seen: boolean[] = [];
  for (let i = 0; i < 20 && !started; i++) {
    seen.push(rw.readable);
    await Promise.resolve();
  }
  expect(started).toBe(true);
  expect(seen.every((readable) => !readable)).toBe(true);
  await Promise.all([w, r]);
  expect(rw.readable).toBe(true);
});
