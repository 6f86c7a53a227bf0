/**
 * The contract every RaftStorage must meet, as one jest suite that each
 * implementation runs (MemoryStorage, FileStorage, and any other):
 *
 *   import { raftStorageCompliance } from '@mq/consensus/compliance';
 *   raftStorageCompliance('my storage', { create: () => openMine(), reopen: (s) => reopenMine(s) });
 */
import { describe, expect, it, afterEach } from '@jest/globals';
import { isMqError } from '@mq/protocol/errors';
import { EntryType, type Entry } from '../core/types.js';
import type { RaftStorage } from './types.js';

export interface StorageFactory {
  create(): Promise<RaftStorage>;
  /** Closes `s` and opens the same storage again (durable implementations only). */
  reopen?(s: RaftStorage): Promise<RaftStorage>;
  cleanup?(): Promise<void>;
}

function ents(from: number, to: number, term: number): Entry[] {
  const out: Entry[] = [];
  for (let i = from; i <= to; i++) out.push({ term, index: i, type: EntryType.Normal, data: Buffer.from(`e${i}t${term}`) });
  return out;
}

const cs = { voters: [1, 2, 3], learners: [4] };

export function raftStorageCompliance(name: string, factory: StorageFactory): void {
  describe(`RaftStorage compliance: ${name}`, () => {
    const open: RaftStorage[] = [];
    const create = async () => {
      const s = await factory.create();
      open.push(s);
      return s;
    };
    const reopen = async (s: RaftStorage) => {
      const r = await factory.reopen!(s);
      open.push(r);
      return r;
    };
    afterEach(async () => {
      for (const s of open.splice(0)) await s.close().catch(() => undefined);
      await factory.cleanup?.();
    });

    it('starts empty', async () => {
      const s = await create();
      expect(s.firstIndex()).toBe(1);
      expect(s.lastIndex()).toBe(0);
      expect(s.term(0)).toBe(0);
      expect(s.initialState().hardState).toEqual({ term: 0, vote: 0, commit: 0 });
      expect(s.snapshot().meta.index).toBe(0);
    });

    it('appends, reads ranges with a byte cap, answers terms', async () => {
      const s = await create();
      await s.save({ entries: ents(1, 10, 1), hardState: { term: 1, vote: 2, commit: 3 } });
      expect(s.lastIndex()).toBe(10);
      expect(s.term(7)).toBe(1);
      expect(s.entries(3, 6).map((e) => e.index)).toEqual([3, 4, 5]);
      expect(Buffer.from(s.entries(4, 5)[0]!.data).toString()).toBe('e4t1');
      expect(s.entries(1, 11, 1)).toHaveLength(1); // at least one entry even over the cap
      expect(s.initialState().hardState).toEqual({ term: 1, vote: 2, commit: 3 });
      expect(() => s.entries(5, 12)).toThrow();
    });

    it('overwrites a conflicting suffix', async () => {
      const s = await create();
      await s.save({ entries: ents(1, 10, 1) });
      await s.save({ entries: ents(6, 7, 2) });
      expect(s.lastIndex()).toBe(7);
      expect(s.term(5)).toBe(1);
      expect(s.term(6)).toBe(2);
      expect(s.entries(1, 8).map((e) => e.term)).toEqual([1, 1, 1, 1, 1, 2, 2]);
    });

    it('refuses a gap', async () => {
      const s = await create();
      await s.save({ entries: ents(1, 3, 1) });
      await expect(s.save({ entries: ents(5, 6, 1) })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect(s.lastIndex()).toBe(3);
    });

    it('creates a snapshot and compacts, keeping some entries', async () => {
      const s = await create();
      await s.save({ entries: ents(1, 20, 1), hardState: { term: 1, vote: 1, commit: 15 } });
      const snap = await s.createSnapshot(12, cs, Buffer.from('state@12'), 2);
      expect(snap.meta).toEqual({ index: 12, term: 1, confState: cs });
      expect(s.firstIndex()).toBe(11);
      expect(s.term(10)).toBe(1);
      expect(s.lastIndex()).toBe(20);
      expect(s.snapshot().meta.index).toBe(12);
      let err: unknown;
      try {
        s.entries(5, 8);
      } catch (e) {
        err = e;
      }
      expect(isMqError(err, 'LOG_COMPACTED')).toBe(true);
      await expect(s.createSnapshot(10, cs, Buffer.from('old'))).rejects.toMatchObject({ code: 'SNAPSHOT_OUT_OF_DATE' });
      await expect(s.createSnapshot(18, cs, Buffer.from('uncommitted'))).rejects.toBeDefined();
    });

    it('installs a snapshot from the leader, replacing the log', async () => {
      const s = await create();
      await s.save({ entries: ents(1, 5, 1), hardState: { term: 1, vote: 0, commit: 5 } });
      await s.save({ snapshot: { meta: { index: 50, term: 3, confState: cs }, data: Buffer.from('big') }, hardState: { term: 3, vote: 0, commit: 50 } });
      expect(s.firstIndex()).toBe(51);
      expect(s.lastIndex()).toBe(50);
      expect(s.term(50)).toBe(3);
      expect(s.initialState().confState).toEqual(cs);
      await s.save({ entries: ents(51, 52, 3) });
      expect(s.lastIndex()).toBe(52);
      await expect(s.save({ snapshot: { meta: { index: 40, term: 2, confState: cs }, data: Buffer.from('older') } })).rejects.toMatchObject({
        code: 'SNAPSHOT_OUT_OF_DATE',
      });
    });

    it('survives a reopen with log, hard state and snapshot intact', async () => {
      if (!factory.reopen) return;
      let s = await create();
      await s.save({ entries: ents(1, 30, 1), hardState: { term: 1, vote: 3, commit: 25 } });
      await s.save({ entries: ents(28, 32, 2), hardState: { term: 2, vote: 3, commit: 25 } });
      await s.createSnapshot(20, cs, Buffer.from('state@20'), 3);
      await s.save({ entries: ents(33, 35, 2), hardState: { term: 2, vote: 1, commit: 33 } });
      s = await reopen(s);
      expect(s.initialState()).toEqual({ hardState: { term: 2, vote: 1, commit: 33 }, confState: cs });
      expect(s.firstIndex()).toBe(18);
      expect(s.lastIndex()).toBe(35);
      expect(s.entries(26, 30).map((e) => e.term)).toEqual([1, 1, 2, 2]);
      expect(Buffer.from(s.snapshot().data).toString()).toBe('state@20');
      s = await reopen(s);
      expect(s.lastIndex()).toBe(35);
    });
  });
}
