/**
 * The log's idempotent-producer state: leader checks before append,
 * follower appends recording it, and the state surviving close, crash
 * (copy of the files of an open log) and truncation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeBatchSync } from '@mq/protocol/batch';
import { batchOffsets, logFixture, tempDir, values } from '../test/helpers.js';
import type { Log } from './log.js';
import type { LogOptions } from './options.js';
import { SNAPSHOT_SUFFIX } from './producer-snapshots.js';

const fx = logFixture();
let dir: string;
beforeEach(() => {
  dir = fx.dir;
});
const openTracked = (at = dir, options: LogOptions = {}, clock?: () => number): Promise<Log> => fx.open(options, clock ? { clock } : {}, at);
const closeTracked = (log: Log): Promise<void> => fx.close(log);

/** A batch of `count` records from producer `pid` starting at sequence `seq`. */
function idem(pid: number, seq: number, count = 1, epoch = 0, timestamp = Date.now()): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ value: `p${pid}e${epoch}s${seq + i}`, timestamp }));
  return encodeBatchSync(records, { producerId: pid, producerEpoch: epoch, baseSequence: seq });
}

/** What a crash leaves: the files of an open log as they are now (no close, no snapshot at close). */
function crashCopy(): string {
  const { dir: copy, cleanup: c } = tempDir('mq-log-crash-');
  fx.onCleanup(c);
  for (const f of fs.readdirSync(dir)) if (f !== '.lock') fs.copyFileSync(path.join(dir, f), path.join(copy, f));
  return copy;
}

function snapshots(at: string): string[] {
  return fs.readdirSync(at).filter((f) => f.endsWith(SNAPSHOT_SUFFIX)).sort();
}

describe('leader checks', () => {
  test('the same batch twice is written once and answers the original offsets', async () => {
    const log = await openTracked();
    await log.append(encodeBatchSync([{ value: 'plain' }]));
    const first = await log.append(idem(1, 0, 3));
    const again = await log.append(idem(1, 0, 3));
    expect(first).toMatchObject({ baseOffset: 1, lastOffset: 3 });
    expect(again).toMatchObject({ baseOffset: 1, lastOffset: 3, duplicate: true, bytes: 0 });
    expect(log.logEndOffset).toBe(4);
    expect(values((await log.read(0, 1 << 20)).records).map((v) => v.value)).toEqual(['plain', 'p1e0s0', 'p1e0s1', 'p1e0s2']);
    expect(log.producer(1)).toMatchObject({ epoch: 0, lastSequence: 2, nextSequence: 3, lastOffset: 3 });
  });

  test('out of order, old epoch and unknown producer are refused and write nothing', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0, 2, 1));
    await expect(log.append(idem(1, 3, 1, 1))).rejects.toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
    await expect(log.append(idem(1, 2, 1, 0))).rejects.toMatchObject({ code: 'INVALID_PRODUCER_EPOCH' });
    await expect(log.append(idem(2, 5))).rejects.toMatchObject({ code: 'UNKNOWN_PRODUCER_ID' });
    expect(log.logEndOffset).toBe(2);
    await log.append(idem(1, 2, 1, 1));
    expect(log.logEndOffset).toBe(3);
  });

  test('several batches in one append are checked in order; repeated ones are left out', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0, 2));
    // A retry of the first batch that gained a new one after it.
    const r = await log.append(Buffer.concat([idem(1, 0, 2), idem(1, 2, 2)]));
    expect(r.baseOffset).toBe(0);
    expect(r.lastOffset).toBe(3);
    expect(batchOffsets((await log.read(0, 1 << 20)).records)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    await expect(log.append(Buffer.concat([idem(1, 4), idem(1, 6)]))).rejects.toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
    expect(log.logEndOffset).toBe(4);
  });

  test('regression (issue 12): a retry that gained batches after another producer wrote answers each batch at the offsets it holds', async () => {
    const log = await openTracked();
    const b1 = encodeBatchSync([{ value: 'a' }], { producerId: 4242, producerEpoch: 0, baseSequence: 0 });
    expect(await log.append(b1)).toMatchObject({ baseOffset: 0, lastOffset: 0 });
    expect(await log.append(encodeBatchSync([{ value: 'other-1' }, { value: 'other-2' }]))).toMatchObject({ baseOffset: 1, lastOffset: 2 });
    const b2 = encodeBatchSync([{ value: 'b' }, { value: 'c' }], { producerId: 4242, producerEpoch: 0, baseSequence: 1 });
    const retry = await log.append(Buffer.concat([b1, b2]));
    // B1 answers its original offset 0, B2 the offsets it was written at (3-4), not 1-2 (another producer's records).
    expect(retry).toMatchObject({ baseOffset: 0, lastOffset: 4, batchBaseOffsets: [0, 3] });
    expect(values((await log.read(0, 1 << 20)).records)).toEqual([
      { offset: 0, value: 'a' },
      { offset: 1, value: 'other-1' },
      { offset: 2, value: 'other-2' },
      { offset: 3, value: 'b' },
      { offset: 4, value: 'c' },
    ]);
    // The same request once more: every batch is a duplicate, each answers its own original offsets.
    expect(await log.append(Buffer.concat([b1, b2]))).toMatchObject({ baseOffset: 0, lastOffset: 4, duplicate: true, batchBaseOffsets: [0, 3] });
    expect(log.logEndOffset).toBe(5);
  });

  test('batches that lie back to back answer one base offset and no per-batch list', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0, 2));
    expect((await log.append(Buffer.concat([idem(1, 0, 2), idem(1, 2, 2)]))).batchBaseOffsets).toBeUndefined();
    expect((await log.append(Buffer.concat([idem(1, 0, 2), idem(1, 2, 2)]))).batchBaseOffsets).toBeUndefined();
    expect((await log.append(Buffer.concat([idem(1, 4), idem(1, 5)]))).batchBaseOffsets).toBeUndefined();
  });

  test('concurrent appends of the same batch write it once', async () => {
    const log = await openTracked(dir, { flush: { policy: 'always' } });
    const results = await Promise.all([log.append(idem(1, 0, 2)), log.append(idem(1, 0, 2)), log.append(idem(1, 2)), log.append(idem(1, 2))]);
    expect(results.map((r) => r.baseOffset)).toEqual([0, 0, 2, 2]);
    expect(log.logEndOffset).toBe(3);
  });

  test('follower appends record the state without checking it', async () => {
    const log = await openTracked();
    const b = idem(4, 7, 2); // not starting at 0: a follower copies what its leader accepted
    b.writeUInt32BE(0, 0);
    b.writeUInt32BE(10, 4); // base offset 10
    await log.truncateFullyAndStartAt(10);
    await log.append(b, { assignOffsets: false });
    expect(log.producer(4)).toMatchObject({ nextSequence: 9, lastOffset: 11 });
    // As leader now, a retry of that batch is a duplicate.
    expect(await log.append(idem(4, 7, 2))).toMatchObject({ baseOffset: 10, duplicate: true });
  });
});

describe('the state survives', () => {
  test('a clean close and reopen (snapshot at close)', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0, 2));
    await log.append(idem(2, 0));
    await closeTracked(log);
    expect(snapshots(dir)).toEqual(['00000000000000000003.snapshot']);
    const back = await openTracked();
    expect(back.producer(1)).toMatchObject({ nextSequence: 2, lastOffset: 1 });
    expect(await back.append(idem(1, 0, 2))).toMatchObject({ baseOffset: 0, duplicate: true });
    await expect(back.append(idem(2, 2))).rejects.toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
  });

  test('a crash: rebuilt from the snapshot of the last roll plus the headers after it', async () => {
    const log = await openTracked(dir, { segmentBytes: 1024 });
    let seq = 0;
    for (let i = 0; i < 30; i++) {
      await log.append(idem(1, seq, 3));
      seq += 3;
      await log.append(encodeBatchSync([{ value: 'x'.repeat(50) }]));
    }
    await log.flush();
    expect(log.segmentCount).toBeGreaterThan(3);
    expect(snapshots(dir).length).toBeGreaterThan(2);
    const copy = crashCopy();
    const back = await openTracked(copy, { segmentBytes: 1024 });
    expect(back.recovery.clean).toBe(false);
    expect(back.producer(1)).toEqual(log.producer(1));
    expect(await back.append(idem(1, seq - 3, 3))).toMatchObject({ duplicate: true });
    expect(await back.append(idem(1, seq, 1))).toMatchObject({ baseOffset: back.logEndOffset - 1 });
  });

  test('a crash without any snapshot (never rolled): rebuilt from the headers', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0, 2));
    await log.append(idem(1, 2, 2));
    await log.flush();
    expect(snapshots(dir)).toEqual([]);
    const back = await openTracked(crashCopy());
    expect(back.producer(1)).toMatchObject({ nextSequence: 4, batches: 2 });
  });

  test('a checkpoint writes a snapshot every producerSnapshotIntervalBytes, keeping only the latest such one', async () => {
    const log = await openTracked(dir, { producerSnapshotIntervalBytes: 4096 });
    let seq = 0;
    const appendKiB = async (kib: number) => {
      for (let i = 0; i < kib; i++) {
        await log.append(encodeBatchSync([{ value: 'y'.repeat(1000) }], { producerId: 1, producerEpoch: 0, baseSequence: seq++ }));
      }
    };
    await appendKiB(2);
    await log.flush();
    expect(snapshots(dir)).toEqual([]); // under the interval
    await appendKiB(3);
    await log.flush();
    expect(snapshots(dir)).toEqual(['00000000000000000005.snapshot']);
    await appendKiB(5);
    await log.flush();
    expect(snapshots(dir)).toEqual(['00000000000000000010.snapshot']);
    await appendKiB(1);
    await log.flush();
    // A crash: the state comes from the periodic snapshot plus one batch header.
    const back = await openTracked(crashCopy());
    expect(back.producer(1)).toEqual(log.producer(1));
    expect(back.producer(1)).toMatchObject({ nextSequence: 11 });
  });

  test('a damaged snapshot is skipped for an earlier one', async () => {
    const log = await openTracked(dir, { segmentBytes: 1024 });
    let seq = 0;
    while (log.segmentCount < 4) {
      await log.append(idem(1, seq, 4));
      seq += 4;
    }
    await closeTracked(log);
    const snaps = snapshots(dir);
    fs.writeFileSync(path.join(dir, snaps.at(-1)!), '{"version":1,"off');
    const back = await openTracked(dir, { segmentBytes: 1024 });
    expect(back.producer(1)).toMatchObject({ nextSequence: seq });
  });
});

describe('truncation', () => {
  test('truncateTo rolls the state back to what the remaining batches say', async () => {
    const log = await openTracked(dir, { segmentBytes: 1024 });
    const ends: number[] = [];
    let seq = 0;
    for (let i = 0; i < 40; i++) {
      await log.append(idem(1, seq, 2));
      seq += 2;
      ends.push(log.logEndOffset);
    }
    expect(log.segmentCount).toBeGreaterThan(3);
    // Back to after the 10th batch: the 11th is the next one again, the later ones unknown.
    await log.truncateTo(ends[9]!);
    expect(log.producer(1)).toMatchObject({ nextSequence: 20, lastOffset: ends[9]! - 1, batches: 5 });
    for (const s of snapshots(dir)) expect(Number(s.slice(0, 20))).toBeLessThanOrEqual(ends[9]!);
    await expect(log.append(idem(1, 30, 2))).rejects.toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
    const r = await log.append(idem(1, 20, 2));
    expect(r.baseOffset).toBe(ends[9]!);
    expect(r.duplicate).toBeUndefined();
    // And after a reopen the same.
    await closeTracked(log);
    const back = await openTracked(dir, { segmentBytes: 1024 });
    expect(back.producer(1)).toMatchObject({ nextSequence: 22 });
  });

  test('truncating away every batch of a producer forgets it', async () => {
    const log = await openTracked();
    await log.append(encodeBatchSync([{ value: 'a' }]));
    await log.append(idem(1, 0));
    await log.truncateTo(1);
    expect(log.producer(1)).toBeUndefined();
    expect(await log.append(idem(1, 0))).toMatchObject({ baseOffset: 1 });
  });

  test('truncateFullyAndStartAt clears the state and its snapshots', async () => {
    const log = await openTracked();
    await log.append(idem(1, 0));
    await closeTracked(log);
    const again = await openTracked();
    await again.truncateFullyAndStartAt(100);
    expect(again.producer(1)).toBeUndefined();
    expect(snapshots(dir)).toEqual([]);
  });
});

test('expiry forgets producers idle past producerIdExpirationMs', async () => {
  let now = 10_000;
  const log = await openTracked(dir, { producerIdExpirationMs: 5_000 }, () => now);
  await log.append(idem(1, 0, 1, 0, 10_000));
  expect(log.expireProducers()).toBe(0);
  now = 15_001;
  expect(log.expireProducers()).toBe(1);
  expect(log.producerCount).toBe(0);
  await expect(log.append(idem(1, 1))).rejects.toMatchObject({ code: 'UNKNOWN_PRODUCER_ID' });
});
