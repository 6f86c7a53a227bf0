/** Fakes of what the cluster HTTP backend is built from, for its unit tests. */
import { ManualTime } from '@mq/protocol/components';
import type { PartitionRecord, TopicRecord } from '../controller/types.js';
import type { BackendDeps, ClusterBackendComponents } from '../http/backends/cluster/types.js';

/** Metadata with one topic whose partitions' leaders the test sets, and onChange. */
export function fakeMetadata(topic: string, leaders: number[]) {
  const listeners = new Set<() => void>();
  const record = { name: topic, topicId: 'T1', configs: {}, partitions: leaders.map((leader) => ({ leader, leaderEpoch: 1, replicas: [1, 2, 3], isr: [1, 2, 3] }) as unknown as PartitionRecord) } as unknown as TopicRecord;
  return {
    topic: (name: string) => (name === topic ? record : undefined),
    topics: () => [record],
    onChange(fn: () => void) {
      listeners.add(fn);
      return () => void listeners.delete(fn);
    },
    /** Moves partition `p`'s leadership and tells the listeners. */
    lead(p: number, leader: number) {
      (record.partitions[p] as { leader: number }).leader = leader;
      for (const fn of [...listeners]) fn();
    },
  };
}

export function fakeDeps(md: ReturnType<typeof fakeMetadata>, over: Partial<ClusterBackendComponents> = {}, leaderWaitMs = 1000) {
  const time = new ManualTime();
  const logger = { child: () => logger, info() {}, warn() {}, error() {}, debug() {} };
  const c = {
    metadata: md,
    handlers: {},
    peers: { request: async () => ({}) },
    broker: () => ({ clock: time.clock, logger }),
    localLeader: () => undefined,
    ...over,
  } as unknown as ClusterBackendComponents;
  const d = { options: { brokerId: 1, leaderWaitMs, produceTimeoutMs: 30_000, describeTimeoutMs: 2000 }, c, timers: time } as unknown as BackendDeps;
  return { d, time };
}

export const flush = () => new Promise<void>((r) => setImmediate(r));
