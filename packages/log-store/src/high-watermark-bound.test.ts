/**
 * Compaction and retention bounded by a replica's high watermark
 * (`upToOffset`): records above it may still be truncated by a leader change,
 * so they must neither make a committed older record of their key go nor be
 * deleted by retention.
 */
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { tempDir } from '../test/helpers.js';
import { openLog, type Log } from './log.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir()));
afterEach(() => cleanup());

const OPTS = { segmentBytes: 1024, indexIntervalBytes: 100, checkpointIntervalMs: 0, retentionMs: -1, deleteRetentionMs: 0 };

async function valuesOf(log: Log, key: string): Promise<Array<{ offset: number; value: string | null }>> {
  const out: Array<{ offset: number; value: string | null }> = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = await log.read(next, 1 << 20);
    if (r.records.length === 0) break;
    for (const s of iterateBatches(r.records)) {
      for (const rec of decodeBatchSync(r.records, s.position).records) {
        if (rec.key?.toString() === key) out.push({ offset: rec.offset, value: rec.value?.toString() ?? null });
      }
    }
    next = r.nextOffset;
  }
  return out;
}

test('regression: a record above upToOffset (uncommitted) does not compact away the committed value of its key', async () => {
  const log = await openLog(dir, OPTS, { clock: () => 10_000 });
  try {
    await log.append(encodeBatchSync([{ key: 'k', value: 'committed', timestamp: 1 }])); // offset 0
    for (let i = 0; i < 12; i++) await log.append(encodeBatchSync([{ key: `f${i}`, value: 'x'.repeat(150), timestamp: 1 }]));
    await log.roll();
    const hw = log.logEndOffset; // 13: everything so far is committed
    await log.append(encodeBatchSync([{ key: 'k', value: 'uncommitted', timestamp: 1 }])); // offset 13, above the HW
    await log.roll(); // closed, but above the HW
    await log.compact({ upToOffset: hw });
    expect(await valuesOf(log, 'k')).toEqual([
      { offset: 0, value: 'committed' },
      { offset: 13, value: 'uncommitted' },
    ]);
    // Once the newer record is committed, the older one goes.
    await log.compact({ upToOffset: log.logEndOffset });
    expect(await valuesOf(log, 'k')).toEqual([{ offset: 13, value: 'uncommitted' }]);
  } finally {
    await log.close();
  }
});

test('applyRetention with upToOffset deletes only segments that end at or below it', async () => {
  const log = await openLog(dir, { ...OPTS, retentionMs: 1000 }, { clock: () => 1_000_000 });
  try {
    for (let i = 0; i < 30; i++) await log.append(encodeBatchSync([{ key: `k${i}`, value: 'x'.repeat(150), timestamp: 1 }]));
    expect(log.logEndOffset).toBe(30);
    // Every segment (timestamp 1) is expired; only those ending at or below 12 may go.
    await log.applyRetention(1_000_000, { upToOffset: 12 });
    expect(log.logStartOffset).toBeGreaterThan(0);
    expect(log.logStartOffset).toBeLessThanOrEqual(12);
    expect(log.logEndOffset).toBe(30);
    await log.applyRetention(1_000_000, { upToOffset: 30 });
    expect(log.logStartOffset).toBe(30);
  } finally {
    await log.close();
  }
});
