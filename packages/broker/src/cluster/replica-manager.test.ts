/**
 * The ReplicaManager's role changes on a real @mq/log-store log, driven by a
 * scripted metadata view (no controller, no network): the replica keeps its
 * high watermark across them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { encodeBatchSync } from '@mq/protocol/batch';
import type { HighWatermarkCheckpoint } from '@mq/replication';
import { ManualTimers } from '@mq/replication/testing';
import { BrokerConfig } from '../config/broker-config.js';
import type { Controller } from '../controller/controller.js';
import type { PartitionRecord, TopicRecord } from '../controller/types.js';
import { logStoreFactory } from '../log-factory.js';
import { ReplicaManager } from './replica-manager.js';

const logger = pino({ level: 'silent' });
let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'mq-replica-manager-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Broker 1, registered in epoch 5, over a metadata view the test sets partition by partition. */
function setup() {
  let partition: PartitionRecord = { replicas: [1, 2], isr: [1], leader: 1, leaderEpoch: 1, partitionEpoch: 1 };
  const topic = (): TopicRecord => ({ name: 't', topicId: 'dGVzdC10b3BpYy1pZDAwMQ', configs: {}, partitions: [partition] });
  const metadata = {
    topics: () => [topic()],
    topic: (name: string) => (name === 't' ? topic() : undefined),
    broker: (id: number) => (id === 1 ? { brokerEpoch: 5 } : undefined),
    onChange: () => () => undefined,
    replicationThrottle: 0,
  };
  const controller = { metadata, leaderlessMs: 0, options: { sessionTimeoutMs: 600 }, submit: () => new Promise(() => undefined) } as unknown as Controller;
  const timers = new ManualTimers(1_000);
  /** A checkpoint that is behind: it still holds what it held before this run (nothing), whatever is saved. */
  const checkpoint: HighWatermarkCheckpoint = { load: async () => undefined, save: async () => undefined };
  const never = (_leader: number, _req: unknown, signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));
  const replicas = new ReplicaManager(
    { brokerId: 1, dataDir: root, config: new BrokerConfig({}), replicaLagTimeMaxMs: 10_000, replicaFetchMaxWaitMs: 500 },
    {
      controller,
      fetch: never,
      // The leader (broker 2) has everything this replica has in its epoch 3: nothing to truncate.
      offsetForLeaderEpoch: async (_leader, req) => ({ partitions: req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode: 'NONE' as const, leaderEpoch: p.leaderEpoch, endOffset: 3 })) }),
      logger,
      clock: timers.clock,
      timers,
      openLog: logStoreFactory(logger, timers.clock),
      brokerEpoch: () => 5,
      checkpointFor: () => checkpoint,
    },
  );
  const apply = async (next: Partial<PartitionRecord>) => {
    partition = { ...partition, ...next };
    replicas.schedule();
    await replicas.settled();
  };
  return { replicas, apply };
}

describe('ReplicaManager', () => {
  it('regression (sim seed 128): a replica keeps its high watermark through leader -> no leader -> leader -> follower, whatever its checkpoint says', async () => {
    const { replicas, apply } = setup();
    replicas.start();
    await replicas.settled();
    const leader = replicas.leaderOf('t', 0)!;
    for (const v of ['a', 'b', 'c']) await leader.append(encodeBatchSync([{ value: v }]), { acks: -1 });
    expect(replicas.highWatermarkOf('t', 0)).toBe(3);
    // No leader in the metadata (as when this broker resigned, fenced, or its registration is behind): no role here.
    await apply({ leader: -1, leaderEpoch: 2, partitionEpoch: 2 });
    expect(replicas.hostedPartition('t', 0)?.role).toBe('none');
    // Leading again: from the HW it had (it used to start from its checkpoint, 0: consumers saw the HW fall back).
    await apply({ leader: 1, leaderEpoch: 3, partitionEpoch: 3 });
    expect(replicas.highWatermarkOf('t', 0)).toBe(3);
    // A follower of broker 2 before any fetch is answered: still 3.
    await apply({ leader: 2, leaderEpoch: 4, partitionEpoch: 4, isr: [2, 1] });
    expect(replicas.hostedPartition('t', 0)?.role).toBe('follower');
    expect(replicas.highWatermarkOf('t', 0)).toBe(3);
    await replicas.close();
  });
});
