import * as fs from 'node:fs';
import * as path from 'node:path';
import { ATTR_LOG_APPEND_TIME, encodeBatchSync, iterateBatches, readBatchHeader, validateBatch } from '@mq/protocol/batch';
import { isMqError } from '@mq/protocol/errors';
import { batch, batchOffsets, faultyFs, logFixture, segmentFiles, tempDir, values, type FaultyFs } from '../test/helpers.js';
import { IndexCache } from './index-cache.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, openLog, type Log } from './log.js';
import type { LogOptions } from './options.js';

const fx = logFixture();
let dir: string;
beforeEach(() => {
  dir = fx.dir;
});
const openTracked = (options: LogOptions = {}, components = {}): Promise<Log> => fx.open(options, components);
const closeTracked = (log: Log): Promise<void> => fx.close(log);

async function expectCode(p: Promise<unknown>, code: string): Promise<void> {
  await expect(p).rejects.toMatchObject({ code });
}

describe('append and read', () => {
  test('assigns contiguous offsets by patching the header and reads whole batches back', async () => {
    const log = await openTracked();
    const a = await log.append(batch('a', 3));
    const b = await log.append(batch('b', 2));
    expect(a).toMatchObject({ baseOffset: 0, lastOffset: 2, batches: 1, logAppendTime: -1 });
    expect(b).toMatchObject({ baseOffset: 3, lastOffset: 4 });
    expect(log.logEndOffset).toBe(5);
    const r = await log.read(0, 1 << 20);
    expect(values(r.records).map((v) => v.value)).toEqual(['a:0', 'a:1', 'a:2', 'b:0', 'b:1']);
    expect(values(r.records).map((v) => v.offset)).toEqual([0, 1, 2, 3, 4]);
    expect(r.nextOffset).toBe(5);
    // The stored batches still pass their CRC: base offset is outside it.
    for (const [base] of batchOffsets(r.records)) expect(base).toBeGreaterThanOrEqual(0);
  });

  test('several concatenated batches in one append', async () => {
    const log = await openTracked();
    const res = await log.append(Buffer.concat([batch('a', 2), batch('b', 1), batch('c', 4)]));
    expect(res).toMatchObject({ baseOffset: 0, lastOffset: 6, batches: 3 });
    expect(batchOffsets((await log.read(0, 1 << 20)).records)).toEqual([
      [0, 1],
      [2, 2],
      [3, 6],
    ]);
  });

  test('read from the middle of a batch returns that whole batch; maxBytes still gives one batch', async () => {
    const log = await openTracked({ indexIntervalBytes: 100 });
    for (let i = 0; i < 50; i++) await log.append(batch(`b${i}`, 4, { valueBytes: 50 }));
    const r = await log.read(101, 1);
    expect(batchOffsets(r.records)).toEqual([[100, 103]]);
    expect(r.nextOffset).toBe(104);
    const r2 = await log.read(101, 1000);
    const got = batchOffsets(r2.records);
    expect(got[0]).toEqual([100, 103]);
    expect(r2.records.length).toBeLessThanOrEqual(1000);
    expect(got.length).toBeGreaterThan(1);
  });

  test('maxOffset (high watermark) bounds the batches returned', async () => {
    const log = await openTracked();
    for (let i = 0; i < 5; i++) await log.append(batch(`b${i}`, 2));
    expect(batchOffsets((await log.read(0, 1 << 20, { maxOffset: 6 })).records)).toEqual([
      [0, 1],
      [2, 3],
      [4, 5],
    ]);
    // The batch containing offset 6 ends at 7 >= 7: not yet visible.
    expect((await log.read(6, 1 << 20, { maxOffset: 7 })).records.length).toBe(0);
    expect((await log.read(6, 1 << 20, { maxOffset: 7 })).nextOffset).toBe(6);
  });

  test('reading at the log end gives nothing; outside the log throws OFFSET_OUT_OF_RANGE', async () => {
    const log = await openTracked();
    await log.append(batch('a', 2));
    const r = await log.read(2, 100);
    expect(r).toEqual({ records: Buffer.alloc(0), nextOffset: 2 });
    await expectCode(log.read(3, 100), 'OFFSET_OUT_OF_RANGE');
    await log.deleteRecordsBefore(1);
    await expectCode(log.read(0, 100), 'OFFSET_OUT_OF_RANGE');
    expect(batchOffsets((await log.read(1, 100)).records)).toEqual([[0, 1]]);
    await expectCode(log.read(-1, 100), 'INVALID_ARGUMENT');
  });

  test('rolls segments at segmentBytes and reads across them', async () => {
    const log = await openTracked({ segmentBytes: 2048, indexIntervalBytes: 256 });
    for (let i = 0; i < 60; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 40 }));
    expect(log.segmentCount).toBeGreaterThan(3);
    const files = segmentFiles(dir);
    expect(files[0]).toBe('00000000000000000000.log');
    for (const f of files) expect(fs.statSync(path.join(dir, f)).size).toBeLessThanOrEqual(2048);
    let next = 0;
    const seen: string[] = [];
    while (next < log.logEndOffset) {
      const r = await log.read(next, 300);
      seen.push(...values(r.records).map((v) => v.value));
      next = r.nextOffset;
    }
    expect(seen).toHaveLength(120);
    expect(seen[119]).toBe('b59:1');
  });

  test('rolls at segmentMs on the injected clock', async () => {
    let now = 1_000;
    const log = await openTracked({ segmentMs: 100 }, { clock: () => now });
    await log.append(batch('a'));
    now += 50;
    await log.append(batch('b'));
    expect(log.segmentCount).toBe(1);
    now += 60;
    await log.append(batch('c'));
    expect(log.segmentCount).toBe(2);
  });

  test('a batch over maxBatchBytes is RECORD_TOO_LARGE and nothing is written', async () => {
    const log = await openTracked({ maxBatchBytes: 200 });
    await expectCode(log.append(batch('big', 1, { valueBytes: 500 })), 'RECORD_TOO_LARGE');
    await expectCode(log.append(batch('big', 1, { valueBytes: 500 }), { validate: false }), 'RECORD_TOO_LARGE');
    expect(log.logEndOffset).toBe(0);
    expect(log.size).toBe(0);
  });

  test('a bad CRC, a truncated batch or garbage is CORRUPT_MESSAGE and nothing is written', async () => {
    const log = await openTracked();
    const b = batch('a', 2);
    b[b.length - 1] ^= 0xff;
    await expectCode(log.append(b), 'CORRUPT_MESSAGE');
    await expectCode(log.append(batch('a', 2).subarray(0, 70)), 'CORRUPT_MESSAGE');
    await expectCode(log.append(Buffer.concat([batch('a'), Buffer.from('garbage')])), 'CORRUPT_MESSAGE');
    await expectCode(log.append(Buffer.alloc(0)), 'INVALID_RECORD');
    expect(log.logEndOffset).toBe(0);
    await log.append(batch('ok'));
    expect(values((await log.read(0, 1000)).records)).toEqual([{ offset: 0, value: 'ok:0' }]);
  });

  test('log-append-time batches get the broker time and a fresh CRC', async () => {
    const log = await openTracked({}, { clock: () => 5_000_000 });
    const b = encodeBatchSync([{ value: 'x', timestamp: 1 }], { timestampType: 'log-append' });
    const res = await log.append(b);
    expect(res.logAppendTime).toBe(5_000_000);
    const r = await log.read(0, 1000);
    const h = validateBatch(r.records, 0);
    expect(h.attributes & ATTR_LOG_APPEND_TIME).toBeTruthy();
    expect(h.maxTimestamp).toBe(5_000_000);
  });
});

describe('follower appends', () => {
  test('assignOffsets:false appends the batches exactly and rejects offsets below the log end', async () => {
    const leader = await openTracked();
    await leader.append(batch('a', 3), { leaderEpoch: 4 });
    await leader.append(batch('b', 2), { leaderEpoch: 5 });
    const fetched = (await leader.read(0, 1 << 20)).records;
    const { dir: fdir, cleanup: fclean } = tempDir();
    try {
      const follower = await openLog(fdir);
      const res = await follower.append(Buffer.from(fetched), { assignOffsets: false });
      expect(res).toMatchObject({ baseOffset: 0, lastOffset: 4, batches: 2 });
      expect((await follower.read(0, 1 << 20)).records.equals(fetched)).toBe(true);
      expect(follower.leaderEpochs.entries).toEqual([
        { epoch: 4, startOffset: 0 },
        { epoch: 5, startOffset: 3 },
      ]);
      await expectCode(follower.append(Buffer.from(fetched), { assignOffsets: false }), 'INVALID_RECORD');
      expect(follower.logEndOffset).toBe(5);
      await follower.close();
    } finally {
      fclean();
    }
  });
});

describe('follower offsets out of range', () => {
  test('a follower batch whose offsets go past 2^53 is INVALID_RECORD and nothing is written', async () => {
    const log = await openTracked();
    const b = encodeBatchSync([{ value: 'x' }], { baseOffset: 2 ** 60 });
    await expectCode(log.append(b, { assignOffsets: false, validate: false }), 'INVALID_RECORD');
    expect(log.logEndOffset).toBe(0);
    expect(log.size).toBe(0);
  });
});

describe('leader epochs', () => {
  test('epochs are recorded, persisted, answered by endOffsetFor and truncated with the log', async () => {
    let log = await openTracked();
    await log.append(batch('a', 2), { leaderEpoch: 1 });
    await log.append(batch('b', 2), { leaderEpoch: 1 });
    await log.append(batch('c', 2), { leaderEpoch: 3 });
    expect(readBatchHeader((await log.read(4, 1000)).records).partitionLeaderEpoch).toBe(3);
    expect(log.leaderEpochs.latestEpoch).toBe(3);
    expect(log.leaderEpochs.endOffsetFor(1)).toEqual({ epoch: 1, endOffset: 4 });
    expect(log.leaderEpochs.endOffsetFor(2)).toEqual({ epoch: 1, endOffset: 4 });
    expect(log.leaderEpochs.endOffsetFor(3)).toEqual({ epoch: 3, endOffset: 6 });
    expect(log.leaderEpochs.endOffsetFor(0)).toEqual({ epoch: -1, endOffset: -1 });
    await closeTracked(log);
    expect(fs.readFileSync(path.join(dir, 'leader-epoch-checkpoint'), 'utf8')).toBe('0\n2\n1 0\n3 4\n');
    log = await openTracked();
    expect(log.leaderEpochs.endOffsetFor(3)).toEqual({ epoch: 3, endOffset: 6 });
    await log.truncateTo(4);
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 1, startOffset: 0 }]);
    expect(log.leaderEpochs.endOffsetFor(3)).toEqual({ epoch: 1, endOffset: 4 });
  });
});

describe('truncateTo', () => {
  test('removes whole batches from the offset on, across segments, and appends continue there', async () => {
    const log = await openTracked({ segmentBytes: 1024, indexIntervalBytes: 128 });
    for (let i = 0; i < 40; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30 }));
    const segs = log.segmentCount;
    await log.truncateTo(21);
    expect(log.logEndOffset).toBe(20); // batch [20, 21] goes whole
    expect(log.segmentCount).toBeLessThan(segs);
    await expectCode(log.read(21, 100), 'OFFSET_OUT_OF_RANGE');
    const res = await log.append(batch('new'));
    expect(res.baseOffset).toBe(20);
    const all = values((await log.read(18, 1 << 20)).records);
    expect(all.map((v) => v.value)).toEqual(['b9:0', 'b9:1', 'new:0']);
    await log.truncateTo(1000); // past the end: nothing happens
    expect(log.logEndOffset).toBe(21);
  });

  test('truncation below the log start empties the log and restarts it there', async () => {
    const log = await openTracked({ segmentBytes: 1024 });
    for (let i = 0; i < 20; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30 }));
    await log.deleteRecordsBefore(30);
    await log.truncateTo(10);
    expect(log.logStartOffset).toBe(10);
    expect(log.logEndOffset).toBe(10);
    expect((await log.append(batch('x'))).baseOffset).toBe(10);
    expect(segmentFiles(dir)).toEqual(['00000000000000000010.log']);
  });
});

describe('offsetForTimestamp', () => {
  test('finds the first record at or after a timestamp, across segments', async () => {
    const log = await openTracked({ segmentBytes: 1024, indexIntervalBytes: 64 });
    for (let i = 0; i < 40; i++) {
      await log.append(encodeBatchSync([{ value: `a${i}`, timestamp: 1000 + 10 * i }, { value: `b${i}`, timestamp: 1005 + 10 * i }]));
    }
    expect(await log.offsetForTimestamp(1000)).toEqual({ offset: 0, timestamp: 1000 });
    expect(await log.offsetForTimestamp(1003)).toEqual({ offset: 1, timestamp: 1005 });
    expect(await log.offsetForTimestamp(1006)).toEqual({ offset: 2, timestamp: 1010 });
    expect(await log.offsetForTimestamp(1000 + 10 * 33 + 1)).toEqual({ offset: 67, timestamp: 1335 });
    expect(await log.offsetForTimestamp(999_999)).toBeNull();
    expect(await log.offsetForTimestamp(EARLIEST_TIMESTAMP)).toEqual({ offset: 0, timestamp: -1 });
    expect(await log.offsetForTimestamp(LATEST_TIMESTAMP)).toEqual({ offset: 80, timestamp: -1 });
    await closeTracked(log);
    const again = await openTracked({ segmentBytes: 1024, indexIntervalBytes: 64 });
    expect(await again.offsetForTimestamp(1000 + 10 * 33 + 1)).toEqual({ offset: 67, timestamp: 1335 });
  });
});

describe('retention and deleteRecordsBefore', () => {
  test('size retention deletes whole old segments and moves the log start', async () => {
    const log = await openTracked({ segmentBytes: 1024, retentionBytes: 2500, retentionMs: -1 });
    for (let i = 0; i < 60; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30 }));
    const before = log.size;
    const r = await log.applyRetention();
    expect(r.deletedSegments).toBeGreaterThan(0);
    expect(log.size).toBe(before - r.deletedBytes);
    expect(log.size).toBeLessThanOrEqual(2500 + 1024);
    expect(log.logStartOffset).toBeGreaterThan(0);
    await expectCode(log.read(0, 100), 'OFFSET_OUT_OF_RANGE');
    expect((await log.read(log.logStartOffset, 100)).records.length).toBeGreaterThan(0);
  });

  test('reconfigure: a retention set while the log is open applies at the next check; a bad value changes nothing', async () => {
    const log = await openTracked({ segmentBytes: 1024, retentionBytes: -1, retentionMs: -1 });
    for (let i = 0; i < 60; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30 }));
    expect((await log.applyRetention()).deletedSegments).toBe(0);
    expect(() => log.reconfigure({ retentionBytes: -5 })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));
    expect((await log.applyRetention()).deletedSegments).toBe(0);
    log.reconfigure({ retentionBytes: 2500 });
    const r = await log.applyRetention();
    expect(r.deletedSegments).toBeGreaterThan(0);
    expect(log.size).toBeLessThanOrEqual(2500 + 1024);
    // Options not named keep their values: segments still roll at 1 KiB.
    const segments = log.segmentCount;
    for (let i = 0; i < 20; i++) await log.append(batch(`c${i}`, 2, { valueBytes: 30 }));
    expect(log.segmentCount).toBeGreaterThan(segments);
  });

  test('reconfigure: a larger maxBatchBytes admits a batch the old limit refused', async () => {
    const log = await openTracked({ maxBatchBytes: 200 });
    await expectCode(log.append(batch('big', 1, { valueBytes: 400 })), 'RECORD_TOO_LARGE');
    log.reconfigure({ maxBatchBytes: 4096 });
    expect((await log.append(batch('big', 1, { valueBytes: 400 }))).baseOffset).toBe(0);
  });

  test('time retention deletes expired segments, including a fully expired active one', async () => {
    let now = 10_000;
    const log = await openTracked({ segmentBytes: 1024, retentionMs: 1000 }, { clock: () => now });
    for (let i = 0; i < 30; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30, now: 10_000 + i }));
    now = 10_000 + 500;
    expect((await log.applyRetention()).deletedSegments).toBe(0);
    now = 20_000;
    const r = await log.applyRetention();
    expect(r.deletedSegments).toBeGreaterThan(1);
    expect(log.logStartOffset).toBe(60);
    expect(log.logEndOffset).toBe(60);
    expect(log.size).toBe(0);
    expect((await log.append(batch('after'))).baseOffset).toBe(60);
  });

  test('deleteRecordsBefore moves the start, persists it and rejects offsets past the end', async () => {
    let log = await openTracked({ segmentBytes: 1024 });
    for (let i = 0; i < 30; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 30 }));
    await log.deleteRecordsBefore(25);
    expect(log.logStartOffset).toBe(25);
    await expectCode(log.deleteRecordsBefore(61), 'OFFSET_OUT_OF_RANGE');
    await closeTracked(log);
    log = await openTracked({ segmentBytes: 1024 });
    expect(log.logStartOffset).toBe(25);
    expect(values((await log.read(25, 1 << 20)).records)[0]!.offset).toBe(24); // the batch holding 25
  });
});

describe('flush policies', () => {
  test('always: concurrent appends share fdatasyncs (group commit)', async () => {
    const faulty = faultyFs();
    const log = await openTracked({ flush: { policy: 'always' } }, { fs: faulty });
    const base = faulty.datasyncs;
    const results = await Promise.all(Array.from({ length: 64 }, (_, i) => log.append(batch(`c${i}`))));
    expect(new Set(results.map((r) => r.baseOffset)).size).toBe(64);
    const syncs = faulty.datasyncs - base;
    expect(syncs).toBeGreaterThanOrEqual(1);
    expect(syncs).toBeLessThan(64);
    expect(log.durableOffset).toBe(64);
  });

  test('always: one append resolves only after its fdatasync', async () => {
    const faulty = faultyFs();
    const log = await openTracked({ flush: { policy: 'always' } }, { fs: faulty });
    const base = faulty.datasyncs;
    await log.append(batch('a'));
    expect(faulty.datasyncs).toBeGreaterThan(base);
    expect(log.durableOffset).toBe(1);
  });

  test('os: appends do not sync; flush() does and moves the recovery point', async () => {
    const faulty = faultyFs();
    const log = await openTracked({ flush: { policy: 'os' } }, { fs: faulty });
    const base = faulty.datasyncs;
    for (let i = 0; i < 10; i++) await log.append(batch(`a${i}`));
    expect(faulty.datasyncs).toBe(base);
    expect(log.durableOffset).toBe(0);
    await log.flush();
    expect(log.durableOffset).toBe(10);
    expect(fs.readFileSync(path.join(dir, 'recovery-point-checkpoint'), 'utf8').split('\n')[1]!.split(' ')[0]).toBe('10');
  });

  test('interval: a byte threshold triggers a flush', async () => {
    const log = await openTracked({ flush: { policy: 'interval', intervalMs: 60_000, intervalBytes: 500 } });
    for (let i = 0; i < 10; i++) await log.append(batch(`a${i}`, 1, { valueBytes: 100 }));
    for (let i = 0; i < 50 && log.durableOffset === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(log.durableOffset).toBeGreaterThan(0);
  });

  test('a failed fdatasync takes the log offline with STORAGE_ERROR', async () => {
    const faulty = faultyFs();
    const log = await openTracked({ flush: { policy: 'always' } }, { fs: faulty });
    faulty.failDatasync('EIO');
    await expectCode(log.append(batch('a')), 'STORAGE_ERROR');
    faulty.failDatasync(null);
    await expectCode(log.append(batch('b')), 'STORAGE_ERROR');
  });
});

describe('synchronous append path', () => {
  test('a small append on a free log is written within the call; large ones, fsync-before-ack and rolls take the async path', async () => {
    const faulty = faultyFs({ sync: true });
    const log = await openTracked({ segmentBytes: 4096 }, { fs: faulty });
    await log.append(batch('a'));
    expect(faulty.logWrites).toEqual({ async: 0, sync: 1 });
    await log.append(batch('big', 1, { valueBytes: 300 * 1024 })); // over SYNC_WRITE_MAX_BYTES
    expect(faulty.logWrites.async).toBe(1);
    await log.append(batch('b')); // the active segment is past segmentBytes: this one rolls first
    expect(faulty.logWrites.async).toBe(2);
    const all: string[] = [];
    for (let next = 0; next < log.logEndOffset; ) {
      const r = await log.read(next, 1 << 20);
      all.push(...values(r.records).map((v) => v.value));
      next = r.nextOffset;
    }
    expect(all).toEqual(['a:0', 'big:0', 'b:0']);
    await closeTracked(log);
    const f2 = faultyFs({ sync: true });
    const always = await openTracked({ flush: { policy: 'always' } }, { fs: f2 });
    await always.append(batch('c'));
    expect(f2.logWrites).toEqual({ async: 1, sync: 0 });
  });

  test('appends issued together keep their order when the first takes the async path', async () => {
    const faulty = faultyFs({ sync: true });
    const log = await openTracked({}, { fs: faulty });
    // The big append waits in the mutex for its thread-pool write; the small ones behind it must not overtake it.
    const results = await Promise.all([log.append(batch('big', 3, { valueBytes: 100 * 1024 })), log.append(batch('s1')), log.append(batch('s2', 2))]);
    expect(results.map((r) => [r.baseOffset, r.lastOffset])).toEqual([
      [0, 2],
      [3, 3],
      [4, 5],
    ]);
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['big:0', 'big:1', 'big:2', 's1:0', 's2:0', 's2:1']);
    expect(faulty.logWrites.async).toBeGreaterThanOrEqual(1);
  });

  test('an append while a truncation runs waits for it (no synchronous append past a writer)', async () => {
    const faulty = faultyFs({ sync: true });
    const log = await openTracked({}, { fs: faulty });
    for (const tag of ['a', 'b', 'c']) await log.append(batch(tag));
    const truncation = log.truncateTo(1);
    const appended = log.append(batch('d'));
    await truncation;
    expect((await appended).baseOffset).toBe(1);
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['a:0', 'd:0']);
  });
});

describe('faults', () => {
  /** Appends two records, then a batch whose write fails with ENOSPC: the error is typed and the partial write cut back. */
  async function failAppendWithEnospc(log: Log, faulty: FaultyFs, afterFirstAppend: () => void = () => undefined): Promise<void> {
    await log.append(batch('a', 2));
    afterFirstAppend();
    const sizeBefore = fs.statSync(path.join(dir, '00000000000000000000.log')).size;
    faulty.failNextLogWrite('ENOSPC');
    const err = await log.append(batch('b', 5, { valueBytes: 200 })).catch((e) => e);
    expect(isMqError(err, 'STORAGE_ERROR')).toBe(true);
    expect(err.errno).toBe('ENOSPC');
    expect(fs.statSync(path.join(dir, '00000000000000000000.log')).size).toBe(sizeBefore);
    expect(log.logEndOffset).toBe(2);
  }

  test('ENOSPC mid-append: typed error, the partial write is cut back, the log goes on and reopens clean', async () => {
    const faulty = faultyFs();
    let log = await openTracked({}, { fs: faulty });
    await failAppendWithEnospc(log, faulty);
    await log.append(batch('c'));
    await closeTracked(log);
    fs.unlinkSync(path.join(dir, '.clean-shutdown')); // force a verifying open
    log = await openTracked();
    expect(log.recovery.truncated).toBeNull();
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['a:0', 'a:1', 'c:0']);
  });

  test('ENOSPC in a synchronous append: typed error, the partial write is cut back, the log goes on', async () => {
    const faulty = faultyFs({ sync: true });
    const log = await openTracked({}, { fs: faulty });
    await failAppendWithEnospc(log, faulty, () => expect(faulty.logWrites.sync).toBe(1)); // the fast path ran
    expect((await log.append(batch('c'))).baseOffset).toBe(2);
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['a:0', 'a:1', 'c:0']);
  });

  test('a second open of the same directory is LOG_DIR_LOCKED; after close it opens', async () => {
    const log = await openTracked();
    await expectCode(openLog(dir), 'LOG_DIR_LOCKED');
    await closeTracked(log);
    const again = await openTracked();
    expect(again.logEndOffset).toBe(0);
  });

  test('a lock held by a live process is refused; one left by a dead process is taken over', async () => {
    fs.writeFileSync(path.join(dir, '.lock'), `${process.ppid}\n`);
    await expectCode(openLog(dir), 'LOG_DIR_LOCKED');
    fs.writeFileSync(path.join(dir, '.lock'), '999999999\n');
    const log = await openTracked();
    expect(fs.readFileSync(path.join(dir, '.lock'), 'utf8')).toBe(`${process.pid}\n`);
    await closeTracked(log);
    expect(fs.existsSync(path.join(dir, '.lock'))).toBe(false);
  });

  test('operations on a closed log are LOG_CLOSED', async () => {
    const log = await openTracked();
    await closeTracked(log);
    await expectCode(log.append(batch('a')), 'LOG_CLOSED');
    await expectCode(log.read(0, 10), 'LOG_CLOSED');
    await log.close(); // idempotent
  });

  test('bad options are INVALID_CONFIG', async () => {
    await expectCode(openLog(dir, { segmentBytes: 10 }), 'INVALID_CONFIG');
    await expectCode(openLog(dir, { flush: { policy: 'sometimes' } as never }), 'INVALID_CONFIG');
  });
});

describe('reopen', () => {
  test('after a clean close the log opens without scanning and continues', async () => {
    let log = await openTracked({ segmentBytes: 2048 });
    for (let i = 0; i < 50; i++) await log.append(batch(`b${i}`, 2, { valueBytes: 20 }));
    await closeTracked(log);
    log = await openTracked({ segmentBytes: 2048 });
    expect(log.recovery).toMatchObject({ clean: true, scannedBytes: 0, truncated: null });
    expect(log.logEndOffset).toBe(100);
    expect((await log.append(batch('next'))).baseOffset).toBe(100);
    expect(values((await log.read(98, 1 << 20)).records).map((v) => v.value)).toEqual(['b49:0', 'b49:1', 'next:0']);
  });

  test('one index cache shared by two logs keeps to its budget', async () => {
    const cache = new IndexCache(600);
    const { dir: d2, cleanup: c2 } = tempDir();
    try {
      const a = await openTracked({ segmentBytes: 1024, indexIntervalBytes: 0 }, { indexCache: cache });
      const b = await openLog(d2, { segmentBytes: 1024, indexIntervalBytes: 0, checkpointIntervalMs: 0 }, { indexCache: cache });
      for (let i = 0; i < 60; i++) {
        await a.append(batch(`a${i}`, 1, { valueBytes: 30 }));
        await b.append(batch(`b${i}`, 1, { valueBytes: 30 }));
      }
      for (let k = 0; k < 40; k++) {
        const off = (k * 37) % 60;
        expect(values((await a.read(off, 1)).records)[0]!.value).toBe(`a${off}:0`);
        expect(values((await b.read(off, 1)).records)[0]!.value).toBe(`b${off}:0`);
        expect(cache.bytes).toBeLessThanOrEqual(600 + 300); // the budget, plus the one index just used (~250 bytes)
      }
      expect(cache.size).toBeGreaterThan(0);
      await b.close();
    } finally {
      c2();
    }
  });

  test('indexes stay in a bounded cache: evicted ones are reloaded on demand', async () => {
    const log = await openTracked({ segmentBytes: 1024, indexIntervalBytes: 0, indexCacheBytes: 64 });
    for (let i = 0; i < 100; i++) await log.append(batch(`b${i}`, 1, { valueBytes: 30 }));
    for (const off of [0, 99, 5, 50, 1, 98]) {
      expect(values((await log.read(off, 1)).records)[0]).toEqual({ offset: off, value: `b${off}:0` });
    }
  });
});

describe('truncateTo and the log start', () => {
  test('truncating inside the batch that holds the log start restarts the log at the log start', async () => {
    const { dir: d, cleanup: c } = tempDir();
    try {
      const log = await openLog(d, { checkpointIntervalMs: 0 });
      await log.append(batch('a', 5)); // offsets 0..4
      await log.append(batch('b', 5)); // 5..9
      await log.deleteRecordsBefore(7);
      await log.truncateTo(8);
      expect(log.logStartOffset).toBe(7);
      expect(log.logEndOffset).toBe(7);
      expect((await log.append(batch('c'))).baseOffset).toBe(7);
      await log.close();
    } finally {
      c();
    }
  });
});

describe('truncateFullyAndStartAt', () => {
  test('a follower behind the leader log start restarts past its own log end, and that survives a reopen', async () => {
    const log = await openTracked();
    await log.append(batch('a', 3), { leaderEpoch: 1 }); // 0..2
    await log.truncateFullyAndStartAt(100);
    expect(log.logStartOffset).toBe(100);
    expect(log.logEndOffset).toBe(100);
    expect(log.leaderEpochs.entries).toEqual([]);
    await expectCode(log.read(0, 1024), 'OFFSET_OUT_OF_RANGE');
    const r = await log.append(batch('b', 2, { baseOffset: 100 }), { assignOffsets: false });
    expect(r.baseOffset).toBe(100);
    await closeTracked(log);
    const again = await openTracked();
    expect(again.logStartOffset).toBe(100);
    expect(again.logEndOffset).toBe(102);
  });
});

describe('concurrency', () => {
  test('reads running alongside appends, rolls and truncations only ever see whole, valid batches', async () => {
    const { dir: d, cleanup: c } = tempDir();
    try {
      const log = await openLog(d, { segmentBytes: 4096, indexIntervalBytes: 256, checkpointIntervalMs: 0, flush: { policy: 'always' } });
      let stop = false;
      const writers = Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 60; i++) await log.append(batch(`w${w}-${i}`, 1 + (i % 3), { valueBytes: 40 }));
      });
      const readers = Array.from({ length: 3 }, async () => {
        let reads = 0;
        while (!stop) {
          await new Promise((r) => setImmediate(r)); // reads at the end need no I/O: let the writers' I/O run
          const end = log.logEndOffset;
          const from = Math.floor(Math.random() * (end - log.logStartOffset + 1)) + log.logStartOffset;
          try {
            const r = await log.read(from, 700);
            for (const s of iterateBatches(r.records)) validateBatch(r.records, s.position);
            reads++;
          } catch (err) {
            if (!isMqError(err, 'OFFSET_OUT_OF_RANGE')) throw err; // a truncation may move the end under us
          }
        }
        return reads;
      });
      const truncator = (async () => {
        for (let i = 0; i < 5; i++) {
          await new Promise((r) => setTimeout(r, 20));
          await log.truncateTo(Math.floor(log.logEndOffset * 0.9));
        }
      })();
      await Promise.all([...writers, truncator]);
      stop = true;
      const reads = await Promise.all(readers);
      expect(reads.reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
      // The final log is contiguous and valid.
      let next = 0;
      while (next < log.logEndOffset) {
        const r = await log.read(next, 1 << 20);
        for (const s of iterateBatches(r.records)) {
          validateBatch(r.records, s.position);
          expect(s.header.baseOffset).toBe(next);
          next = s.header.baseOffset + s.header.lastOffsetDelta + 1;
        }
      }
      await log.close();
    } finally {
      c();
    }
  });
});
