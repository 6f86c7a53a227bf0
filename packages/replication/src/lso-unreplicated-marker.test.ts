/**
 * The last stable offset of a leader on a real @mq/log-store log: a
 * transaction's marker appended to the leader's log but not yet below the
 * high watermark does not release the transaction. Were the leader to fail
 * then, the marker could be lost with it and the transaction reopened on
 * the next leader; read_committed readers must not have read past its first
 * offset (Kafka holds the LSO until the HW passes the marker).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatchSync, encodeMarkerBatch, iterateBatches } from '@mq/protocol/batch';
import { openLog, type Log } from '@mq/log-store';
import { createPartitionLeader } from './partition-leader.js';
import { ManualTimers, MemoryCheckpoint } from './testing/index.js';
import type { FetchPartitionRequest } from './types.js';

let dir: string;
let log: Log;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mq-lso-'));
  log = await openLog(dir, { flush: { policy: 'os' } });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

const txn = (seq: number) => encodeBatchSync([{ value: `t${seq}` }], { producerId: 7, producerEpoch: 0, baseSequence: seq, transactional: true, now: 1 });
const fetchFrom = (fetchOffset: number, extra: Partial<FetchPartitionRequest> = {}): FetchPartitionRequest => ({
  topic: 't',
  partition: 0,
  fetchOffset,
  partitionMaxBytes: 1 << 20,
  currentLeaderEpoch: 5,
  lastFetchedEpoch: 5,
  logStartOffset: 0,
  ...extra,
});

test('regression: the LSO stays at a transaction\'s first offset until the high watermark passes its marker', async () => {
  const timers = new ManualTimers(10_000);
  const leader = await createPartitionLeader(
    { topic: 't', partition: 0, brokerId: 1, leaderEpoch: 5, partitionEpoch: 1, replicas: [1, 2], isr: [1, 2], minInsyncReplicas: 1, replicaLagTimeMaxMs: 60_000, highWatermarkCheckpointIntervalMs: 0 },
    { log, clock: timers.clock, timers, checkpoint: new MemoryCheckpoint(), alterPartition: async (r) => ({ leaderEpoch: r.leaderEpoch, partitionEpoch: 2, isr: r.isr }) },
  );
  try {
    await leader.append(encodeBatchSync([{ value: 'plain' }], { now: 1 }), { acks: 1 }); // 0
    await leader.append(txn(0), { acks: 1, transactional: true }); // 1
    await leader.append(txn(1), { acks: 1, transactional: true }); // 2
    await leader.fetch(fetchFrom(3), 2); // the follower has 0-2: HW 3
    expect(leader.highWatermark).toBe(3);
    expect(leader.lastStableOffset).toBe(1);
    await leader.append(encodeMarkerBatch({ producerId: 7, producerEpoch: 0, committed: true, now: 1 }), { acks: 1, coordinator: true }); // 3
    // The marker is in the leader's log only: HW 3, the transaction still holds the LSO at its first offset.
    expect(leader.highWatermark).toBe(3);
    expect(leader.lastStableOffset).toBe(1);
    const reader = await leader.fetch(fetchFrom(0, { currentLeaderEpoch: -1, lastFetchedEpoch: -1 }), -1, { readCommitted: true });
    expect(reader.lastStableOffset).toBe(1);
    expect([...iterateBatches(reader.records)].map((b) => b.header.baseOffset)).toEqual([0]);
    // The follower has the marker: the HW passes it and the transaction is stable.
    await leader.fetch(fetchFrom(4), 2);
    expect(leader.highWatermark).toBe(4);
    expect(leader.lastStableOffset).toBe(4);
  } finally {
    await leader.close();
  }
});
