import { encodeBatchSync, decodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { MqError, isMqError } from '@mq/protocol/errors';
import { createPartitionLeader, type PartitionLeader } from './partition-leader.js';
import { ManualTimers, MemoryCheckpoint, MemoryLog, settle } from './testing/index.js';
import type { AlterPartitionRequest, FetchPartitionRequest, PartitionState } from './types.js';

function batch(value: string): Buffer {
  return encodeBatchSync([{ value }], { now: 1 });
}

interface Setup {
  leader: PartitionLeader;
  log: MemoryLog;
  timers: ManualTimers;
  checkpoint: MemoryCheckpoint;
  proposals: AlterPartitionRequest[];
  /** Answers the next proposal: commit (default) or reject. */
  answer: (r: AlterPartitionRequest) => Promise<PartitionState>;
}

async function setup(
  overrides: { isr?: number[]; minInsyncReplicas?: number; replicaLagTimeMaxMs?: number; maxPendingProduces?: number; topicId?: string; log?: (timers: ManualTimers) => MemoryLog } = {},
): Promise<Setup> {
  const timers = new ManualTimers(10_000);
  const log = overrides.log ? overrides.log(timers) : new MemoryLog({ clock: timers.clock });
  const checkpoint = new MemoryCheckpoint();
  let partitionEpoch = 3;
  const s = {
    log,
    timers,
    checkpoint,
    proposals: [] as AlterPartitionRequest[],
    answer: async (r: AlterPartitionRequest): Promise<PartitionState> => {
      partitionEpoch++;
      return { leaderEpoch: r.leaderEpoch, partitionEpoch, isr: r.isr };
    },
  } as Setup;
  s.leader = await createPartitionLeader(
    {
      topic: 'orders',
      ...(overrides.topicId ? { topicId: overrides.topicId } : {}),
      partition: 0,
      brokerId: 1,
      leaderEpoch: 5,
      partitionEpoch,
      replicas: [1, 2, 3],
      isr: overrides.isr ?? [1, 2, 3],
      minInsyncReplicas: overrides.minInsyncReplicas ?? 2,
      replicaLagTimeMaxMs: overrides.replicaLagTimeMaxMs ?? 1_000,
      highWatermarkCheckpointIntervalMs: 0,
      ...(overrides.maxPendingProduces ? { maxPendingProduces: overrides.maxPendingProduces } : {}),
    },
    {
      log,
      clock: timers.clock,
      timers,
      checkpoint,
      alterPartition: (r) => {
        s.proposals.push(r);
        return s.answer(r);
      },
    },
  );
  return s;
}

function replicaFetch(fetchOffset: number, extra: Partial<FetchPartitionRequest> = {}): FetchPartitionRequest {
  return { topic: 'orders', partition: 0, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: 5, lastFetchedEpoch: 5, logStartOffset: 0, ...extra };
}

/** What a follower does with a response: append exactly the leader's batches. */
async function follow(follower: MemoryLog, records: Buffer): Promise<void> {
  if (records.length > 0) await follower.append(records, { assignOffsets: false });
}

describe('PartitionLeader', () => {
  it('records its leader epoch at the log end when it takes over', async () => {
    const { log } = await setup();
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 5, startOffset: 0 }]);
  });

  it('advances the high watermark to the lowest log end offset in the ISR, never backwards', async () => {
    const { leader } = await setup();
    for (let i = 0; i < 4; i++) await leader.append(batch(`v${i}`), { acks: 1 });
    expect(leader.logEndOffset).toBe(4);
    expect(leader.highWatermark).toBe(0);
    await leader.fetch(replicaFetch(3), 2);
    expect(leader.highWatermark).toBe(0); // broker 3 not heard from yet
    await leader.fetch(replicaFetch(1), 3);
    expect(leader.highWatermark).toBe(1);
    await leader.fetch(replicaFetch(4), 3);
    expect(leader.highWatermark).toBe(3);
    await leader.fetch(replicaFetch(4), 2);
    expect(leader.highWatermark).toBe(4);
    // A follower reporting less (it truncated after a crash) does not move the HW back.
    await leader.fetch(replicaFetch(2), 2);
    expect(leader.highWatermark).toBe(4);
  });

  it('never hands a consumer anything at or above the high watermark; followers read to the log end', async () => {
    const { leader } = await setup();
    for (let i = 0; i < 3; i++) await leader.append(batch(`v${i}`), { acks: 1 });
    await leader.fetch(replicaFetch(1), 2);
    await leader.fetch(replicaFetch(1), 3);
    expect(leader.highWatermark).toBe(1);
    const consumer = await leader.fetch(replicaFetch(0, { currentLeaderEpoch: -1, lastFetchedEpoch: -1 }), -1);
    expect([...iterateBatches(consumer.records)].map((b) => b.header.baseOffset)).toEqual([0]);
    expect(consumer.highWatermark).toBe(1);
    const beyond = await leader.fetch(replicaFetch(2, { currentLeaderEpoch: -1 }), -1);
    expect(beyond.errorCode).toBe('NONE');
    expect(beyond.records.length).toBe(0);
    const follower = await leader.fetch(replicaFetch(1), 2);
    expect([...iterateBatches(follower.records)].map((b) => b.header.baseOffset)).toEqual([1, 2]);
  });

  it('answers acks=all only once every ISR member has the batch', async () => {
    const { leader, log } = await setup();
    const f2 = new MemoryLog();
    const f3 = new MemoryLog();
    let done = false;
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 5_000 }).then((r) => {
      done = true;
      return r;
    });
    await settle();
    expect(log.logEndOffset).toBe(1);
    await follow(f2, (await leader.fetch(replicaFetch(0), 2)).records);
    await leader.fetch(replicaFetch(f2.logEndOffset), 2);
    await settle();
    expect(done).toBe(false); // broker 3 does not have it yet
    await follow(f3, (await leader.fetch(replicaFetch(0), 3)).records);
    await settle();
    expect(done).toBe(false); // fetching it is not having it: the next fetch offset says so
    await leader.fetch(replicaFetch(f3.logEndOffset), 3);
    await expect(produced).resolves.toMatchObject({ baseOffset: 0, lastOffset: 0 });
    expect(f3.batches()[0]!.bytes.equals(log.batches()[0]!.bytes)).toBe(true);
  });

  it('refuses acks=all with NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas, appending nothing', async () => {
    const { leader, log } = await setup({ isr: [1], minInsyncReplicas: 2 });
    await expect(leader.append(batch('a'), { acks: -1 })).rejects.toMatchObject({ code: 'NOT_ENOUGH_REPLICAS', retriable: true });
    expect(log.logEndOffset).toBe(0);
    await expect(leader.append(batch('a'), { acks: 1 })).resolves.toMatchObject({ baseOffset: 0 });
    await expect(leader.append(batch('a'), { acks: 2 as never })).rejects.toMatchObject({ code: 'INVALID_REQUIRED_ACKS' });
  });

  it('times out a waiting acks=all produce with REQUEST_TIMED_OUT, leaving the records in the log', async () => {
    const { leader, log, timers } = await setup({ replicaLagTimeMaxMs: 60_000 });
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 1_500 });
    const seen = produced.catch((e: unknown) => e);
    await timers.advance(1_499);
    expect(leader.pendingProduces).toBe(1);
    await timers.advance(1);
    expect(await seen).toMatchObject({ code: 'REQUEST_TIMED_OUT' });
    expect(leader.pendingProduces).toBe(0);
    expect(log.logEndOffset).toBe(1);
  });

  it('bounds the purgatory: a full one refuses before appending', async () => {
    const { leader, log } = await setup({ maxPendingProduces: 2 });
    const a = leader.append(batch('a'), { acks: -1 }).catch(() => undefined);
    const b = leader.append(batch('b'), { acks: -1 }).catch(() => undefined);
    await settle();
    await expect(leader.append(batch('c'), { acks: -1 })).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT', retriable: true });
    expect(log.logEndOffset).toBe(2);
    await leader.resign();
    await Promise.all([a, b]);
  });

  it('shrinks the ISR through the controller when a follower lags, and fails waiters with NOT_ENOUGH_REPLICAS_AFTER_APPEND', async () => {
    const s = await setup({ minInsyncReplicas: 3, replicaLagTimeMaxMs: 1_000 });
    const { leader, timers } = s;
    await leader.fetch(replicaFetch(0), 2);
    await leader.fetch(replicaFetch(0), 3);
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 30_000 }).catch((e: unknown) => e);
    // Broker 2 keeps up; broker 3 goes quiet.
    for (let t = 0; t < 1_600; t += 100) {
      await leader.fetch(replicaFetch(leader.logEndOffset), 2);
      await timers.advance(100);
    }
    expect(s.proposals.map((p) => p.isr)).toEqual([[1, 2]]);
    expect(s.proposals[0]!.partitionEpoch).toBe(3);
    expect(leader.isr).toEqual([1, 2]);
    expect(leader.partitionEpoch).toBe(4);
    expect(await produced).toMatchObject({ code: 'NOT_ENOUGH_REPLICAS_AFTER_APPEND' });
    expect(leader.highWatermark).toBe(1);
  });

  it('an ISR change takes effect only once the controller confirms it', async () => {
    const s = await setup({ replicaLagTimeMaxMs: 1_000 });
    const { leader, timers } = s;
    let confirm: ((st: PartitionState) => void) | undefined;
    s.answer = (r) => new Promise((resolve) => (confirm = () => resolve({ leaderEpoch: r.leaderEpoch, partitionEpoch: 4, isr: r.isr })));
    await leader.append(batch('a'), { acks: 1 });
    for (let t = 0; t < 1_600; t += 100) {
      await leader.fetch(replicaFetch(1), 2);
      await timers.advance(100);
    }
    expect(leader.pendingIsr).toEqual([1, 2]);
    expect(leader.isr).toEqual([1, 2, 3]);
    expect(leader.highWatermark).toBe(0); // broker 3 still counts while the shrink is pending
    confirm!({} as PartitionState);
    await settle();
    expect(leader.isr).toEqual([1, 2]);
    expect(leader.pendingIsr).toBeNull();
    expect(leader.highWatermark).toBe(1);
  });

  it('stops proposing after a stale partition epoch until the controller state arrives', async () => {
    const s = await setup({ replicaLagTimeMaxMs: 1_000 });
    const { leader, timers } = s;
    s.answer = async () => {
      throw Object.assign(new Error('stale'), { code: 'INCONSISTENT_PARTITION_EPOCH' });
    };
    await timers.advance(1_600);
    expect(s.proposals).toHaveLength(1);
    await timers.advance(800); // a stale proposal waits up to a lag period for the controller's state
    expect(s.proposals).toHaveLength(1);
    expect(leader.isr).toEqual([1, 2, 3]);
    await leader.applyPartitionState({ leaderEpoch: 5, partitionEpoch: 7, isr: [1, 3] });
    expect(leader.isr).toEqual([1, 3]);
    expect(leader.partitionEpoch).toBe(7);
    s.answer = async (r) => ({ leaderEpoch: 5, partitionEpoch: 8, isr: r.isr });
    await timers.advance(1_000);
    expect(s.proposals.at(-1)!).toMatchObject({ partitionEpoch: 7, isr: [1] });
  });

  it('expands the ISR when a follower catches up to the high watermark', async () => {
    const s = await setup({ isr: [1, 2] });
    const { leader } = s;
    await leader.append(batch('a'), { acks: 1 });
    await leader.append(batch('b'), { acks: 1 });
    await leader.fetch(replicaFetch(2), 2);
    expect(leader.highWatermark).toBe(2);
    await leader.fetch(replicaFetch(1), 3);
    expect(s.proposals).toHaveLength(0);
    await leader.fetch(replicaFetch(2), 3);
    await settle();
    expect(s.proposals.map((p) => p.isr)).toEqual([[1, 2, 3]]);
    expect(leader.isr).toEqual([1, 2, 3]);
  });

  it('refuses fetches from a broker outside the replica set, with a stale or future epoch', async () => {
    const { leader } = await setup();
    expect((await leader.fetch(replicaFetch(0), 9)).errorCode).toBe('REPLICA_NOT_AVAILABLE');
    expect((await leader.fetch(replicaFetch(0), 1)).errorCode).toBe('REPLICA_NOT_AVAILABLE');
    expect((await leader.fetch(replicaFetch(0, { currentLeaderEpoch: 4 }), 2)).errorCode).toBe('FENCED_LEADER_EPOCH');
    expect((await leader.fetch(replicaFetch(0, { currentLeaderEpoch: 6 }), 2)).errorCode).toBe('UNKNOWN_LEADER_EPOCH');
    expect((await leader.fetch(replicaFetch(7, { lastFetchedEpoch: -1 }), 2)).errorCode).toBe('OFFSET_OUT_OF_RANGE');
    expect(leader.replicaStatus().find((r) => r.brokerId === 2)!.logEndOffset).toBe(-1);
  });

  it('deleting and recreating a topic copies the old topic\'s records into the new one: a fetch or OffsetForLeaderEpoch naming another incarnation is refused, and counts nothing', async () => {
    const { leader } = await setup({ topicId: 'NEW' });
    for (const v of ['a', 'b', 'c']) await leader.append(batch(v), { acks: 1 });
    // A follower of the deleted incarnation (same name, same epoch) at an offset this log also has.
    const stale = await leader.fetch(replicaFetch(3, { topicId: 'OLD' }), 2);
    expect(stale).toMatchObject({ errorCode: 'INCONSISTENT_TOPIC_ID', topicId: 'OLD' });
    expect(stale.records.length).toBe(0);
    expect(leader.replicaStatus().find((r) => r.brokerId === 2)!.logEndOffset).toBe(-1);
    expect(leader.highWatermark).toBe(0);
    expect(leader.fetchableBytes(replicaFetch(0, { topicId: 'OLD' }), 2)).toBe(Infinity); // answered at once, never parked
    expect(leader.offsetForLeaderEpoch(5, 5, 'OLD').errorCode).toBe('INCONSISTENT_TOPIC_ID');
    // Its own incarnation (or a consumer, which names none) is served, and the answer names the incarnation.
    const fresh = await leader.fetch(replicaFetch(0, { topicId: 'NEW' }), 2);
    expect(fresh).toMatchObject({ errorCode: 'NONE', topicId: 'NEW' });
    expect(fresh.records.length).toBeGreaterThan(0);
    expect((await leader.fetch(replicaFetch(3), 3)).topicId).toBe('NEW');
    expect(leader.offsetForLeaderEpoch(5, 5, 'NEW')).toEqual({ errorCode: 'NONE', epoch: 5, endOffset: 3 });
  });

  it('names its topic id in ISR proposals (the controller refuses a deleted incarnation\'s)', async () => {
    const { timers, proposals } = await setup({ topicId: 'NEW' });
    await timers.advance(1_500); // the followers never fetched: proposed out
    await settle();
    expect(proposals[0]).toMatchObject({ topic: 'orders', topicId: 'NEW', isr: [1] });
  });

  it('tells a follower where its log diverged (KIP-320) instead of sending records', async () => {
    const { leader, log } = await setup();
    // Epoch 5 starts at 0 here; suppose the follower wrote offsets 0..2 in epoch 4 as an old leader.
    await leader.append(batch('a'), { acks: 1 });
    const r = await leader.fetch(replicaFetch(3, { lastFetchedEpoch: 4 }), 2);
    expect(r.errorCode).toBe('NONE');
    expect(r.divergingEpoch).toEqual({ epoch: 4, endOffset: 0 });
    expect(r.records.length).toBe(0);
    expect(log.logEndOffset).toBe(1);
    // In the same epoch, past the leader's end: also diverging.
    expect((await leader.fetch(replicaFetch(3, { lastFetchedEpoch: 5 }), 2)).divergingEpoch).toEqual({ epoch: 5, endOffset: 1 });
    expect(leader.offsetForLeaderEpoch(5, 4)).toEqual({ errorCode: 'NONE', epoch: 4, endOffset: 0 });
    expect(leader.offsetForLeaderEpoch(4, 4).errorCode).toBe('FENCED_LEADER_EPOCH');
  });

  it('checkpoints the high watermark and loads it when leading again', async () => {
    const { leader, checkpoint, log, timers } = await setup({ isr: [1], minInsyncReplicas: 1 });
    await leader.append(batch('a'), { acks: -1 }).catch(() => undefined);
    await leader.append(batch('b'), { acks: 1 });
    await settle();
    expect(checkpoint.value).toBe(2);
    await leader.resign();
    await expect(leader.append(batch('c'), { acks: 1 })).rejects.toMatchObject({ code: 'NOT_LEADER' });
    const again = await createPartitionLeader(
      { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: 6, partitionEpoch: 9, replicas: [1, 2], isr: [1, 2] },
      { log, clock: timers.clock, timers, checkpoint, alterPartition: async () => ({ leaderEpoch: 6, partitionEpoch: 10, isr: [1, 2] }) },
    );
    expect(again.highWatermark).toBe(2);
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 5, startOffset: 0 }, { epoch: 6, startOffset: 2 }]);
    await again.close();
  });

  it('starts from the high watermark it knew as a follower when its checkpoint is behind (sim seed 128), never past its log end', async () => {
    const { leader, checkpoint, log, timers } = await setup({ isr: [1], minInsyncReplicas: 1 });
    for (const v of ['a', 'b', 'c']) await leader.append(batch(v), { acks: 1 });
    await settle();
    await leader.resign();
    await leader.close();
    checkpoint.value = 0; // written before the restart; the follower has since learned HW 3 from its leader
    const lead = (followerHw: number, epoch: number) =>
      createPartitionLeader(
        { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: epoch, partitionEpoch: 9, replicas: [1, 2], isr: [1, 2] },
        { log, clock: timers.clock, timers, checkpoint, alterPartition: async () => ({ leaderEpoch: epoch, partitionEpoch: 10, isr: [1, 2] }) },
        followerHw,
      );
    const again = await lead(3, 6);
    expect(again.highWatermark).toBe(3);
    await again.resign();
    await again.close();
    checkpoint.value = 0;
    const clamped = await lead(7, 7);
    expect(clamped.highWatermark).toBe(3);
    await clamped.close();
  });

  it('regression (sim seed 128): a leader that starts above its checkpoint checkpoints that HW when it resigns, though it never moved', async () => {
    const { leader, checkpoint, log, timers } = await setup({ isr: [1], minInsyncReplicas: 1 });
    for (const v of ['a', 'b', 'c']) await leader.append(batch(v), { acks: 1 });
    await settle();
    await leader.close();
    checkpoint.value = 0; // behind: the broker learned HW 3 earlier in its run (as a follower, or as an earlier leader)
    const again = await createPartitionLeader(
      { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: 6, partitionEpoch: 9, replicas: [1, 2], isr: [1, 2] },
      { log, clock: timers.clock, timers, checkpoint, alterPartition: async () => ({ leaderEpoch: 6, partitionEpoch: 10, isr: [1, 2] }) },
      3,
    );
    expect(again.highWatermark).toBe(3);
    // No produce moves it; resigning (the broker self-fenced, or another leads) must still leave 3 on disk, or the
    // next leadership of this broker starts from 0 (it counted the start as saved already).
    await again.resign();
    expect(checkpoint.value).toBe(3);
  });

  it('fails waiting produces with NOT_LEADER when it resigns', async () => {
    const { leader } = await setup();
    const produced = leader.append(batch('a'), { acks: -1 }).catch((e: unknown) => e);
    await settle();
    await leader.resign();
    const err = await produced;
    expect(isMqError(err, 'NOT_LEADER')).toBe(true);
    expect((await leader.fetch(replicaFetch(0), 2)).errorCode).toBe('NOT_LEADER');
  });

  it('refuses to lead an epoch older than its log holds', async () => {
    const { log, timers, checkpoint } = await setup();
    await expect(
      createPartitionLeader(
        { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: 4, partitionEpoch: 1, replicas: [1], isr: [1] },
        { log, clock: timers.clock, timers, checkpoint, alterPartition: async () => ({ leaderEpoch: 4, partitionEpoch: 2, isr: [1] }) },
      ),
    ).rejects.toMatchObject({ code: 'FENCED_LEADER_EPOCH' });
  });

  it('keeps the records it was given, byte for byte, stamped with its epoch', async () => {
    const { leader, log } = await setup({ isr: [1] });
    await leader.append(batch('hello'), { acks: 1 });
    const [stored] = log.batches();
    expect(stored!.epoch).toBe(5);
    expect(decodeBatchSync(stored!.bytes).records[0]!.value!.toString()).toBe('hello');
  });

  it('refuses a corrupt produce with a typed error and appends nothing', async () => {
    const { leader, log } = await setup({ isr: [1], minInsyncReplicas: 1 });
    const bad = batch('a');
    bad[bad.length - 1] ^= 0xff; // flips a record byte: the CRC no longer matches
    await expect(leader.append(bad, { acks: -1 })).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    await expect(leader.append(Buffer.from('not a batch'), { acks: 1 })).rejects.toMatchObject({ code: 'CORRUPT_MESSAGE' });
    expect(log.logEndOffset).toBe(0);
    await expect(leader.append(batch('b'), { acks: -1 })).resolves.toMatchObject({ baseOffset: 0 });
  });

  it('lets an acks=all waiter go when its signal aborts', async () => {
    const { leader } = await setup();
    const ac = new AbortController();
    const produced = leader.append(batch('a'), { acks: -1, signal: ac.signal }).catch((e: unknown) => e);
    await settle();
    expect(leader.pendingProduces).toBe(1);
    ac.abort(new Error('client went away'));
    expect(await produced).toMatchObject({ message: 'client went away' });
    expect(leader.pendingProduces).toBe(0);
  });

  it('removes at once an ISR member that comes back below the high watermark (an empty disk)', async () => {
    const s = await setup({ replicaLagTimeMaxMs: 60_000 });
    const { leader } = s;
    for (let i = 0; i < 3; i++) await leader.append(batch(`v${i}`), { acks: 1 });
    await leader.fetch(replicaFetch(3), 2);
    await leader.fetch(replicaFetch(3), 3);
    expect(leader.highWatermark).toBe(3);
    // Broker 3 restarts with an empty log, long before the lag time would notice.
    await leader.fetch(replicaFetch(0, { lastFetchedEpoch: -1 }), 3);
    await settle();
    expect(s.proposals.map((p) => p.isr)).toEqual([[1, 2]]);
    expect(leader.isr).toEqual([1, 2]);
    expect(leader.highWatermark).toBe(3);
    // It refetches and rejoins once caught up.
    await leader.fetch(replicaFetch(3), 3);
    await settle();
    expect(leader.isr).toEqual([1, 2, 3]);
  });
});

describe('PartitionLeader on a log that records epochs only on append', () => {
  it('answers OffsetForLeaderEpoch as if its epoch had been recorded when it took over', async () => {
    const timers = new ManualTimers(0);
    const log = new MemoryLog({ assignLeaderEpoch: false }); // like @mq/log-store today
    for (let i = 0; i < 3; i++) await log.append(batch(`v${i}`), { leaderEpoch: 1 });
    const leader = await createPartitionLeader(
      { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: 3, partitionEpoch: 0, replicas: [1, 2], isr: [1, 2] },
      { log, clock: timers.clock, timers, checkpoint: new MemoryCheckpoint(), alterPartition: async (r) => ({ leaderEpoch: 3, partitionEpoch: 1, isr: r.isr }) },
    );
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 1, startOffset: 0 }]);
    // A follower that led epoch 2 (never seen here) learns epoch 1 ended at 3, not "unknown".
    expect(leader.offsetForLeaderEpoch(3, 2)).toEqual({ errorCode: 'NONE', epoch: 1, endOffset: 3 });
    expect(leader.offsetForLeaderEpoch(3, 3)).toEqual({ errorCode: 'NONE', epoch: 3, endOffset: 3 });
    await leader.append(batch('x'), { acks: 1 });
    expect(log.leaderEpochs.entries).toEqual([{ epoch: 1, startOffset: 0 }, { epoch: 3, startOffset: 3 }]);
    expect(leader.offsetForLeaderEpoch(3, 2)).toEqual({ errorCode: 'NONE', epoch: 1, endOffset: 3 });
    await leader.close();
  });
});

describe('PartitionLeader when the controller moves leadership in the command that expands the ISR', () => {
  it('keeps the expanded ISR for the high watermark until it learns it is deposed: it acknowledges nothing the new leader may lack', async () => {
    // ISR {1, 2}; replica 3 is being added (a reassignment). When 3 catches up, the leader proposes ISR {1, 2, 3};
    // the controller commits it and, in the same command, makes 3 the leader (epoch 6) because 1 is being removed.
    const s = await setup({ isr: [1, 2] });
    s.answer = async (r) => ({ leaderEpoch: r.leaderEpoch + 1, partitionEpoch: 9, isr: r.isr, replicas: [2, 3] });
    await s.leader.append(batch('a'), { acks: 1 });
    await s.leader.fetch(replicaFetch(1), 2);
    await s.leader.fetch(replicaFetch(1), 3); // 3 has offset 0: caught up, the expansion is proposed
    await settle();
    expect(s.proposals.map((p) => p.isr)).toEqual([[1, 2, 3]]);
    // Before broker 1 has applied the new leadership: an acks=all produce that only broker 2 copies.
    let acked = false;
    const produced = s.leader.append(batch('b'), { acks: -1, timeoutMs: 2_000 }).then(
      () => (acked = true),
      () => undefined,
    );
    await settle();
    await s.leader.fetch(replicaFetch(2), 2);
    await settle();
    // Broker 3 (the new leader) never fetched offset 1: acknowledging it would let 3 lead without it.
    expect(s.leader.highWatermark).toBe(1);
    expect(acked).toBe(false);
    await s.timers.advance(2_001);
    await produced;
    expect(acked).toBe(false);
  });
});

/** A log whose producer-state check refuses every append, as the log store does a sequence gap. */
class GapLog extends MemoryLog {
  override append(): Promise<never> {
    return Promise.reject(new MqError('OUT_OF_ORDER_SEQUENCE_NUMBER', 'producer 1000 (epoch 0) sent sequence 3, expected 1: a batch before it is missing', { producerId: 1000, sequence: 3, expected: 1 }));
  }
}

describe('PartitionLeader refusing a producer sequence', () => {
  const gapLog = (timers: ManualTimers) => new GapLog({ clock: timers.clock });

  it('regression (issue 21): a leader replaced while paused, not knowing it yet, answers a sequence gap with NOT_LEADER (retriable), not OUT_OF_ORDER_SEQUENCE_NUMBER, when it resigns', async () => {
    const { leader } = await setup({ log: gapLog });
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 5_000 }).catch((e: unknown) => e);
    await settle();
    await leader.resign();
    const err = await produced;
    expect(isMqError(err, 'NOT_LEADER')).toBe(true);
    expect((err as MqError).retriable).toBe(true);
  });

  it('answers NOT_LEADER when no in-sync follower fetches within the produce timeout (cut off from them)', async () => {
    const { leader, timers } = await setup({ log: gapLog });
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 5_000 }).catch((e: unknown) => e);
    await settle();
    await timers.advance(5_000);
    expect(isMqError(await produced, 'NOT_LEADER')).toBe(true);
  });

  it('answers the refusal as it is once an in-sync follower fetches from it at its epoch (it still leads)', async () => {
    const { leader } = await setup({ log: gapLog });
    const produced = leader.append(batch('a'), { acks: -1, timeoutMs: 5_000 }).catch((e: unknown) => e);
    await settle();
    await leader.fetch(replicaFetch(0, { currentLeaderEpoch: 6 }), 2); // a follower of a later epoch confirms nothing
    let answered = false;
    void produced.then(() => (answered = true));
    await settle();
    expect(answered).toBe(false);
    await leader.fetch(replicaFetch(0), 2);
    expect(isMqError(await produced, 'OUT_OF_ORDER_SEQUENCE_NUMBER')).toBe(true);
  });

  it('alone in the ISR answers the refusal at once (no one else can lead)', async () => {
    const { leader } = await setup({ log: gapLog, isr: [1], minInsyncReplicas: 1 });
    await expect(leader.append(batch('a'), { acks: -1, timeoutMs: 5_000 })).rejects.toMatchObject({ code: 'OUT_OF_ORDER_SEQUENCE_NUMBER' });
  });
});
