/**
 * Transactions in a partition log: transactional batches open a producer's
 * transaction (bounding the last stable offset), markers close it, aborts go
 * to the aborted-transactions index; both survive a clean close, a crash
 * (copy of an open log's files), a roll and a truncation.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { encodeBatchSync, encodeMarkerBatch } from '@mq/protocol/batch';
import { logFixture, tempDir } from '../test/helpers.js';
import type { Log } from './log.js';

const fx = logFixture();
let dir: string;
beforeEach(() => {
  dir = fx.dir;
});
const open = (at = dir): Promise<Log> => fx.open({}, {}, at);

function txn(pid: number, seq: number, count = 1, epoch = 0): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ value: `p${pid}s${seq + i}` }));
  return encodeBatchSync(records, { producerId: pid, producerEpoch: epoch, baseSequence: seq, transactional: true });
}
const marker = (pid: number, committed: boolean, epoch = 0) => encodeMarkerBatch({ producerId: pid, producerEpoch: epoch, committed, now: Date.now() });

/** The first unstable offset once the HW reached the log end (every marker replicated). */
function stableOnceReplicated(log: Log): number | undefined {
  log.onHighWatermarkUpdated(log.logEndOffset);
  return log.firstUnstableOffset;
}

function crashCopy(): string {
  const { dir: copy, cleanup } = tempDir('mq-log-txn-crash-');
  fx.onCleanup(cleanup);
  for (const f of fs.readdirSync(dir)) if (f !== '.lock') fs.copyFileSync(path.join(dir, f), path.join(copy, f));
  return copy;
}

test('an open transaction bounds the first unstable offset; its marker releases it; aborts are indexed', async () => {
  const log = await open();
  await log.append(encodeBatchSync([{ value: 'plain' }])); // 0
  await log.append(txn(7, 0, 2), { transactional: true }); // 1-2
  await log.append(txn(8, 0, 1), { transactional: true }); // 3
  expect(stableOnceReplicated(log)).toBe(1);
  await log.append(marker(7, false), { coordinator: true }); // 4: abort
  expect(stableOnceReplicated(log)).toBe(3);
  await log.append(marker(8, true), { coordinator: true }); // 5: commit
  expect(stableOnceReplicated(log)).toBeUndefined();
  expect(log.abortedTransactions(0, 6)).toEqual([{ producerId: 7, firstOffset: 1, lastOffset: 4 }]);
  expect(log.abortedTransactions(5, 6)).toEqual([]);
  expect(log.producer(7)).toMatchObject({ txnFirstOffset: -1, nextSequence: 2 });
  // A second transaction of 7 continues its sequence.
  await log.append(txn(7, 2, 1), { transactional: true }); // 6
  expect(stableOnceReplicated(log)).toBe(6);
});

test('the first unstable offset follows transactions that end out of order', async () => {
  const log = await open();
  await log.append(txn(7, 0, 1), { transactional: true }); // 0
  await log.append(txn(8, 0, 1), { transactional: true }); // 1
  await log.append(txn(9, 0, 1), { transactional: true }); // 2
  expect(stableOnceReplicated(log)).toBe(0);
  await log.append(marker(8, true), { coordinator: true }); // 3: a later one ends first
  expect(stableOnceReplicated(log)).toBe(0);
  await log.append(marker(7, false), { coordinator: true }); // 4
  expect(stableOnceReplicated(log)).toBe(2);
  await log.append(txn(8, 1, 1), { transactional: true }); // 5
  expect(stableOnceReplicated(log)).toBe(2);
  await log.append(marker(9, true), { coordinator: true }); // 6
  expect(stableOnceReplicated(log)).toBe(5);
  await log.append(marker(8, true), { coordinator: true }); // 7
  expect(stableOnceReplicated(log)).toBeUndefined();
});

test('producers may not append markers; a marker with an old epoch is refused', async () => {
  const log = await open();
  await log.append(txn(7, 0, 1, 3), { transactional: true });
  await expect(log.append(marker(7, true, 3))).rejects.toMatchObject({ code: 'INVALID_RECORD' });
  // A producer's transactional batch only comes with its produce request's transactional id (AppendOptions.transactional).
  await expect(log.append(txn(7, 1, 1, 3))).rejects.toMatchObject({ code: 'INVALID_RECORD', message: expect.stringContaining('transactional id') });
  await expect(log.append(marker(7, true, 2), { coordinator: true })).rejects.toMatchObject({ code: 'INVALID_PRODUCER_EPOCH' });
  expect(log.logEndOffset).toBe(1);
  expect(stableOnceReplicated(log)).toBe(0);
  // A marker with a bumped epoch (the coordinator fenced the instance) fences the old epoch's data.
  await log.append(marker(7, false, 4), { coordinator: true });
  await expect(log.append(txn(7, 1, 1, 3), { transactional: true })).rejects.toMatchObject({ code: 'INVALID_PRODUCER_EPOCH' });
  await log.append(txn(7, 0, 1, 4), { transactional: true });
  expect(stableOnceReplicated(log)).toBe(2);
});

test('the open transactions and the aborted index survive a clean close, a crash, a roll and a truncation', async () => {
  const log = await open();
  await log.append(txn(1, 0, 2), { transactional: true }); // 0-1
  await log.append(marker(1, false), { coordinator: true }); // 2
  await log.roll();
  await log.append(txn(2, 0, 1), { transactional: true }); // 3
  await log.append(txn(1, 2, 1), { transactional: true }); // 4
  await log.append(marker(1, false), { coordinator: true }); // 5
  const expected = [
    { producerId: 1, firstOffset: 0, lastOffset: 2 },
    { producerId: 1, firstOffset: 4, lastOffset: 5 },
  ];
  const crashed = await open(crashCopy());
  expect(stableOnceReplicated(crashed)).toBe(3);
  expect(crashed.abortedTransactions(0, 100)).toEqual(expected);
  await fx.close(crashed);
  await fx.close(log);
  const back = await open();
  expect(stableOnceReplicated(back)).toBe(3);
  expect(back.abortedTransactions(0, 100)).toEqual(expected);
  await back.truncateTo(5);
  expect(back.abortedTransactions(0, 100)).toEqual([expected[0]]);
  expect(stableOnceReplicated(back)).toBe(3);
  await back.truncateTo(3);
  expect(stableOnceReplicated(back)).toBeUndefined();
});

test('retention and compaction keep markers correct: the aborted index forgets only what is below the log start', async () => {
  const log = await open();
  const keyed = (pid: number, seq: number, key: string) =>
    encodeBatchSync([{ key, value: `${key}@${seq}` }], { producerId: pid, producerEpoch: 0, baseSequence: seq, transactional: true });
  await log.append(keyed(1, 0, 'k'), { transactional: true }); // 0
  await log.append(marker(1, false), { coordinator: true }); // 1
  await log.roll();
  await log.append(keyed(2, 0, 'k'), { transactional: true }); // 2
  await log.append(marker(2, false), { coordinator: true }); // 3
  await log.append(encodeBatchSync([{ key: 'k', value: 'plain' }])); // 4: supersedes k for compaction
  await log.roll();
  await log.append(txn(3, 0, 1), { transactional: true }); // 5, open
  // Compaction leaves transactional and control batches as they are: the index and the open transaction still hold.
  await log.compact();
  expect(log.abortedTransactions(0, 100).map((a) => a.firstOffset)).toEqual([0, 2]);
  expect(stableOnceReplicated(log)).toBe(5);
  // Deleting records below 2 drops the first abort from the index (its marker is gone), not the second.
  await log.deleteRecordsBefore(2);
  expect(log.abortedTransactions(0, 100).map((a) => a.firstOffset)).toEqual([2]);
  expect(stableOnceReplicated(log)).toBe(5);
});

test('a control batch that is not a well-formed marker is refused before anything is written', async () => {
  const log = await open();
  await log.append(txn(7, 0, 1), { transactional: true }); // 0
  // A control batch whose one record's key says control type 7 (neither abort 0 nor commit 1).
  const key = Buffer.from([0, 0, 0, 7]);
  const bad = encodeBatchSync([{ key, value: Buffer.alloc(6) }], { transactional: true, control: true, producerId: 7, producerEpoch: 0, baseSequence: -1 });
  await expect(log.append(bad, { coordinator: true })).rejects.toMatchObject({ code: 'INVALID_RECORD' });
  expect(log.logEndOffset).toBe(1);
  expect(stableOnceReplicated(log)).toBe(0);
  // The log still takes the real marker at the next offset.
  await log.append(marker(7, true), { coordinator: true });
  expect(log.logEndOffset).toBe(2);
  expect(stableOnceReplicated(log)).toBeUndefined();
});

test('regression: an ended transaction stays unstable until the high watermark passes its marker (Kafka holds the LSO there)', async () => {
  const log = await open();
  await log.append(txn(7, 0, 2), { transactional: true }); // 0-1
  await log.append(txn(8, 0, 1), { transactional: true }); // 2
  log.onHighWatermarkUpdated(3);
  expect(log.firstUnstableOffset).toBe(0);
  await log.append(marker(7, true), { coordinator: true }); // 3: appended, not replicated
  // A leader change now could lose the marker and reopen the transaction: read_committed must not pass offset 0.
  expect(log.firstUnstableOffset).toBe(0);
  log.onHighWatermarkUpdated(3); // the HW at the marker, not past it
  expect(log.firstUnstableOffset).toBe(0);
  await log.append(marker(8, false), { coordinator: true }); // 4
  log.onHighWatermarkUpdated(4); // past 7's marker: 8's (first offset 2, marker 4) still holds
  expect(log.firstUnstableOffset).toBe(2);
  // Survives a clean close (the snapshot carries it) and a crash (rebuilt from the markers).
  const crashed = await open(crashCopy());
  expect(crashed.firstUnstableOffset).toBe(0); // rebuilt: held until the HW is given again
  crashed.onHighWatermarkUpdated(4);
  expect(crashed.firstUnstableOffset).toBe(2);
  await fx.close(crashed);
  await log.roll(); // a snapshot at 5 with 8's transaction unreplicated
  await fx.close(log);
  const back = await open();
  back.onHighWatermarkUpdated(4);
  expect(back.firstUnstableOffset).toBe(2);
  back.onHighWatermarkUpdated(5);
  expect(back.firstUnstableOffset).toBeUndefined();
  // A new transaction after that is bounded by its own first offset only.
  await back.append(txn(7, 2, 1), { transactional: true }); // 5
  await back.append(marker(7, true), { coordinator: true }); // 6
  back.onHighWatermarkUpdated(6);
  expect(back.firstUnstableOffset).toBe(5);
  back.onHighWatermarkUpdated(7);
  expect(back.firstUnstableOffset).toBeUndefined();
});
