/**
 * A follower fetching a range the leader has compacted gets batches with
 * offset gaps (whole batches removed, offsets kept): it appends them as they
 * are, on a real @mq/log-store log, instead of refusing them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatchSync, iterateBatches, setBaseOffset } from '@mq/protocol/batch';
import { openLog, type Log } from '@mq/log-store';
import { createFollowerFetcher } from './follower-fetcher.js';
import { ManualTimers, MemoryCheckpoint } from './testing/index.js';
import type { FetchPartitionResponse, FetchRequest } from './types.js';

function batchAt(offset: number, epoch: number, value = `v${offset}`): Buffer {
  const b = encodeBatchSync([{ key: 'k', value }], { now: 1, partitionLeaderEpoch: epoch });
  setBaseOffset(b, 0, offset);
  return b;
}

function response(records: Buffer, highWatermark: number): FetchPartitionResponse {
  return { topic: 't', partition: 0, errorCode: 'NONE', highWatermark, logStartOffset: 0, logEndOffset: highWatermark, records, currentLeaderId: 2, currentLeaderEpoch: 0 };
}

let dir: string;
let log: Log;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mq-gap-'));
  log = await openLog(dir, { flush: { policy: 'os' } });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

/** Real file I/O is involved: wait in real time, a bounded number of times. */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 10));
}

async function follow(answers: Array<(req: FetchRequest) => FetchPartitionResponse>) {
  const timers = new ManualTimers(0);
  const errors: string[] = [];
  const fetcher = createFollowerFetcher(
    { brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 1_000, highWatermarkCheckpointIntervalMs: 0 },
    {
      fetch: (_l, req, signal) => {
        const next = answers.shift();
        if (!next) return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        return Promise.resolve({ partitions: [next(req)] });
      },
      offsetForLeaderEpoch: async (_l, req) => ({ partitions: req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: p.leaderEpoch, endOffset: log.logEndOffset })) }),
      clock: timers.clock,
      timers,
      random: () => 0.5,
      onPartitionError: (_t, _p, e) => errors.push(e.code),
    },
  );
  await fetcher.addPartition({ topic: 't', partition: 0, log, leaderEpoch: 0, checkpoint: new MemoryCheckpoint() });
  return { fetcher, errors };
}

describe('FollowerFetcher over a compacted leader range', () => {
  it('appends batches after offset gaps (compacted-away batches) with their offsets', async () => {
    // The leader kept offsets 0, 3 and 7..8 (batches 1-2 and 4-6 were compacted away).
    const records = Buffer.concat([batchAt(0, 0), batchAt(3, 0), batchAt(7, 0, 'a'), batchAt(8, 0, 'b')]);
    const requests: number[] = [];
    const { fetcher, errors } = await follow([
      (req) => {
        requests.push(req.partitions[0]!.fetchOffset);
        return response(records, 9);
      },
      (req) => {
        requests.push(req.partitions[0]!.fetchOffset);
        return response(Buffer.alloc(0), 9);
      },
    ]);
    await until(() => requests.length >= 2);
    await fetcher.close();
    expect(errors).toEqual([]);
    expect(log.logEndOffset).toBe(9);
    const read = await log.read(0, 1 << 20);
    expect([...iterateBatches(read.records)].map((b) => b.header.baseOffset)).toEqual([0, 3, 7, 8]);
    expect(requests).toEqual([0, 9]);
  });

  it('still refuses a batch that starts below the log end', async () => {
    await log.append(Buffer.concat([batchAt(0, 0), batchAt(1, 0)]), { assignOffsets: false });
    // Offsets 0..1 are here; a batch claiming 1..2 overlaps.
    const overlapping = encodeBatchSync([{ value: 'x' }, { value: 'y' }], { now: 1, partitionLeaderEpoch: 0 });
    setBaseOffset(overlapping, 0, 1);
    const { fetcher, errors } = await follow([() => response(overlapping, 3)]);
    const status = () => fetcher.status('t', 0)!;
    await until(() => status().delayedUntil > 0);
    expect(status().delayedUntil).toBeGreaterThan(0); // refused, backing off
    await fetcher.close();
    expect(errors).toEqual([]);
    expect(log.logEndOffset).toBe(2);
  });
});
