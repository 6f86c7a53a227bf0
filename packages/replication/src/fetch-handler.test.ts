import { encodeBatchSync } from '@mq/protocol/batch';
import { handleFetch, ParkedFetches } from './fetch-handler.js';
import { ThrottleBucket } from './throttle-bucket.js';
import { handleOffsetForLeaderEpoch } from './offset-for-leader-epoch-handler.js';
import { createPartitionLeader, type PartitionLeader } from './partition-leader.js';
import { ManualTimers, MemoryCheckpoint, MemoryLog, settle } from './testing/index.js';
import type { FetchRequest, ReadPool } from './types.js';

function batch(value: string): Buffer {
  return encodeBatchSync([{ value }], { now: 1 });
}

async function setup(isr = [1, 2], makeLog: () => MemoryLog = () => new MemoryLog()) {
  const timers = new ManualTimers(0);
  const leaders = new Map<string, PartitionLeader>();
  for (const p of [0, 1]) {
    leaders.set(
      `t-${p}`,
      await createPartitionLeader(
        { topic: 't', partition: p, brokerId: 1, leaderEpoch: 1, partitionEpoch: 1, replicas: [1, 2], isr, replicaLagTimeMaxMs: 60_000 },
        {
          log: makeLog(),
          clock: timers.clock,
          timers,
          checkpoint: new MemoryCheckpoint(),
          alterPartition: async (r) => ({ leaderEpoch: 1, partitionEpoch: 2, isr: r.isr }),
        },
      ),
    );
  }
  const components = { timers, leaders: (t: string, p: number) => leaders.get(`${t}-${p}`), hosts: (t: string) => t === 't' };
  return { timers, leaders, components, leader: (p: number) => leaders.get(`t-${p}`)! };
}

function request(over: Partial<FetchRequest> = {}, offsets: number[] = [0]): FetchRequest {
  return {
    replicaId: -1,
    maxWaitMs: 1_000,
    minBytes: 1,
    maxBytes: 1 << 20,
    partitions: offsets.map((fetchOffset, partition) => ({ topic: 't', partition, fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1 })),
    ...over,
  };
}

describe('handleFetch', () => {
  it.each([
    ['in parallel (the limits fit maxBytes)', 1 << 20],
    ['one after another (maxBytes shared)', 100],
  ])('reads the partitions of a large fetch in slices, %s (a fetch of thousands of partitions read them all in one step)', async (_name, maxBytes) => {
    const { components, leaders } = await setup();
    // 2,000 partition entries over the two leaders (as many entries as a client may name); the slicer runs out after every 2 reads.
    let started = 0;
    const startedPerSlice: number[] = [];
    const counting = new Map([...leaders].map(([k, l]) => [k, new Proxy(l, { get: (o, prop) => (prop === 'fetch' ? (...a: Parameters<PartitionLeader['fetch']>) => (started++, o.fetch(...a)) : Reflect.get(o, prop)) })]));
    const slicer = {
      get due() {
        return started % 2 === 0;
      },
      async maybeYield() {
        startedPerSlice.push(started);
        await new Promise((resolve) => setImmediate(resolve));
      },
    };
    const partitions = Array.from({ length: 2000 }, (_, i) => ({ topic: 't', partition: i % 2, fetchOffset: 0, partitionMaxBytes: 10, currentLeaderEpoch: -1 }));
    const r = await handleFetch(request({ maxWaitMs: 0, maxBytes, partitions }), { ...components, leaders: (t, p) => counting.get(`${t}-${p}`), slicer });
    expect(r.partitions).toHaveLength(2000);
    expect(started).toBe(2000);
    // A yield after every second read started: no step started more than two.
    expect(startedPerSlice.length).toBeGreaterThanOrEqual(999);
    expect(Math.max(...startedPerSlice.map((n, i) => n - (startedPerSlice[i - 1] ?? 0)))).toBeLessThanOrEqual(2);
  });

  it('parks a consumer fetch until the high watermark moves, not merely the log end', async () => {
    const { components, leader } = await setup();
    let answered = false;
    const pending = handleFetch(request(), components).then((r) => {
      answered = true;
      return r;
    });
    await settle();
    expect(answered).toBe(false);
    await leader(0).append(batch('a'), { acks: 1 });
    await settle();
    expect(answered).toBe(false); // appended, not committed
    await leader(0).fetch({ topic: 't', partition: 0, fetchOffset: 1, partitionMaxBytes: 1, currentLeaderEpoch: 1 }, 2);
    const response = await pending;
    expect(response.partitions[0]!.records.length).toBeGreaterThan(0);
    expect(response.partitions[0]!.highWatermark).toBe(1);
  });

  it('counts parked requests (the fetch purgatory), consumers and followers apart, until each is answered', async () => {
    const { components, timers } = await setup();
    const parked = new ParkedFetches();
    const c = { ...components, parked };
    const consumer = handleFetch(request({ maxWaitMs: 500 }), c);
    const follower = handleFetch(request({ replicaId: 2, replicaEpoch: 1, maxWaitMs: 800 }), c);
    await settle();
    expect(parked).toEqual({ consumers: 1, followers: 1 });
    await timers.advance(500);
    await consumer;
    expect(parked).toEqual({ consumers: 0, followers: 1 });
    await timers.advance(300);
    await follower;
    expect(parked).toEqual({ consumers: 0, followers: 0 });
    // Data already there: answered at once, never parked.
    await handleFetch(request({ maxWaitMs: 500, minBytes: 0 }), c);
    expect(parked).toEqual({ consumers: 0, followers: 0 });
  });

  it('answers an empty fetch after maxWaitMs, and removes its listeners', async () => {
    const { components, timers, leader } = await setup();
    let answered = false;
    const pending = handleFetch(request({ maxWaitMs: 500 }), components).then((r) => {
      answered = true;
      return r;
    });
    await timers.advance(499);
    expect(answered).toBe(false);
    await timers.advance(1);
    const r = await pending;
    expect(r.partitions[0]!.records.length).toBe(0);
    expect(timers.pendingCount).toBe(2); // only the two leaders' ISR checks remain
    // No leftover watcher: appends do not call into the finished fetch.
    await leader(0).append(batch('a'), { acks: 1 });
  });

  it('waits for minBytes across partitions', async () => {
    const { components, leader } = await setup([1]);
    const size = batch('a').length;
    let answered = false;
    const pending = handleFetch(request({ minBytes: size * 2 }, [0, 0]), components).then((r) => {
      answered = true;
      return r;
    });
    await leader(0).append(batch('a'), { acks: 1 });
    await settle();
    expect(answered).toBe(false);
    await leader(1).append(batch('b'), { acks: 1 });
    const r = await pending;
    expect(r.partitions.map((p) => p.records.length)).toEqual([size, size]);
  });

  it('answers at once with errors and gives unknown partitions their own code', async () => {
    const { components } = await setup();
    const r = await handleFetch(
      {
        ...request(),
        partitions: [
          { topic: 't', partition: 0, fetchOffset: 0, partitionMaxBytes: 100, currentLeaderEpoch: 0 },
          { topic: 't', partition: 7, fetchOffset: 0, partitionMaxBytes: 100, currentLeaderEpoch: -1 },
          { topic: 'nope', partition: 0, fetchOffset: 0, partitionMaxBytes: 100, currentLeaderEpoch: -1 },
        ],
      },
      components,
    );
    expect(r.partitions.map((p) => p.errorCode)).toEqual(['FENCED_LEADER_EPOCH', 'NOT_LEADER', 'UNKNOWN_TOPIC_OR_PARTITION']);
  });

  it('deleting and recreating a topic copies the old topic\'s records into the new one: a replica fetch naming another incarnation is answered at once with INCONSISTENT_TOPIC_ID', async () => {
    const { components, leader } = await setup();
    await leader(0).append(batch('a'), { acks: 1 });
    const r = await handleFetch(
      { ...request({ replicaId: 2, minBytes: 1 << 20 }), partitions: [{ topic: 't', topicId: 'OLD', partition: 0, fetchOffset: 0, partitionMaxBytes: 100, currentLeaderEpoch: 1 }] },
      components,
    );
    expect(r.partitions[0]).toMatchObject({ errorCode: 'INCONSISTENT_TOPIC_ID', topicId: 'OLD' });
    expect(r.partitions[0]!.records.length).toBe(0);
    const o = handleOffsetForLeaderEpoch({ replicaId: 2, partitions: [{ topic: 't', topicId: 'OLD', partition: 0, currentLeaderEpoch: 1, leaderEpoch: 1 }] }, components);
    expect(o.partitions[0]).toMatchObject({ errorCode: 'INCONSISTENT_TOPIC_ID', topicId: 'OLD', endOffset: -1 });
  });

  it('keeps a response within maxBytes after the first partition, but always returns one batch', async () => {
    const { components, leader } = await setup([1]);
    for (let i = 0; i < 3; i++) {
      await leader(0).append(batch(`a${i}`), { acks: 1 });
      await leader(1).append(batch(`b${i}`), { acks: 1 });
    }
    const size = batch('a0').length;
    const r = await handleFetch(request({ maxBytes: 1, minBytes: 0 }, [0, 0]), components);
    expect(r.partitions.map((p) => p.records.length)).toEqual([size, 0]);
    const r2 = await handleFetch(request({ maxBytes: size * 4, minBytes: 0 }, [0, 0]), components);
    expect(r2.partitions.map((p) => p.records.length)).toEqual([size * 3, size]);
  });

  it('stops waiting when aborted', async () => {
    const { components } = await setup();
    const ac = new AbortController();
    const pending = handleFetch(request({ maxWaitMs: 60_000 }), components, ac.signal);
    await settle();
    ac.abort();
    expect((await pending).partitions[0]!.errorCode).toBe('NONE');
  });

  it('refuses a non-positive maxBytes', async () => {
    const { components } = await setup();
    await expect(handleFetch(request({ maxBytes: 0 }), components)).rejects.toMatchObject({ code: 'INVALID_FETCH_SIZE' });
  });

  it('reads the partitions in parallel when their limits fit in maxBytes', async () => {
    let inFlight = 0;
    let most = 0;
    class SlowLog extends MemoryLog {
      override async read(fromOffset: number, maxBytes: number, options: { maxOffset?: number } = {}) {
        inFlight++;
        most = Math.max(most, inFlight);
        await settle();
        inFlight--;
        return super.read(fromOffset, maxBytes, options);
      }
    }
    const { components, leader } = await setup([1], () => new SlowLog());
    await leader(0).append(batch('a'), { acks: 1 });
    await leader(1).append(batch('b'), { acks: 1 });
    const req = request({ minBytes: 0, maxBytes: 4096 }, [0, 0]);
    for (const p of req.partitions) p.partitionMaxBytes = 2048;
    const r = await handleFetch(req, components);
    expect(r.partitions.map((p) => p.records.length)).toEqual([batch('a').length, batch('b').length]);
    expect(most).toBe(2);
  });

  it('reads into the pool and gives back the buffers of a read it discards when a long-poll reads again', async () => {
    const taken: Buffer[] = [];
    const released: Uint8Array[] = [];
    const pool: ReadPool = {
      take: (size) => {
        const b = Buffer.alloc(size);
        taken.push(b);
        return b;
      },
      release: (view) => void released.push(view),
    };
    class PoolLog extends MemoryLog {
      override async read(fromOffset: number, maxBytes: number, options: { maxOffset?: number; pool?: ReadPool } = {}) {
        const r = await super.read(fromOffset, maxBytes, options);
        if (!options.pool || r.records.length === 0) return r;
        const into = options.pool.take(r.records.length);
        r.records.copy(into);
        return { ...r, records: into };
      }
    }
    const { components, leader } = await setup([1], () => new PoolLog());
    const size = batch('a').length;
    await leader(0).append(batch('a'), { acks: 1 });
    const pending = handleFetch(request({ minBytes: size * 2 }, [0]), { ...components, pool });
    await settle();
    expect(taken).toHaveLength(1); // the first read: below minBytes, so the fetch waits
    await leader(0).append(batch('b'), { acks: 1 });
    const r = await pending;
    expect(r.partitions[0]!.records.length).toBe(size * 2);
    expect(taken).toHaveLength(2);
    expect(r.partitions[0]!.records).toBe(taken[1]);
    expect(released).toEqual([taken[0]]);
  });

  it("holds back, on the leader, a follower's fetch of a partition it is being added to while the throttle is in debt", async () => {
    const { components, timers, leader } = await setup([1]);
    for (let i = 0; i < 10; i++) await leader(0).append(batch(`a${i}`), { acks: 1 });
    await leader(1).append(batch('b'), { acks: 1 });
    const bucket = new ThrottleBucket(timers.clock);
    bucket.setRate(100);
    await timers.advance(1000); // one second of credit: 100 bytes
    // Replica 2 is being added to partition 0 only.
    const c = { ...components, leaderThrottle: { bucket, throttled: (_t: string, p: number, replica: number) => p === 0 && replica === 2 } };
    const follower = (over: Partial<FetchRequest> = {}) => handleFetch(request({ replicaId: 2, replicaEpoch: 1, maxWaitMs: 0, minBytes: 0, ...over }, [0, 0]), c);
    const first = await follower();
    const sent = first.partitions[0]!.records.length;
    expect(sent).toBeGreaterThan(100); // within credit: one read, whatever it holds
    expect(first.partitions[1]!.records.length).toBeGreaterThan(0);
    // In debt now: partition 0 gets nothing, partition 1 (not throttled) and consumers are served as before.
    const held = await follower();
    expect(held.partitions[0]!.records.length).toBe(0);
    expect(held.partitions[0]!.errorCode).toBe('NONE');
    expect(held.partitions[1]!.records.length).toBeGreaterThan(0);
    expect((await handleFetch(request({ maxWaitMs: 0, minBytes: 0 }, [0]), c)).partitions[0]!.records.length).toBeGreaterThan(0); // consumers: never throttled
    // A parked follower fetch is not woken by data it may not have yet: it waits its maxWaitMs.
    let answered = false;
    const parked = handleFetch(request({ replicaId: 2, replicaEpoch: 1, maxWaitMs: 500, minBytes: 1 }, [0]), c).then((r) => {
      answered = true;
      return r;
    });
    await settle();
    expect(answered).toBe(false);
    await timers.advance(500);
    expect((await parked).partitions[0]!.records.length).toBe(0);
    // Once the debt is paid (about sent - 100 bytes at 100 B/s), it copies again.
    await timers.advance(Math.ceil(((sent - 100) / 100) * 1000) + 10);
    expect(bucket.waitMs()).toBe(0);
    expect((await follower()).partitions[0]!.records.length).toBeGreaterThan(0);
  });
});
