/** The in-process pair the broker's own clients reach its listener through: bytes both ways, backpressure, and an end or a destroy seen by the other side. */
import { once } from 'node:events';
import { inProcessPair, isInProcess } from './in-process-socket.js';

it('what one end writes the other reads, in order, both ways', async () => {
  const [a, b] = inProcessPair();
  const got: string[] = [];
  b.on('data', (d: Buffer) => got.push(d.toString()));
  a.write('one ');
  a.write('two');
  b.write('back');
  const [reply] = (await once(a, 'data')) as [Buffer];
  expect(reply.toString()).toBe('back');
  await new Promise((r) => setImmediate(r));
  expect(got.join('')).toBe('one two');
  expect(isInProcess(a) && isInProcess(b)).toBe(true);
  expect(b.remoteAddress).toBeUndefined();
  a.destroy();
});

it('a writer waits while the reader does not read (bounded by the reader’s buffer), and goes on when it does', async () => {
  const [a, b] = inProcessPair();
  const chunk = Buffer.alloc(64 * 1024);
  let written = 0;
  // Nobody reads b: writes complete only up to b's high-water mark, then a's write callbacks stop.
  for (let i = 0; i < 16; i++) a.write(chunk, () => (written += chunk.length));
  await new Promise((r) => setTimeout(r, 50));
  const stalled = written;
  expect(stalled).toBeLessThan(16 * chunk.length);
  expect(a.writableNeedDrain).toBe(true);
  let read = 0;
  b.on('data', (d: Buffer) => (read += d.length));
  await once(a, 'drain');
  await new Promise((r) => setTimeout(r, 50));
  expect(written).toBe(16 * chunk.length);
  expect(read).toBe(16 * chunk.length);
  a.destroy();
});

it("an end is the other side's end; a destroy closes both", async () => {
  const [a, b] = inProcessPair();
  b.resume();
  a.end();
  await once(b, 'end');
  const [c, d] = inProcessPair();
  const closed = once(d, 'close');
  c.destroy();
  await closed;
  expect(d.destroyed).toBe(true);
  expect(a.writable || b.readable).toBe(false);
});

it('a writer may reuse its buffer once its write completed: the reader still gets the bytes written (pooled fetch buffers)', async () => {
  const [a, b] = inProcessPair();
  const pooled = Buffer.from('record bytes');
  await new Promise<void>((resolve) => a.write(pooled, () => resolve()));
  pooled.fill(0); // back to the pool, and read into again
  const [got] = (await once(b, 'data')) as [Buffer];
  expect(got.toString()).toBe('record bytes');
  a.destroy();
});
