import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { PRODUCER_ID_BLOCK_FILE, ProducerIdManager, controllerBlockSource, fileBlockSource } from './producer-ids.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'mq-pid-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a file block is persisted before its ids are handed out, and a restart starts after it', async () => {
  const ids = new ProducerIdManager(await fileBlockSource(dir, 3));
  expect(await ids.allocate()).toBe(0);
  expect(await readFile(path.join(dir, PRODUCER_ID_BLOCK_FILE), 'utf8')).toBe('3\n');
  expect(await Promise.all([ids.allocate(), ids.allocate(), ids.allocate()])).toEqual([1, 2, 3]);
  expect(await readFile(path.join(dir, PRODUCER_ID_BLOCK_FILE), 'utf8')).toBe('6\n');
  // A crash now: ids 4 and 5 are never handed out; the next process starts at 6.
  const again = new ProducerIdManager(await fileBlockSource(dir, 3));
  expect(await again.allocate()).toBe(6);
});

test('a damaged block file refuses to start rather than reuse ids', async () => {
  await writeFile(path.join(dir, PRODUCER_ID_BLOCK_FILE), 'garbage');
  await expect(fileBlockSource(dir)).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
});

test('controller blocks come from allocateProducerIds', async () => {
  const submitted: unknown[] = [];
  let next = 0;
  const ids = new ProducerIdManager(
    controllerBlockSource(async (c) => {
      submitted.push(c);
      const first = next;
      next += c.count;
      return { firstProducerId: first, count: c.count };
    }, 7, 2),
  );
  expect([await ids.allocate(), await ids.allocate(), await ids.allocate()]).toEqual([0, 1, 2]);
  expect(submitted).toEqual([
    { type: 'allocateProducerIds', brokerId: 7, count: 2 },
    { type: 'allocateProducerIds', brokerId: 7, count: 2 },
  ]);
});
