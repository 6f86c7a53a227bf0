/**
 * Recovery after an unclean stop: torn writes, flipped bits, missing and
 * damaged indexes and checkpoints. Each test writes a log, closes it, then
 * damages the files and removes the clean-shutdown marker, as a crash would.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { iterateBatches } from '@mq/protocol/batch';
import { openLog, type Log } from '../src/log.js';
import type { LogOptions } from '../src/options.js';
import { batch, segmentFiles, tempDir, values } from './helpers.js';

const OPTS: LogOptions = { segmentBytes: 4096, indexIntervalBytes: 200, checkpointIntervalMs: 0 };

let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

/** Writes `n` single-record batches; returns the byte position where each batch starts in its segment. */
async function writeLog(n: number, options: LogOptions = OPTS): Promise<void> {
  const log = await openLog(dir, options);
  for (let i = 0; i < n; i++) await log.append(batch(`r${i}`, 1, { valueBytes: i % 7 * 10 }));
  await log.close();
}

function crash(): void {
  fs.rmSync(path.join(dir, '.clean-shutdown'), { force: true });
}

/** Forgets every checkpoint, as after a crash before the first flush. */
function forgetCheckpoints(): void {
  fs.rmSync(path.join(dir, 'recovery-point-checkpoint'), { force: true });
}

async function readAll(log: Log): Promise<string[]> {
  const out: string[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 1 << 16);
    if (r.records.length === 0) throw new Error(`read(${next}) returned nothing below the log end ${log.logEndOffset}`);
    out.push(...values(r.records).map((v) => v.value));
    next = r.nextOffset;
  }
  return out;
}

function lastSegment(): string {
  const files = segmentFiles(dir);
  return path.join(dir, files[files.length - 1]!);
}

function batchStarts(file: string): number[] {
  const buf = fs.readFileSync(file);
  return [...iterateBatches(buf)].map((s) => s.position);
}

test('a torn last batch is cut off and reported; the log continues after it', async () => {
  await writeLog(30);
  crash();
  forgetCheckpoints();
  const file = lastSegment();
  const size = fs.statSync(file).size;
  fs.truncateSync(file, size - 5);
  const log = await openLog(dir, OPTS);
  try {
    expect(log.recovery.clean).toBe(false);
    expect(log.recovery.truncated).toMatchObject({ segment: path.basename(file), reason: expect.stringMatching(/torn/) });
    expect(log.logEndOffset).toBe(29);
    expect(await readAll(log)).toEqual(Array.from({ length: 29 }, (_, i) => `r${i}:0`));
    expect((await log.append(batch('after'))).baseOffset).toBe(29);
  } finally {
    await log.close();
  }
});

test('property: a segment cut at any byte recovers to the last whole batch before the cut', async () => {
  await writeLog(20, { ...OPTS, segmentBytes: 1 << 20 });
  const file = lastSegment();
  const pristine = fs.readFileSync(file);
  const starts = [...batchStarts(file), pristine.length];
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: pristine.length - 1 }), async (cut) => {
      fs.writeFileSync(file, pristine.subarray(0, cut));
      crash();
      forgetCheckpoints();
      const log = await openLog(dir, { ...OPTS, segmentBytes: 1 << 20 });
      try {
        const whole = starts.filter((s) => s <= cut).length - 1; // batches wholly before the cut
        expect(log.logEndOffset).toBe(whole);
        expect(await readAll(log)).toEqual(Array.from({ length: whole }, (_, i) => `r${i}:0`));
        if (cut !== starts[whole]) expect(log.recovery.truncated?.position).toBe(starts[whole]);
        else expect(log.recovery.truncated).toBeNull();
      } finally {
        await log.close();
      }
    }),
    { numRuns: 25, seed: 42 },
  );
});

test('property: a flipped bit is caught by the CRC or header checks; recovery keeps only the batches before it', async () => {
  await writeLog(20, { ...OPTS, segmentBytes: 1 << 20 });
  const file = lastSegment();
  const pristine = fs.readFileSync(file);
  const starts = batchStarts(file);
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: pristine.length * 8 - 1 }), async (bit) => {
      const damaged = Buffer.from(pristine);
      damaged[bit >> 3]! ^= 1 << (bit & 7);
      fs.writeFileSync(file, damaged);
      crash();
      forgetCheckpoints();
      const log = await openLog(dir, { ...OPTS, segmentBytes: 1 << 20 });
      try {
        const hit = starts.filter((s) => s <= bit >> 3).length - 1; // batch holding the flipped byte
        const rel = (bit >> 3) - starts[hit]!;
        // Bytes 0..7 (base offset) and 12..15 (leader epoch) are outside the CRC by design;
        // a flipped base offset breaks offset order unless it only grows; everything else must be caught.
        const got = await readAll(log);
        if (rel >= 16 || (rel >= 8 && rel < 12)) {
          expect(log.logEndOffset).toBe(hit);
          expect(got).toEqual(Array.from({ length: hit }, (_, i) => `r${i}:0`));
          expect(log.recovery.truncated?.position).toBe(starts[hit]);
        } else {
          // Never a silently wrong read: what is returned is a prefix of what was written.
          expect(got).toEqual(Array.from({ length: got.length }, (_, i) => `r${i}:0`));
        }
      } finally {
        await log.close();
      }
    }),
    { numRuns: 30, seed: 7 },
  );
});

test('only the tail after the recovery point is scanned', async () => {
  const log = await openLog(dir, { ...OPTS, segmentBytes: 1 << 20 });
  for (let i = 0; i < 50; i++) await log.append(batch(`r${i}`));
  await log.flush();
  const flushedSize = fs.statSync(lastSegment()).size;
  for (let i = 50; i < 60; i++) await log.append(batch(`r${i}`));
  // Simulate a crash: drop the handle without closing (the lock file stays, from our own live pid).
  await (log as unknown as { abandon(): Promise<void> }).abandon();
  const reopened = await openLog(dir, { ...OPTS, segmentBytes: 1 << 20 });
  try {
    expect(reopened.recovery.clean).toBe(false);
    expect(reopened.recovery.recoveredFrom).toBe(50);
    expect(reopened.recovery.scannedBatches).toBe(10);
    expect(reopened.recovery.scannedBytes).toBe(fs.statSync(lastSegment()).size - flushedSize);
    expect(reopened.logEndOffset).toBe(60);
    expect((await readAll(reopened)).length).toBe(60);
  } finally {
    await reopened.close();
  }
});

test('missing and damaged index files are rebuilt and reads still find every offset', async () => {
  await writeLog(80);
  const idx = segmentFiles(dir, '.index');
  expect(idx.length).toBeGreaterThan(2);
  fs.unlinkSync(path.join(dir, idx[0]!));
  fs.writeFileSync(path.join(dir, idx[1]!), Buffer.from('garbage!garbage!xx'));
  fs.writeFileSync(path.join(dir, segmentFiles(dir, '.timeindex')[1]!), Buffer.alloc(7, 0xff));
  const log = await openLog(dir, OPTS);
  try {
    expect(log.recovery.rebuiltIndexes).toEqual(expect.arrayContaining([idx[0], idx[1]]));
    for (let off = 0; off < 80; off += 7) {
      expect(values((await log.read(off, 1)).records)[0]!.value).toBe(`r${off}:0`);
    }
    expect(await log.offsetForTimestamp(1_000_000)).toEqual({ offset: 0, timestamp: 1_000_000 });
  } finally {
    await log.close();
  }
  expect(fs.statSync(path.join(dir, idx[1]!)).size % 8).toBe(0);
});

test('unreadable checkpoints are reported and recovery falls back to a full verify', async () => {
  await writeLog(40);
  crash();
  fs.writeFileSync(path.join(dir, 'recovery-point-checkpoint'), '0\n12 x');
  fs.writeFileSync(path.join(dir, 'leader-epoch-checkpoint'), 'junk');
  const log = await openLog(dir, OPTS);
  try {
    expect(log.recovery.badCheckpoints).toEqual(expect.arrayContaining(['recovery-point-checkpoint', 'leader-epoch-checkpoint']));
    expect(log.recovery.recoveredFrom).toBe(0);
    expect(log.logEndOffset).toBe(40);
    expect((await readAll(log)).length).toBe(40);
  } finally {
    await log.close();
  }
});

test('the leader epoch cache is rebuilt from batch headers when its checkpoint is lost', async () => {
  const log = await openLog(dir, OPTS);
  for (let i = 0; i < 30; i++) await log.append(batch(`r${i}`), { leaderEpoch: i < 10 ? 2 : 7 });
  await log.close();
  fs.unlinkSync(path.join(dir, 'leader-epoch-checkpoint'));
  fs.writeFileSync(path.join(dir, 'leader-epoch-checkpoint'), '0\n5\n');
  const again = await openLog(dir, OPTS);
  try {
    expect(again.leaderEpochs.entries).toEqual([
      { epoch: 2, startOffset: 0 },
      { epoch: 7, startOffset: 10 },
    ]);
  } finally {
    await again.close();
  }
});

test('a corrupt middle segment cuts the log there and drops the segments after it', async () => {
  await writeLog(80);
  crash();
  forgetCheckpoints();
  const files = segmentFiles(dir);
  const victim = path.join(dir, files[1]!);
  const buf = fs.readFileSync(victim);
  buf[buf.length - 3]! ^= 0x55;
  fs.writeFileSync(victim, buf);
  const log = await openLog(dir, OPTS);
  try {
    expect(log.recovery.truncated?.segment).toBe(files[1]);
    expect(log.recovery.deletedSegments).toEqual(files.slice(2));
    expect(segmentFiles(dir)).toEqual(files.slice(0, 2));
    const got = await readAll(log);
    expect(got).toEqual(Array.from({ length: log.logEndOffset }, (_, i) => `r${i}:0`));
  } finally {
    await log.close();
  }
});

test('damage below the recovery point is found when its index is rebuilt, and recovery verifies from there', async () => {
  await writeLog(80);
  crash(); // the recovery point (written at close) is at the end: every segment is "trusted"
  const files = segmentFiles(dir);
  const victim = path.join(dir, files[1]!);
  fs.truncateSync(victim, fs.statSync(victim).size - 10);
  fs.unlinkSync(victim.replace(/\.log$/, '.index'));
  const log = await openLog(dir, OPTS);
  try {
    expect(log.recovery.clean).toBe(false);
    expect(log.recovery.truncated?.segment).toBe(files[1]);
    expect(segmentFiles(dir)).toEqual(files.slice(0, 2));
    expect(await readAll(log)).toEqual(Array.from({ length: log.logEndOffset }, (_, i) => `r${i}:0`));
  } finally {
    await log.close();
  }
});

test('a crash in the middle of emptying the log (truncation below the log start) is finished at the next open', async () => {
  await writeLog(30);
  crash();
  // As if truncateTo(offset < logStartOffset) had written its intent and then died.
  fs.writeFileSync(path.join(dir, '.restart-at'), '5\n');
  const log = await openLog(dir, OPTS);
  try {
    expect(log.logStartOffset).toBe(5);
    expect(log.logEndOffset).toBe(5);
    expect(log.leaderEpochs.entries).toEqual([]);
    expect(segmentFiles(dir)).toEqual(['00000000000000000005.log']);
    expect((await log.append(batch('again'))).baseOffset).toBe(5);
  } finally {
    await log.close();
  }
  expect(fs.existsSync(path.join(dir, '.restart-at'))).toBe(false);
});
