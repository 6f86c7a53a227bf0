import { encodeBatchSync, setBaseOffset } from '@mq/protocol/batch';
import { MqError } from '@mq/protocol/errors';
import { createFollowerFetcher } from './follower-fetcher.js';
import { ManualTimers, MemoryCheckpoint, MemoryLog, settle } from './testing/index.js';
import type { FetchPartitionResponse, FetchRequest, OffsetForLeaderEpochRequest } from './types.js';

function batchAt(offset: number, epoch: number, value = `v${offset}`): Buffer {
  const b = encodeBatchSync([{ value }], { now: 1, partitionLeaderEpoch: epoch });
  setBaseOffset(b, 0, offset);
  return b;
}

function ok(over: Partial<FetchPartitionResponse>): FetchPartitionResponse {
  return {
    topic: 't',
    partition: 0,
    errorCode: 'NONE',
    highWatermark: 0,
    logStartOffset: 0,
    logEndOffset: 0,
    records: Buffer.alloc(0),
    currentLeaderId: 2,
    currentLeaderEpoch: 3,
    ...over,
  };
}

/** A scripted leader: each fetch takes the next answer; with none left it hangs until aborted. */
function scripted(answers: ((req: FetchRequest) => FetchPartitionResponse | Error)[]) {
  const requests: FetchRequest[] = [];
  const epochRequests: OffsetForLeaderEpochRequest[] = [];
  return {
    requests,
    epochRequests,
    offsetForLeaderEpoch: async (_leader: number, req: OffsetForLeaderEpochRequest) => {
      epochRequests.push(req);
      return { partitions: req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: p.leaderEpoch, endOffset: 2 })) };
    },
    fetch: (_leader: number, req: FetchRequest, signal: AbortSignal) => {
      requests.push(req);
      const next = answers.shift();
      if (!next) {
        return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
      }
      const a = next(req);
      return a instanceof Error ? Promise.reject(a) : Promise.resolve({ partitions: [a] });
    },
  };
}

async function setup(answers: ((req: FetchRequest) => FetchPartitionResponse | Error)[], log = new MemoryLog(), topicId?: string) {
  const timers = new ManualTimers(0);
  const leader = scripted(answers);
  const checkpoint = new MemoryCheckpoint();
  const errors: MqError[] = [];
  const fetcher = createFollowerFetcher(
    { brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 1_000, highWatermarkCheckpointIntervalMs: 0 },
    { ...leader, clock: timers.clock, timers, random: () => 0.5, onPartitionError: (_t, _p, e) => errors.push(e) },
  );
  await fetcher.addPartition({ topic: 't', ...(topicId ? { topicId } : {}), partition: 0, log, leaderEpoch: 3, checkpoint });
  await settle();
  return { timers, leader, checkpoint, fetcher, log, errors };
}

describe('FollowerFetcher', () => {
  it('appends the leader\'s batches exactly, takes its high watermark, and reports its position in the next fetch', async () => {
    const records = Buffer.concat([batchAt(0, 3), batchAt(1, 3)]);
    const { leader, log, fetcher, checkpoint } = await setup([() => ok({ records, highWatermark: 1, logEndOffset: 2 })]);
    expect(log.logEndOffset).toBe(2);
    expect(Buffer.concat(log.batches().map((b) => b.bytes)).equals(records)).toBe(true);
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 3, startOffset: 0 }]);
    expect(fetcher.status('t', 0)).toMatchObject({ state: 'fetching', highWatermark: 1 });
    expect(checkpoint.value).toBe(1);
    expect(leader.requests.map((r) => r.partitions[0]!.fetchOffset)).toEqual([0, 2]);
    expect(leader.requests[1]!).toMatchObject({ replicaId: 1, partitions: [{ currentLeaderEpoch: 3, lastFetchedEpoch: 3 }] });
    await fetcher.close();
  });

  it('asks OffsetForLeaderEpoch first when its log has epochs, and truncates to the answer', async () => {
    const log = new MemoryLog();
    for (let i = 0; i < 4; i++) await log.append(batchAt(i, 1), { assignOffsets: false });
    const { leader, fetcher } = await setup([], log);
    expect(leader.epochRequests[0]!.partitions[0]).toMatchObject({ currentLeaderEpoch: 3, leaderEpoch: 1 });
    expect(log.logEndOffset).toBe(2);
    expect(leader.requests[0]!.partitions[0]!.fetchOffset).toBe(2);
    await fetcher.close();
  });

  it('backs off exponentially on transport errors and recovers', async () => {
    const down = () => new MqError('CONNECTION_ERROR', 'down');
    const { leader, timers, log, fetcher } = await setup([down, down, down, () => ok({ records: batchAt(0, 3), highWatermark: 1 })]);
    expect(leader.requests).toHaveLength(1);
    await timers.advance(99);
    expect(leader.requests).toHaveLength(1);
    await timers.advance(1); // 100 ms
    expect(leader.requests).toHaveLength(2);
    await timers.advance(200); // then 200 ms
    expect(leader.requests).toHaveLength(3);
    await timers.advance(399);
    expect(leader.requests).toHaveLength(3);
    await timers.advance(1); // then 400 ms
    expect(log.logEndOffset).toBe(1);
    await fetcher.close();
  });

  it('asks a new leader that has not applied its election yet (NOT_LEADER, UNKNOWN_LEADER_EPOCH) again after leaderChangeBackoffMs, not backoffMs', async () => {
    const { leader, timers, log, fetcher } = await setup([
      () => ok({ errorCode: 'NOT_LEADER' }),
      () => ok({ errorCode: 'UNKNOWN_LEADER_EPOCH' }),
      () => ok({ records: batchAt(0, 3), highWatermark: 1 }),
    ]);
    expect(leader.requests).toHaveLength(1);
    await timers.advance(9);
    expect(leader.requests).toHaveLength(1);
    await timers.advance(1); // 10 ms (DEFAULT_REPLICA_FETCH_LEADER_CHANGE_BACKOFF_MS), where backoffMs is 100
    expect(leader.requests).toHaveLength(2);
    await timers.advance(19);
    expect(leader.requests).toHaveLength(2);
    await timers.advance(1); // then doubling: 20 ms
    expect(log.logEndOffset).toBe(1);
    await fetcher.close();
  });

  it('truncates to the leader\'s end when it is ahead of an unclean leader, logging loudly below its HW', async () => {
    const log = new MemoryLog();
    const { fetcher } = await setup([
      () => ok({ records: Buffer.concat([batchAt(0, 3), batchAt(1, 3), batchAt(2, 3)]), highWatermark: 2 }),
      () => ok({ errorCode: 'OFFSET_OUT_OF_RANGE', logEndOffset: 1, highWatermark: 1 }),
    ], log);
    await settle();
    expect(log.logEndOffset).toBe(1);
    expect(fetcher.status('t', 0)!.highWatermark).toBe(1);
    await fetcher.close();
  });

  it('refuses a response whose batches do not start at its log end, appending nothing', async () => {
    const { log, fetcher } = await setup([() => ok({ records: batchAt(5, 3) })]);
    expect(log.logEndOffset).toBe(0);
    expect(fetcher.status('t', 0)!.delayedUntil).toBeGreaterThan(0);
    await fetcher.close();
  });

  it('deleting and recreating a topic copies the old topic\'s records into the new one: an answer of another incarnation is dropped, its records never appended', async () => {
    const old = Buffer.concat([batchAt(0, 3, 'old0'), batchAt(1, 3, 'old1')]);
    const fresh = batchAt(0, 3, 'new0');
    const { leader, log, fetcher, timers, checkpoint } = await setup(
      [
        // A leader still on the deleted incarnation (same name, same epoch) answers with its records.
        () => ok({ topicId: 'OLD', records: old, highWatermark: 2, logEndOffset: 2 }),
        // A leader that names no topic id cannot be told apart from one: dropped too.
        () => ok({ records: old, highWatermark: 2, logEndOffset: 2 }),
        () => ok({ topicId: 'NEW', records: fresh, highWatermark: 1, logEndOffset: 1 }),
      ],
      new MemoryLog(),
      'NEW',
    );
    expect(leader.requests[0]!.partitions[0]).toMatchObject({ topicId: 'NEW' });
    expect(log.logEndOffset).toBe(0);
    expect(fetcher.status('t', 0)!.highWatermark).toBe(0);
    expect(checkpoint.value ?? 0).toBe(0);
    await timers.advance(100); // the partition's backoff
    expect(leader.requests).toHaveLength(2);
    expect(log.logEndOffset).toBe(0);
    await timers.advance(200);
    expect(leader.requests).toHaveLength(4); // the third answer appended; the fourth fetch waits
    expect(log.logEndOffset).toBe(1);
    expect(log.batches()[0]!.bytes.equals(fresh)).toBe(true);
    await fetcher.close();
  });

  it('a truncation answer of another incarnation truncates nothing', async () => {
    const log = new MemoryLog();
    for (let i = 0; i < 4; i++) await log.append(batchAt(i, 1), { assignOffsets: false });
    const timers = new ManualTimers(0);
    const epochRequests: OffsetForLeaderEpochRequest[] = [];
    const fetcher = createFollowerFetcher(
      { brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 1_000 },
      {
        clock: timers.clock,
        timers,
        random: () => 0.5,
        // The other incarnation's epoch 1 ended at 0.
        offsetForLeaderEpoch: async (_l, req) => {
          epochRequests.push(req);
          return { partitions: req.partitions.map((p) => ({ topic: p.topic, topicId: 'OLD', partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: 1, endOffset: 0 })) };
        },
        fetch: (_l, _req, signal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
      },
    );
    await fetcher.addPartition({ topic: 't', topicId: 'NEW', partition: 0, log, leaderEpoch: 3, checkpoint: new MemoryCheckpoint() });
    await settle();
    expect(epochRequests[0]!.partitions[0]).toMatchObject({ topicId: 'NEW', leaderEpoch: 1 });
    expect(log.logEndOffset).toBe(4);
    expect(fetcher.status('t', 0)).toMatchObject({ state: 'truncating' });
    await fetcher.close();
  });

  it('stops fetching a partition fenced by a newer leader epoch and tells the broker', async () => {
    const { errors, fetcher, leader, timers } = await setup([() => ok({ errorCode: 'FENCED_LEADER_EPOCH' })]);
    expect(fetcher.status('t', 0)!.state).toBe('fenced');
    expect(errors.map((e) => e.code)).toEqual(['FENCED_LEADER_EPOCH']);
    await timers.advance(10_000);
    expect(leader.requests).toHaveLength(1);
    fetcher.updateLeaderEpoch('t', 0, 4);
    await settle();
    expect(leader.requests).toHaveLength(2);
    expect(leader.requests[1]!.partitions[0]!.currentLeaderEpoch).toBe(4);
    await fetcher.close();
  });

  it('regression: an answer to a fetch sent in an older epoch is dropped once the epoch moved on (no stale records, no stale fencing)', async () => {
    // The scripted stale-epoch-follower scenario: the fetch of epoch 3 is in flight when the metadata moves the
    // same leader to epoch 5 (the follower missed epoch 4, led by another broker); the old answer arrives after.
    let answer!: (r: FetchPartitionResponse) => void;
    const stale = (): Promise<FetchPartitionResponse> => new Promise((resolve) => (answer = resolve));
    const requests: FetchRequest[] = [];
    const epochRequests: OffsetForLeaderEpochRequest[] = [];
    let pending: Promise<FetchPartitionResponse> | undefined;
    const timers = new ManualTimers(0);
    const errors: MqError[] = [];
    const log = new MemoryLog();
    const fetcher = createFollowerFetcher(
      { brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 1_000, highWatermarkCheckpointIntervalMs: 0 },
      {
        fetch: (_l, req, signal) => {
          requests.push(req);
          if (requests.length === 1) {
            pending = stale();
            return pending.then((r) => ({ partitions: [r] }));
          }
          return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        },
        offsetForLeaderEpoch: async (_l, req) => {
          epochRequests.push(req);
          return { partitions: req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: p.leaderEpoch, endOffset: 0 })) };
        },
        clock: timers.clock,
        timers,
        random: () => 0.5,
        onPartitionError: (_t, _p, e) => errors.push(e),
      },
    );
    await fetcher.addPartition({ topic: 't', partition: 0, log, leaderEpoch: 3, checkpoint: new MemoryCheckpoint() });
    await settle();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.partitions[0]).toMatchObject({ fetchOffset: 0, currentLeaderEpoch: 3 });
    fetcher.updateLeaderEpoch('t', 0, 5);
    // The leader, already in epoch 5 when the epoch-3 fetch reached it, refused it; that answer arrives now.
    answer(ok({ errorCode: 'FENCED_LEADER_EPOCH', currentLeaderEpoch: 5 }));
    await settle();
    await timers.advance(1_000);
    expect(errors.map((e) => e.code)).toEqual([]);
    expect(fetcher.status('t', 0)?.state).not.toBe('fenced');
    expect(requests.at(-1)!.partitions[0]).toMatchObject({ currentLeaderEpoch: 5 });
    await fetcher.close();

    // The same with records: an epoch-3 answer carrying the old leader's tail is not appended in epoch 5.
    requests.length = 0;
    const log2 = new MemoryLog();
    const f2 = createFollowerFetcher(
      { brokerId: 1, leaderId: 2, backoffMs: 100, maxBackoffMs: 1_000, highWatermarkCheckpointIntervalMs: 0 },
      {
        fetch: (_l, req, signal) => {
          requests.push(req);
          if (requests.length === 1) return stale().then((r) => ({ partitions: [r] }));
          return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
        },
        offsetForLeaderEpoch: async (_l, req) => ({ partitions: req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: p.leaderEpoch, endOffset: 0 })) }),
        clock: timers.clock,
        timers,
        random: () => 0.5,
      },
    );
    await f2.addPartition({ topic: 't', partition: 0, log: log2, leaderEpoch: 3, checkpoint: new MemoryCheckpoint() });
    await settle();
    f2.updateLeaderEpoch('t', 0, 5);
    answer(ok({ records: Buffer.concat([batchAt(0, 3, 'stale-0'), batchAt(1, 3, 'stale-1')]), highWatermark: 2, logEndOffset: 2 }));
    await settle();
    expect(log2.logEndOffset).toBe(0);
    expect(f2.status('t', 0)?.highWatermark).toBe(0);
    await f2.close();
  });

  it('removePartition saves the high watermark; close aborts the fetch in flight', async () => {
    const { fetcher, leader, checkpoint } = await setup([() => ok({ records: batchAt(0, 3), highWatermark: 1 })]);
    expect(leader.requests).toHaveLength(2); // the second hangs
    expect(await fetcher.removePartition('t', 0)).toEqual({ highWatermark: 1 });
    expect(checkpoint.value).toBe(1);
    expect(fetcher.status('t', 0)).toBeUndefined();
    await fetcher.close();
    expect(fetcher.closed).toBe(true);
    await expect(fetcher.addPartition({ topic: 't', partition: 1, log: new MemoryLog(), leaderEpoch: 1, checkpoint })).rejects.toMatchObject({ code: 'CLOSED' });
  });

  it('regression (sim seed 128): starts from the HW the broker already knows when its checkpoint is behind, within its log, and checkpoints it', async () => {
    const log = new MemoryLog();
    for (let i = 0; i < 2; i++) await log.append(batchAt(i, 3), { assignOffsets: false });
    const timers = new ManualTimers(0);
    const leader = scripted([]); // answers OffsetForLeaderEpoch with end offset 2 (no truncation), then no fetch answer
    const fetcher = createFollowerFetcher({ brokerId: 1, leaderId: 2 }, { ...leader, clock: timers.clock, timers, random: () => 0.5 });
    const checkpoint = new MemoryCheckpoint(0);
    await fetcher.addPartition({ topic: 't', partition: 0, log, leaderEpoch: 3, checkpoint, highWatermark: 2 });
    await settle();
    expect(fetcher.status('t', 0)).toMatchObject({ state: 'fetching', highWatermark: 2 });
    expect(await fetcher.removePartition('t', 0)).toEqual({ highWatermark: 2 });
    expect(checkpoint.value).toBe(2);
    checkpoint.value = 0;
    await fetcher.addPartition({ topic: 't', partition: 0, log, leaderEpoch: 3, checkpoint, highWatermark: 7 });
    expect(fetcher.status('t', 0)?.highWatermark).toBe(2); // never past its log end
    await fetcher.close();
  });

  it('keeps other partitions fetching while one is in error', async () => {
    const timers = new ManualTimers(0);
    const requests: FetchRequest[] = [];
    const logs = [new MemoryLog(), new MemoryLog()];
    let round = 0;
    const fetcher = createFollowerFetcher(
      { brokerId: 1, leaderId: 2, backoffMs: 1_000, maxBackoffMs: 1_000 },
      {
        clock: timers.clock,
        timers,
        random: () => 0.5,
        offsetForLeaderEpoch: async () => ({ partitions: [] }),
        fetch: async (_l, req, signal) => {
          requests.push(req);
          if (++round > 3) return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
          return {
            partitions: req.partitions.map((p) =>
              p.partition === 0
                ? ok({ partition: 0, errorCode: 'NOT_LEADER' })
                : ok({ partition: 1, records: batchAt(p.fetchOffset, 3), highWatermark: p.fetchOffset }),
            ),
          };
        },
      },
    );
    for (const partition of [0, 1]) {
      await fetcher.addPartition({ topic: 't', partition, log: logs[partition]!, leaderEpoch: 3, checkpoint: new MemoryCheckpoint() });
    }
    await settle();
    expect(requests[0]!.partitions.map((p) => p.partition)).toEqual([0, 1]);
    expect(requests[1]!.partitions.map((p) => p.partition)).toEqual([1]); // partition 0 backs off
    expect(logs[1]!.logEndOffset).toBe(3);
    expect(logs[0]!.logEndOffset).toBe(0);
    await fetcher.close();
  });
});
