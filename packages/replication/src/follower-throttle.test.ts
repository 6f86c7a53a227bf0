import { encodeBatchSync, setBaseOffset } from '@mq/protocol/batch';
import { createFollowerFetcher } from './follower-fetcher.js';
import { ManualTimers, MemoryCheckpoint, MemoryLog, settle } from './testing/index.js';
import type { FetchRequest } from './types.js';

/** A leader with an endless log of ~1 KB batches: every fetch gets the next batch of every partition asked for. */
function endlessLeader() {
  const requests: { at: number; partitions: string[] }[] = [];
  const value = 'x'.repeat(1000);
  return {
    requests,
    offsetForLeaderEpoch: async () => ({ partitions: [] }),
    fetch: async (_leader: number, req: FetchRequest) => ({
      partitions: req.partitions.map((p) => {
        const b = encodeBatchSync([{ value }], { now: 1, partitionLeaderEpoch: 3 });
        setBaseOffset(b, 0, p.fetchOffset);
        return { topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, highWatermark: p.fetchOffset + 1, logStartOffset: 0, logEndOffset: p.fetchOffset + 1, records: b, currentLeaderId: 2, currentLeaderEpoch: 3 };
      }),
    }),
  };
}

describe('FollowerFetcher replication throttle', () => {
  it('holds the throttled partitions to the rate (bytes/s) while the others fetch freely, and can be changed at run time', async () => {
    const timers = new ManualTimers(0);
    const leader = endlessLeader();
    let fetches = 0;
    const fetch = async (l: number, req: FetchRequest) => {
      fetches++;
      // Each fetch takes 10 ms of (manual) time, as a round trip would.
      await new Promise<void>((r) => timers.setTimeout(r, 10));
      return leader.fetch(l, req);
    };
    const fetcher = createFollowerFetcher({ brokerId: 1, leaderId: 2, highWatermarkCheckpointIntervalMs: 0 }, { ...leader, fetch, clock: timers.clock, timers });
    const free = new MemoryLog();
    const moving = new MemoryLog();
    fetcher.setThrottle(5000); // ~5 batches of ~1 KB per second
    await fetcher.addPartition({ topic: 'free', partition: 0, log: free, leaderEpoch: 3, checkpoint: new MemoryCheckpoint() });
    await fetcher.addPartition({ topic: 'moving', partition: 0, log: moving, leaderEpoch: 3, checkpoint: new MemoryCheckpoint(), throttled: true });
    for (let i = 0; i < 200; i++) {
      await timers.advance(10);
      await settle();
    }
    // Two seconds: the free partition fetched on every round trip, the throttled one ~5 KB/s (burst of one second).
    expect(free.logEndOffset).toBeGreaterThan(150);
    expect(moving.logEndOffset).toBeGreaterThanOrEqual(8);
    expect(moving.logEndOffset).toBeLessThanOrEqual(16);
    // Lifting the throttle (0) and taking the partition out of it: it fetches freely again.
    const before = moving.logEndOffset;
    fetcher.setThrottle(0);
    for (let i = 0; i < 50; i++) {
      await timers.advance(10);
      await settle();
    }
    expect(moving.logEndOffset - before).toBeGreaterThan(30);
    expect(fetches).toBeGreaterThan(200);
    await fetcher.close();
  });
});
