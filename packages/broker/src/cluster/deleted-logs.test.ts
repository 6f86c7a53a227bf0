/**
 * DeletedLogs on a real directory: a deleted incarnation's replica directory
 * leaves its partition name at once and is gone after the background
 * removal; a sweep removes what no live topic id names (incarnations deleted
 * while the broker was down, leftovers of a crash under .deleted/) and
 * nothing else.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { DELETED_DIR, DeletedLogs } from './deleted-logs.js';
import { partitionDirName } from './partition-dir.js';

const OLD = 'OldIncarnation000000aa';
const NEW = 'NewIncarnation000000bb';
let root: string;
const logger = pino({ level: 'silent' });

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mq-deleted-logs-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function replica(topic: string, partition: number, topicId: string): Promise<string> {
  const dir = path.join(root, partitionDirName(topic, partition, topicId));
  await mkdir(dir, { recursive: true });
  await writeFile(path.join(dir, '00000000000000000000.log'), 'records');
  await writeFile(`${dir}.hw`, '10');
  return dir;
}

describe('DeletedLogs', () => {
  it('remove: the directory and its checkpoint leave their names at once and are gone after the background removal', async () => {
    const dir = await replica('orders', 0, OLD);
    const d = new DeletedLogs(root, logger);
    await d.remove(dir);
    expect(await readdir(root)).toEqual([DELETED_DIR]);
    expect(await readdir(path.join(root, DELETED_DIR))).toEqual([expect.stringMatching(new RegExp(`^0\\.${OLD}\\.\\d+-1$`))]);
    await d.drain();
    expect(await readdir(path.join(root, DELETED_DIR))).toEqual([]);
  });

  it('sweep: removes every replica of a topic id the metadata no longer has, and leftovers under .deleted; keeps live incarnations and foreign names', async () => {
    await replica('orders', 0, OLD);
    await replica('orders', 1, OLD);
    const live = await replica('orders', 0, NEW);
    await mkdir(path.join(root, DELETED_DIR, 'orders-3.Crashed0000000000000000.1-1'), { recursive: true });
    await mkdir(path.join(root, 'not-a-partition'));
    const d = new DeletedLogs(root, logger);
    const removed = await d.sweep(new Set([NEW]));
    expect(removed.sort()).toEqual([`orders-0.${OLD}`, `orders-1.${OLD}`]);
    await d.drain();
    expect((await readdir(root)).sort()).toEqual([DELETED_DIR, path.basename(live), `${path.basename(live)}.hw`, 'not-a-partition'].sort());
    expect(await readdir(path.join(root, DELETED_DIR))).toEqual([]);
  });

  it('remove: a 249-character topic\'s directory is moved aside under a short name', async () => {
    const dir = await replica('a'.repeat(249), 7, OLD);
    const warnings: unknown[] = [];
    const d = new DeletedLogs(root, pino({ level: 'warn' }, { write: (line: string) => warnings.push(JSON.parse(line)) }));
    await d.remove(dir);
    expect(await readdir(path.join(root, DELETED_DIR))).toEqual([expect.stringMatching(new RegExp(`^7\\.${OLD}\\.`))]);
    expect(warnings).toEqual([]);
    await d.drain();
  });

  it('sweep with `kept`: a live topic\'s replica this broker no longer holds (moved away while it was down) goes too', async () => {
    const stays = await replica('orders', 0, NEW);
    await replica('orders', 1, NEW);
    const d = new DeletedLogs(root, logger);
    const removed = await d.sweep(new Set([NEW]), (_id, partition) => partition === 0);
    expect(removed).toEqual([`orders-1.${NEW}`]);
    await d.drain();
    expect((await readdir(root)).sort()).toEqual([DELETED_DIR, path.basename(stays), `${path.basename(stays)}.hw`].sort());
  });

  it('sweep of a broker that has no cluster-logs yet does nothing', async () => {
    expect(await new DeletedLogs(path.join(root, 'missing'), logger).sweep(new Set())).toEqual([]);
  });
});
