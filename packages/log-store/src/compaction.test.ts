import * as fs from 'node:fs';
import * as path from 'node:path';
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { segmentFiles, tempDir } from '../test/helpers.js';
import { nodeFileSystem, type LogFileSystem } from './file-system.js';
import { openLog, type Log } from './log.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const OPTS = { segmentBytes: 1024, indexIntervalBytes: 100, checkpointIntervalMs: 0, retentionMs: -1, deleteRetentionMs: 1000 };

async function readAll(log: Log): Promise<Array<{ offset: number; key: string | null; value: string | null }>> {
  const out: Array<{ offset: number; key: string | null; value: string | null }> = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 1 << 20);
    if (r.records.length === 0) break;
    for (const s of iterateBatches(r.records)) {
      for (const rec of decodeBatchSync(r.records, s.position).records) {
        out.push({ offset: rec.offset, key: rec.key?.toString() ?? null, value: rec.value?.toString() ?? null });
      }
    }
    next = r.nextOffset;
  }
  return out;
}

test('keeps the latest record per key with its original offset, drops old tombstones, and survives reopen', async () => {
  let log = await openLog(dir, OPTS, { clock: () => 10_000 });
  const latest = new Map<string, { offset: number; value: string | null }>();
  let offset = 0;
  for (let i = 0; i < 60; i++) {
    const records = [0, 1].map((j) => {
      const key = `k${(i * 2 + j) % 7}`;
      // k3 gets a tombstone at the end; k5 gets a fresh tombstone.
      const value = i === 50 && key === 'k3' ? null : `v${i}-${j}`;
      return { key, value, timestamp: 1000 + i };
    });
    await log.append(encodeBatchSync(records));
    for (const r of records) latest.set(r.key, { offset: offset++, value: r.value });
  }
  await log.append(encodeBatchSync([{ key: 'k5', value: null, timestamp: 9_999 }])); // a recent tombstone
  latest.set('k5', { offset: offset++, value: null });
  await log.roll();
  const before = log.size;
  const result = await log.compact();
  expect(result.cleanedSegments).toBeGreaterThan(0);
  expect(result.removedRecords).toBeGreaterThan(100);
  expect(log.size).toBeLessThan(before);
  expect(log.logEndOffset).toBe(offset);

  const check = async (l: Log) => {
    const all = await readAll(l);
    const expected = [...latest.entries()]
      .filter(([key, v]) => !(key === 'k3' && v.value === null)) // old tombstone: gone
      .map(([key, v]) => ({ offset: v.offset, key, value: v.value }))
      .sort((a, b) => a.offset - b.offset);
    expect(all).toEqual(expected);
    // A read at an offset that was compacted away returns the next surviving batch.
    const r = await l.read(0, 1);
    expect(r.records.length).toBeGreaterThan(0);
  };
  await check(log);
  // Appends continue at the same end offset.
  expect((await log.append(encodeBatchSync([{ key: 'k1', value: 'new' }]))).baseOffset).toBe(offset);
  await log.close();
  fs.unlinkSync(path.join(dir, '.clean-shutdown')); // and verify everything on the next open
  log = await openLog(dir, OPTS, { clock: () => 10_000 });
  expect(log.recovery.truncated).toBeNull();
  const all = await readAll(log);
  expect(all[all.length - 1]).toEqual({ offset, key: 'k1', value: 'new' });
  await log.close();
  expect(segmentFiles(dir, '.cleaned')).toEqual([]);
});

test('a second compaction with nothing new removes nothing', async () => {
  const log = await openLog(dir, OPTS);
  for (let i = 0; i < 40; i++) await log.append(encodeBatchSync([{ key: `k${i % 3}`, value: `v${i}`, timestamp: Date.now() }]));
  await log.roll();
  expect((await log.compact()).removedRecords).toBeGreaterThan(0);
  expect(await log.compact()).toMatchObject({ removedRecords: 0, cleanedSegments: 0 });
  await log.close();
});

test('upToOffset leaves segments past it alone; a leftover .cleaned file is removed at open', async () => {
  const log = await openLog(dir, OPTS);
  for (let i = 0; i < 40; i++) await log.append(encodeBatchSync([{ key: 'same', value: `v${i}`.padEnd(60, '.'), timestamp: Date.now() }]));
  await log.roll();
  const r = await log.compact({ upToOffset: 0 });
  expect(r.cleanedSegments).toBe(0);
  await log.close();
  fs.writeFileSync(path.join(dir, '00000000000000000000.log.cleaned'), 'half written');
  const again = await openLog(dir, OPTS);
  expect(fs.existsSync(path.join(dir, '00000000000000000000.log.cleaned'))).toBe(false);
  expect((await readAll(again)).length).toBe(40);
  await again.close();
});

test('a truncation while compaction is writing its copies voids the plan: nothing superseded only by truncated records is lost', async () => {
  let release!: () => void;
  let reached!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const atGate = new Promise<void>((r) => (reached = r));
  const gated: LogFileSystem = {
    ...nodeFileSystem,
    async open(file, create) {
      if (file.endsWith('.cleaned')) {
        reached();
        await gate;
      }
      return nodeFileSystem.open(file, create);
    },
  };
  const log = await openLog(dir, OPTS, { fs: gated });
  await log.append(encodeBatchSync([{ key: 'k', value: 'old', timestamp: Date.now() }]));
  await log.roll();
  const newer = await log.append(encodeBatchSync([{ key: 'k', value: 'new', timestamp: Date.now() }]));
  const compaction = log.compact();
  await atGate;
  await log.truncateTo(newer.baseOffset); // the only record superseding "old" goes
  release();
  expect(await compaction).toMatchObject({ cleanedSegments: 0 });
  expect((await readAll(log)).map((r) => r.value)).toEqual(['old']);
  await log.close();
});
