/**
 * The group consumer's delivery semantics, against the client's fake broker
 * (fetch, metadata) and a scripted one-member coordinator that records every
 * commit: what is committed, and when, under at-least-once and at-most-once.
 */
import diagnostics_channel from 'node:diagnostics_channel';
import { MqError, errorNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { Cluster } from '../cluster.js';
import { DIAGNOSTICS_CHANNELS } from '../diagnostics.js';
import { MqClient } from '../client.js';
import { parseClientOptions } from '../options.js';
import { startFakeBroker, type FakeBroker } from '../../test/fake-broker.js';
import { RecordingLogger } from '../../test/recording-logger.js';
import type { CommittedOffset, TopicPartitionOffsetAndMetadata } from './coordinator-client.js';
import { GroupConsumer, type GroupConsumerOptions, type GroupCoordinatorClient } from './group-consumer.js';
import type { Generation } from './types.js';

/** One member, always the leader; commits are recorded, committed offsets served from them. */
class FakeCoordinator implements GroupCoordinatorClient {
  commits: Array<{ offsets: Array<[number, number]>; generation: number | null }> = [];
  stored = new Map<number, number>();
  leaves = 0;

  async joinGroup(req: mq.JoinGroupRequest.$Properties): Promise<mq.JoinGroupResponse.$Properties> {
    if (!req.memberId) return { errorCode: errorNumber('MEMBER_ID_REQUIRED'), memberId: 'm-1' };
    return { errorCode: 0, generationId: 1, memberId: 'm-1', leader: 'm-1', protocolName: req.protocols![0]!.name, members: [{ memberId: 'm-1', metadata: req.protocols![0]!.metadata }] };
  }
  async syncGroup(req: mq.SyncGroupRequest.$Properties): Promise<mq.SyncGroupResponse.$Properties> {
    return { errorCode: 0, assignment: req.assignments?.[0]?.assignment ?? new Uint8Array() };
  }
  async heartbeat(): Promise<mq.HeartbeatResponse.$Properties> {
    return { errorCode: 0 };
  }
  async leaveGroup(): Promise<mq.LeaveGroupResponse.$Properties> {
    this.leaves++;
    return { errorCode: 0 };
  }
  async commit(offsets: readonly TopicPartitionOffsetAndMetadata[], generation: Generation | null): Promise<void> {
    this.commits.push({ offsets: offsets.map((o) => [o.partition, o.offset]), generation: generation?.generationId ?? null });
    for (const o of offsets) this.stored.set(o.partition, o.offset);
  }
  async committed(partitions?: readonly { topic: string; partition: number }[]): Promise<CommittedOffset[]> {
    return (partitions ?? []).map((tp) => ({ ...tp, offset: this.stored.get(tp.partition) ?? -1, metadata: '', leaderEpoch: -1 }));
  }
  lastCommitted(): Array<[number, number]> {
    return this.commits.at(-1)?.offsets ?? [];
  }
}

let broker: FakeBroker;
let client: MqClient;
let cluster: Cluster;
let coord: FakeCoordinator;

beforeEach(async () => {
  broker = await startFakeBroker({ topics: { t: 1 } });
  client = new MqClient({ bootstrap: broker.address });
  cluster = new Cluster(parseClientOptions({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 } }));
  coord = new FakeCoordinator();
  const p = client.producer({ lingerMs: 0 });
  await p.sendBatch('t', Array.from({ length: 20 }, (_, i) => ({ value: `v${i}`, partition: 0 })));
  await p.close();
});
afterEach(async () => {
  cluster.close();
  await client.close({ timeoutMs: 1000 });
  await broker.close();
});

function consumer(options: Partial<GroupConsumerOptions> = {}): GroupConsumer {
  const c = new GroupConsumer(
    cluster,
    { groupId: 'g', autoOffsetReset: 'earliest', sessionTimeoutMs: 6000, heartbeatIntervalMs: 1000, maxPollRecords: 5, autoCommitIntervalMs: 60_000, ...options },
    undefined,
    { coordinator: coord },
  );
  c.subscribe(['t']);
  return c;
}

async function pollSome(c: GroupConsumer): Promise<number[]> {
  for (let i = 0; i < 50; i++) {
    const rs = await c.poll(100);
    if (rs.length > 0) return rs.map((r) => r.offset);
  }
  throw new Error('no records');
}

describe('group consumer', () => {
  it('at-least-once: commit() covers exactly what poll handed out; close commits and leaves', async () => {
    const c = consumer();
    expect(await pollSome(c)).toEqual([0, 1, 2, 3, 4]);
    expect(coord.commits).toEqual([]);
    await c.commit();
    expect(coord.commits).toEqual([{ offsets: [[0, 5]], generation: 1 }]);
    expect(await pollSome(c)).toEqual([5, 6, 7, 8, 9]);
    await c.close();
    expect(coord.lastCommitted()).toEqual([[0, 10]]);
    expect(coord.leaves).toBe(1);
  });

  it('auto-commit commits at the next poll only what the previous poll returned', async () => {
    const c = consumer({ autoCommitIntervalMs: 1 });
    expect(await pollSome(c)).toEqual([0, 1, 2, 3, 4]);
    await new Promise((r) => setTimeout(r, 5));
    expect(await pollSome(c)).toEqual([5, 6, 7, 8, 9]);
    await new Promise((r) => setTimeout(r, 20));
    // The second poll's auto-commit covered the first poll's records, not the second's.
    expect(coord.commits.map((x) => x.offsets)).toContainEqual([[0, 5]]);
    expect(coord.commits.some((x) => x.offsets.some(([, o]) => o > 5))).toBe(false);
    await c.close();
  });

  it('at-most-once: offsets are committed before the records are handed out', async () => {
    const c = consumer({ delivery: 'at-most-once' });
    expect(await pollSome(c)).toEqual([0, 1, 2, 3, 4]);
    expect(coord.lastCommitted()).toEqual([[0, 5]]);
    expect(await pollSome(c)).toEqual([5, 6, 7, 8, 9]);
    expect(coord.lastCommitted()).toEqual([[0, 10]]);
    await c.close();
  });

  it('starts at the group\'s committed offset; autoOffsetReset applies only without one', async () => {
    coord.stored.set(0, 12);
    const c = consumer({ autoOffsetReset: 'latest' });
    expect(await pollSome(c)).toEqual([12, 13, 14, 15, 16]);
    expect(await c.committed()).toEqual([{ topic: 't', partition: 0, offset: 12, metadata: '', leaderEpoch: -1 }]);
    await c.close();
  });

  it('run(): a failing handler rejects run() and its record comes again', async () => {
    const c = consumer();
    const seen: number[] = [];
    await expect(
      c.run({
        eachMessage: ({ message }) => {
          if (message.offset === 3 && !seen.includes(3)) {
            seen.push(3);
            throw new Error('boom');
          }
          seen.push(message.offset);
        },
      }),
    ).rejects.toThrow('boom');
    await c.commit();
    expect(coord.lastCommitted()).toEqual([[0, 3]]);
    const stop = new AbortController();
    const done = c.run({
      signal: stop.signal,
      pollTimeoutMs: 50,
      eachMessage: ({ message }) => {
        seen.push(message.offset);
        if (message.offset === 19) stop.abort();
      },
    });
    await done;
    expect(seen).toEqual([0, 1, 2, 3, ...Array.from({ length: 17 }, (_, i) => i + 3)]);
    await c.close();
    expect(coord.lastCommitted()).toEqual([[0, 20]]);
  });

  it('a partition whose committed offset cannot be fetched yet is started on a later poll, at that offset', async () => {
    coord.stored.set(0, 15);
    const real = coord.committed.bind(coord);
    let failures = 1;
    coord.committed = async (tps) => {
      if (failures-- > 0) throw new MqError('COORDINATOR_NOT_AVAILABLE', 'coordinator moving');
      return real(tps);
    };
    const c = consumer();
    expect(await pollSome(c)).toEqual([15, 16, 17, 18, 19]);
    await c.close();
  });

  it("logs a failed auto-commit to the client's logger (ClientOptions.logger)", async () => {
    const logger = new RecordingLogger();
    const logged = new Cluster(parseClientOptions({ bootstrap: broker.address, retry: { initialDelayMs: 5, maxDelayMs: 20 }, logger }));
    coord.commit = async () => {
      throw new MqError('COORDINATOR_NOT_AVAILABLE', 'coordinator moving');
    };
    const c = new GroupConsumer(logged, { groupId: 'g', autoOffsetReset: 'earliest', maxPollRecords: 5, autoCommitIntervalMs: 1 }, undefined, { coordinator: coord });
    c.subscribe(['t']);
    try {
      expect(await pollSome(c)).toEqual([0, 1, 2, 3, 4]);
      await new Promise((r) => setTimeout(r, 5));
      await pollSome(c);
      await new Promise((r) => setTimeout(r, 20));
      const line = logger.find('warn', /^auto-commit failed/);
      expect(line?.obj).toMatchObject({ group: 'g', err: expect.objectContaining({ code: 'COORDINATOR_NOT_AVAILABLE' }) });
      // the member's own lines (joining, assignment) reach the same logger
      expect(logger.lines.some((l) => l.level === 'info' && l.obj.group === 'g' && l !== line)).toBe(true);
    } finally {
      await c.close().catch(() => undefined);
      logged.close();
    }
  });

  it('publishes its rebalances on the mq:client:rebalance diagnostics channel', async () => {
    const events: unknown[] = [];
    const onEvent = (m: unknown) => void events.push(m);
    diagnostics_channel.subscribe(DIAGNOSTICS_CHANNELS.rebalance, onEvent);
    try {
      const c = consumer();
      await pollSome(c);
      expect(events).toEqual([{ groupId: 'g', event: 'assigned', partitions: [{ topic: 't', partition: 0 }] }]);
      await c.close();
      expect(events).toEqual([
        { groupId: 'g', event: 'assigned', partitions: [{ topic: 't', partition: 0 }] },
        { groupId: 'g', event: 'revoked', partitions: [{ topic: 't', partition: 0 }] },
      ]);
    } finally {
      diagnostics_channel.unsubscribe(DIAGNOSTICS_CHANNELS.rebalance, onEvent);
    }
  });

  it('refuses manual assignment once subscribed, and bad options', () => {
    const c = consumer();
    expect(() => c.assign([{ topic: 't', partition: 0 }])).toThrow(/subscribed/);
    expect(() => new GroupConsumer(cluster, { groupId: 'g', delivery: 'exactly-once' as never })).toThrow(/delivery/);
    return c.close();
  });
});
