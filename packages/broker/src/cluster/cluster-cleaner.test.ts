/**
 * The cluster cleaner on real @mq/log-store logs: each replica is cleaned
 * below its own high watermark only (records above it may still be
 * truncated by a leader change), a replica without a role is left alone,
 * compact-only topics lose nothing to retention, and a log closed under the
 * cleaner is skipped quietly.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { openLog, type Log } from '@mq/log-store';
import { ClusterCleaner, type CleanerReplica } from './cluster-cleaner.js';

const NOW = 10_000_000;
let root: string;
let logs: Log[] = [];
const errors: unknown[] = [];
const logger = pino({ level: 'warn' }, { write: (line: string) => errors.push(JSON.parse(line)) });

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mq-cluster-cleaner-'));
  errors.length = 0;
});
afterEach(async () => {
  await Promise.allSettled(logs.map((l) => l.close()));
  logs = [];
  await rm(root, { recursive: true, force: true });
});

async function log(name: string, options: { retentionMs?: number } = {}): Promise<Log> {
  const l = await openLog(path.join(root, name), { segmentBytes: 1024, retentionMs: options.retentionMs ?? -1, deleteRetentionMs: 0, flush: { policy: 'os' } }, { clock: () => NOW });
  logs.push(l);
  return l;
}

/** Four keys rewritten `rounds` times, one record per batch, timestamped `ts`; returns the offset after. */
async function updates(l: Log, rounds: number, ts = NOW): Promise<number> {
  for (let i = 0; i < rounds; i++) {
    for (const k of ['a', 'b', 'c', 'd']) await l.append(encodeBatchSync([{ key: k, value: `${k}${i}${'.'.repeat(80)}`, timestamp: ts }]));
  }
  return l.logEndOffset;
}

async function contents(l: Log): Promise<Array<[number, string]>> {
  const out: Array<[number, string]> = [];
  let next = l.logStartOffset;
  while (next < l.logEndOffset) {
    const r = await l.read(next, 1 << 20);
    if (r.records.length === 0) break;
    for (const s of iterateBatches(r.records)) for (const rec of decodeBatchSync(r.records, s.position).records) out.push([rec.offset, rec.value!.toString().slice(0, 3)]);
    next = r.nextOffset;
  }
  return out;
}

function replica(topic: string, l: Log, compacted: boolean, hw: () => number | undefined): CleanerReplica {
  return { topic, partition: 0, log: l, compacted, highWatermark: hw };
}

function cleaner(replicas: CleanerReplica[]): ClusterCleaner {
  return new ClusterCleaner({ cleanerIntervalMs: 1000, retentionCheckIntervalMs: 1000 }, { replicas: () => replicas, clock: () => NOW, logger });
}

describe('ClusterCleaner', () => {
  it('compacts each replica below its own high watermark: newer values above it do not remove committed ones', async () => {
    const leader = await log('leader');
    const follower = await log('follower');
    for (const l of [leader, follower]) await updates(l, 10); // offsets 0..39, several closed segments
    // The leader has committed everything; the follower has learned a HW of 20 so far.
    const c = cleaner([replica('t', leader, true, () => leader.logEndOffset), replica('t', follower, true, () => 20)]);
    const round = await c.compactOnce();
    expect(round.partitions).toBe(2);
    const onLeader = await contents(leader);
    const onFollower = await contents(follower);
    // The leader keeps only the latest of each key among closed segments (the active one is never compacted).
    expect(onLeader.filter(([o]) => o < 20).length).toBe(0);
    // The follower: below 20 nothing superseded only by records at or above 20 went; records 16..19 are the latest below its HW.
    expect(onFollower.filter(([o]) => o < 20).map(([o]) => o)).toEqual([16, 17, 18, 19]);
    // What both hold agrees offset by offset.
    const byOffset = new Map(onLeader);
    for (const [o, v] of onFollower) if (byOffset.has(o)) expect([o, v]).toEqual([o, byOffset.get(o)]);
    expect(errors).toEqual([]);
  });

  it('compacts __consumer_offsets like any compacted topic (no internal-topic exception in cluster mode)', async () => {
    const offsets = await log('offsets');
    await updates(offsets, 10);
    const round = await cleaner([replica('__consumer_offsets', offsets, true, () => offsets.logEndOffset)]).compactOnce();
    expect(round.removedRecords).toBeGreaterThan(0);
  });

  it('leaves a replica with no role (no high watermark) and non-compacted topics alone', async () => {
    const noRole = await log('no-role');
    const plain = await log('plain');
    await updates(noRole, 10);
    await updates(plain, 10);
    const before = [await contents(noRole), await contents(plain)];
    const round = await cleaner([replica('t', noRole, true, () => undefined), replica('p', plain, false, () => plain.logEndOffset)]).compactOnce();
    expect(round.partitions).toBe(0);
    expect([await contents(noRole), await contents(plain)]).toEqual(before);
  });

  it('applies retention only to segments ending at or below the replica high watermark, and advances the log start', async () => {
    const old = NOW - 3_600_000;
    const l = await log('retained', { retentionMs: 60_000 });
    const end = await updates(l, 10, old); // every segment expired
    const c = cleaner([replica('r', l, false, () => 20)]);
    const round = await c.retainOnce();
    expect(round.deletedSegments).toBeGreaterThan(0);
    expect(l.logStartOffset).toBeGreaterThan(0);
    expect(l.logStartOffset).toBeLessThanOrEqual(20);
    expect(l.logEndOffset).toBe(end);
    // A compact-only topic's log is opened without time retention: nothing goes.
    const changelog = await log('changelog');
    await updates(changelog, 10, old);
    await cleaner([replica('c', changelog, true, () => changelog.logEndOffset)]).retainOnce();
    expect(changelog.logStartOffset).toBe(0);
  });

  it('skips a log closed under it without logging an error, and stop() clears its timers', async () => {
    const l = await log('closed');
    await updates(l, 10);
    await l.close();
    const timers: Array<() => void> = [];
    const cleared: unknown[] = [];
    const c = new ClusterCleaner(
      { cleanerIntervalMs: 1000, retentionCheckIntervalMs: 1000 },
      {
        replicas: () => [replica('t', l, true, () => 40)],
        clock: () => NOW,
        logger,
        timers: { setInterval: (fn) => timers.push(fn), clearInterval: (h) => cleared.push(h) },
      },
    );
    c.start();
    expect(timers).toHaveLength(2);
    for (const fn of timers) fn();
    expect(await c.compactOnce()).toEqual({ partitions: 0, removedRecords: 0, deletedSegments: 0 });
    expect(await c.retainOnce()).toEqual({ partitions: 0, removedRecords: 0, deletedSegments: 0 });
    await c.stop();
    expect(cleared).toHaveLength(2);
    expect(errors).toEqual([]);
  });
});
