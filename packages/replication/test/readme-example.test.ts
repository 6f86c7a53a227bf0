/**
 * The README's usage example, run as written (temp dirs instead of /tmp/mq-demo).
 */
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeBatchSync } from '@mq/protocol/batch';
import { openLog } from '@mq/log-store';
import {
  FileCheckpoint,
  createFollowerFetcher,
  createPartitionLeader,
  handleFetch,
  handleOffsetForLeaderEpoch,
} from '../src/index.js';
import { systemClock, systemTimers } from '@mq/protocol/components';

it('runs the README example', async () => {
  const root = await mkdtemp(join(tmpdir(), 'mq-readme-'));
  try {
    await mkdir(join(root, 'b1'));
    await mkdir(join(root, 'b2'));
    // ---- README example starts
    const leaderLog = await openLog(join(root, 'b1/orders-0'));
    const followerLog = await openLog(join(root, 'b2/orders-0'));

    // Broker 1 leads orders-0 in leader epoch 0; the controller answers ISR changes.
    const leader = await createPartitionLeader(
      { topic: 'orders', partition: 0, brokerId: 1, leaderEpoch: 0, partitionEpoch: 0, replicas: [1, 2], isr: [1, 2], minInsyncReplicas: 2 },
      {
        log: leaderLog,
        clock: systemClock,
        timers: systemTimers,
        checkpoint: new FileCheckpoint(join(root, 'b1/orders-0.hw')),
        alterPartition: async (req) => ({ leaderEpoch: req.leaderEpoch, partitionEpoch: req.partitionEpoch + 1, isr: req.isr }),
      },
    );

    // Broker 2 follows it. The broker sends these requests over its transport;
    // here the "network" is a function call into broker 1's handlers.
    const leaders = { timers: systemTimers, leaders: () => leader };
    const fetcher = createFollowerFetcher(
      { brokerId: 2, leaderId: 1 },
      {
        fetch: (_leaderId, request, signal) => handleFetch(request, leaders, signal),
        offsetForLeaderEpoch: async (_leaderId, request) => handleOffsetForLeaderEpoch(request, leaders),
        clock: systemClock,
        timers: systemTimers,
      },
    );
    await fetcher.addPartition({
      topic: 'orders',
      partition: 0,
      log: followerLog,
      leaderEpoch: 0,
      checkpoint: new FileCheckpoint(join(root, 'b2/orders-0.hw')),
    });

    // acks=all: resolves once both replicas have the batch.
    const { baseOffset } = await leader.append(encodeBatchSync([{ value: 'hello' }]), { acks: -1, timeoutMs: 5_000 });
    // baseOffset 0, leader.highWatermark 1, followerLog.logEndOffset 1

    await fetcher.close();
    await leader.close();
    await Promise.all([leaderLog.close(), followerLog.close()]);
    // ---- README example ends
    expect([baseOffset, leader.highWatermark, followerLog.logEndOffset]).toEqual([0, 1, 1]);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});
