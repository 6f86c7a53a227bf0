import { afterAll, describe, expect, it } from '@jest/globals';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntryType, type Entry } from '../core/types.js';
import { raftStorageCompliance } from './compliance.js';
import { FileStorage } from './file-storage.js';
import { MemoryStorage } from './memory-storage.js';
import type { RaftStorage } from './types.js';

const root = mkdtempSync(join(tmpdir(), 'mq-raft-storage-'));
let n = 0;
const dirs = new Map<RaftStorage, string>();
afterAll(() => rmSync(root, { recursive: true, force: true }));

raftStorageCompliance('MemoryStorage', { create: async () => new MemoryStorage() });
raftStorageCompliance('FileStorage', {
  create: async () => {
    const dir = join(root, `c${++n}`);
    const s = await FileStorage.open(dir, { preallocateBytes: 4096 });
    dirs.set(s, dir);
    return s;
  },
  reopen: async (s) => {
    const dir = dirs.get(s)!;
    await s.close();
    const r = await FileStorage.open(dir, { preallocateBytes: 4096 });
    dirs.set(r, dir);
    return r;
  },
});

function ents(from: number, to: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i <= to; i++) out.push({ term, index: i, type: EntryType.Normal, data: Buffer.from(`entry-${i}`) });
  return out;
}

describe('FileStorage faults at start-up', () => {
  it('cuts a torn last record (a crash mid-write) and keeps everything before it', async () => {
    const dir = join(root, 'torn');
    const s = await FileStorage.open(dir, { preallocateBytes: 1024 });
    await s.save({ entries: ents(1, 5, 1), hardState: { term: 1, vote: 1, commit: 5 } });
    const good = s.walBytes;
    await s.save({ entries: ents(6, 8, 1) });
    const end = s.walBytes;
    await s.close();
    // The last record only partly reached the disk: its tail is still zeros.
    const wal = join(dir, 'wal');
    const buf = readFileSync(wal);
    buf.fill(0, end - 7, end);
    writeFileSync(wal, buf);
    const r = await FileStorage.open(dir, { preallocateBytes: 1024 });
    expect(r.truncatedBytes).toBeGreaterThan(0);
    expect(r.truncatedBytes).toBeLessThanOrEqual(end - good);
    expect(r.lastIndex()).toBe(5);
    await r.save({ entries: ents(6, 6, 2) });
    await r.close();
    const again = await FileStorage.open(dir, { preallocateBytes: 1024 });
    expect(again.truncatedBytes).toBe(0);
    expect(again.lastIndex()).toBe(6);
    expect(again.term(6)).toBe(2);
    await again.close();
  });

  it('grows the WAL in preallocated steps and finds the end of the log in the zeros', async () => {
    const dir = join(root, 'prealloc');
    const s = await FileStorage.open(dir, { preallocateBytes: 2048 });
    for (let i = 0; i < 30; i++) await s.save({ entries: ents(i * 10 + 1, i * 10 + 10, 1), hardState: { term: 1, vote: 0, commit: i * 10 + 10 } });
    expect(statSync(join(dir, 'wal')).size).toBeGreaterThan(s.walBytes);
    await s.close();
    const r = await FileStorage.open(dir, { preallocateBytes: 2048 });
    expect(r.lastIndex()).toBe(300);
    expect(r.truncatedBytes).toBe(0);
    await r.close();
  });

  it('refuses to open when a record in the middle is corrupt', async () => {
    const dir = join(root, 'corrupt');
    const s = await FileStorage.open(dir);
    await s.save({ entries: ents(1, 5, 1) });
    await s.save({ entries: ents(6, 8, 1) });
    await s.close();
    const wal = join(dir, 'wal');
    const buf = readFileSync(wal);
    buf[12] ^= 0xff; // inside the first record's payload
    writeFileSync(wal, buf);
    await expect(FileStorage.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
  });

  it('refuses a corrupt snapshot file', async () => {
    const dir = join(root, 'badsnap');
    const s = await FileStorage.open(dir);
    await s.save({ entries: ents(1, 5, 1), hardState: { term: 1, vote: 0, commit: 5 } });
    await s.createSnapshot(4, { voters: [1], learners: [] }, Buffer.from('snapshot-data'));
    await s.close();
    appendFileSync(join(dir, 'snapshot'), 'x');
    await expect(FileStorage.open(dir)).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
  });

  it('refuses a second open of the same directory', async () => {
    const dir = join(root, 'locked');
    const s = await FileStorage.open(dir);
    await expect(FileStorage.open(dir)).rejects.toMatchObject({ code: 'LOG_DIR_LOCKED' });
    await s.close();
    const r = await FileStorage.open(dir);
    await r.close();
  });

  it('keeps the WAL bounded: compaction rewrites it', async () => {
    const dir = join(root, 'rewrite');
    const s = await FileStorage.open(dir);
    for (let i = 0; i < 20; i++) await s.save({ entries: ents(i * 50 + 1, i * 50 + 50, 1), hardState: { term: 1, vote: 0, commit: i * 50 + 50 } });
    const before = s.walBytes;
    await s.createSnapshot(990, { voters: [1], learners: [] }, Buffer.from('s'), 5);
    expect(s.walBytes).toBeLessThan(before / 20);
    await s.close();
    const r = await FileStorage.open(dir);
    expect(r.firstIndex()).toBe(986);
    expect(r.lastIndex()).toBe(1000);
    await r.close();
  });
});
