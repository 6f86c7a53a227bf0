/**
 * Consumer groups over a replicated `__consumer_offsets`, in process: two
 * brokers, each with its own ClusterGroups, replica logs and (while leading)
 * a real PartitionLeader from @mq/replication; the metadata and follower
 * fetching are driven by the test. Checks creation through the controller,
 * FindCoordinator from the metadata, acks=all commits, the error mapping,
 * and a coordinator failover that keeps every acknowledged commit.
 */
import { MqError, errorCodeFromNumber, errorNumber } from '@mq/protocol/errors';
import { createPartitionLeader, type PartitionLeader } from '@mq/replication';
import { ManualTimers, MemoryCheckpoint, MemoryLog } from '@mq/replication/testing';
import { mq as wire } from '@mq/protocol/wire';
import { ClusterGroups, type GroupsCluster } from './cluster-groups.js';
import { internalTopicReplication } from '../cluster/internal-topic.js';
import { partitionForGroup } from './offsets-schema.js';
import { OFFSETS_TOPIC } from './options.js';
import { groupErrorOf } from './replicated-offsets-log.js';

const PARTITIONS = 2;
const subscription = wire.ConsumerSubscription.encode({ topics: ['orders'] }).finish();
const quiet = { info() {}, warn() {}, error() {}, debug() {} };

interface Replica {
  log: MemoryLog;
  checkpoint: MemoryCheckpoint;
  leader?: PartitionLeader;
}

/** Two brokers' view of one cluster: metadata, replica logs, leaders. */
class World {
  readonly timers = new ManualTimers(1_000);
  topic: { partitions: Array<{ leader: number; leaderEpoch: number; replicas: number[] }> } | undefined;
  readonly created: Array<{ name: string; replicationFactor: number; numPartitions: number; configs: Record<string, string> }> = [];
  readonly replicas = new Map<string, Replica>();
  readonly metadataListeners = new Set<() => void>();
  readonly leadershipListeners = new Map<number, Set<(c: { topic: string; partition: number; leader: boolean }) => void>>();
  live = [1, 2];
  readonly cutOff = new Set<number>();
  isr: number[] = [1, 2];
  minInsync = 2;

  replica(broker: number, partition: number): Replica {
    const k = `${broker}/${partition}`;
    let r = this.replicas.get(k);
    if (!r) this.replicas.set(k, (r = { log: new MemoryLog(), checkpoint: new MemoryCheckpoint() }));
    return r;
  }

  cluster(brokerId: number, topics: GroupsCluster['topics'] = { partitionCount: (t) => (t === 'orders' ? 3 : undefined), logEndOffset: () => undefined }): GroupsCluster {
    const listeners = new Set<(c: { topic: string; partition: number; leader: boolean }) => void>();
    this.leadershipListeners.set(brokerId, listeners);
    return {
      brokerId,
      topic: (name) => (name === OFFSETS_TOPIC ? this.topic : undefined),
      broker: (id) => (this.live.includes(id) ? { host: `host${id}`, port: 9000 + id, fenced: false } : undefined),
      liveBrokers: () => this.live.length,
      cutOff: () => this.cutOff.has(brokerId),
      createTopic: async (t) => {
        await Promise.resolve();
        if (this.topic) throw new MqError('TOPIC_ALREADY_EXISTS', `topic "${t.name}" already exists`);
        this.created.push(t);
        this.topic = { partitions: Array.from({ length: t.numPartitions }, () => ({ leader: -1, leaderEpoch: -1, replicas: [...this.live] })) };
        for (const fn of this.metadataListeners) fn();
      },
      onMetadataChange: (fn) => {
        this.metadataListeners.add(fn);
        return () => this.metadataListeners.delete(fn);
      },
      leaderOf: (topic, p) => (topic === OFFSETS_TOPIC ? this.replicas.get(`${brokerId}/${p}`)?.leader : undefined),
      localLog: (topic, p) => (topic === OFFSETS_TOPIC && this.topic ? this.replica(brokerId, p).log : undefined),
      onLeadershipChange: (fn) => {
        listeners.add(fn);
        return () => listeners.delete(fn);
      },
      topics,
    };
  }

  /** The controller elects `broker` leader of partition p: the old leader resigns, the new one starts (as the replica manager does). */
  async elect(p: number, broker: number): Promise<PartitionLeader> {
    const part = this.topic!.partitions[p]!;
    const old = part.leader;
    if (old > 0) {
      const r = this.replica(old, p);
      for (const fn of this.leadershipListeners.get(old) ?? []) fn({ topic: OFFSETS_TOPIC, partition: p, leader: false });
      await r.leader?.resign();
      r.leader = undefined;
    }
    part.leader = broker;
    part.leaderEpoch++;
    const r = this.replica(broker, p);
    r.leader = await createPartitionLeader(
      {
        topic: OFFSETS_TOPIC,
        partition: p,
        brokerId: broker,
        leaderEpoch: part.leaderEpoch,
        partitionEpoch: 0,
        replicas: part.replicas,
        isr: this.isr,
        minInsyncReplicas: this.minInsync,
        replicaLagTimeMaxMs: 600_000,
        highWatermarkCheckpointIntervalMs: 0,
      },
      {
        log: r.log,
        clock: this.timers.clock,
        timers: this.timers,
        checkpoint: r.checkpoint,
        alterPartition: async (req) => ({ leaderEpoch: req.leaderEpoch, partitionEpoch: req.partitionEpoch + 1, isr: req.isr }),
      },
    );
    for (const fn of this.metadataListeners) fn();
    for (const fn of this.leadershipListeners.get(broker) ?? []) fn({ topic: OFFSETS_TOPIC, partition: p, leader: true });
    return r.leader;
  }

  /** One fetch round of every follower of partition p from its leader (what the FollowerFetcher does). */
  async replicate(p: number): Promise<void> {
    const part = this.topic!.partitions[p]!;
    const leader = this.replica(part.leader, p).leader!;
    for (const id of part.replicas) {
      if (id === part.leader || !this.live.includes(id)) continue;
      const log = this.replica(id, p).log;
      const lastEpoch = log.leaderEpochs.entries.at(-1)?.epoch ?? -1;
      const r = await leader.fetch(
        { topic: OFFSETS_TOPIC, partition: p, fetchOffset: log.logEndOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: part.leaderEpoch, logStartOffset: 0, lastFetchedEpoch: lastEpoch },
        id,
      );
      if (r.records.length > 0) await log.append(r.records, { assignOffsets: false });
      // A second fetch at the new log end tells the leader this follower has it all.
      await leader.fetch(
        { topic: OFFSETS_TOPIC, partition: p, fetchOffset: log.logEndOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: part.leaderEpoch, logStartOffset: 0, lastFetchedEpoch: part.leaderEpoch },
        id,
      );
    }
  }
}

function groups(world: World, brokerId: number, overrides: Partial<{ commitTimeoutMs: number; topics: GroupsCluster['topics'] }> = {}): ClusterGroups {
  return new ClusterGroups(
    world.cluster(brokerId, overrides.topics),
    {
      coordinator: { groupInitialRebalanceDelayMs: 0, groupMinSessionTimeoutMs: 100 },
      offsetsTopicPartitions: PARTITIONS,
      offsetsTopicReplicationFactor: 3,
      offsetsTopicConfigs: { 'cleanup.policy': 'compact', 'retention.ms': '-1' },
      commitTimeoutMs: overrides.commitTimeoutMs ?? 5_000,
      loadRetryMs: 20,
    },
    { clock: Date.now, logger: quiet },
  );
}

async function until(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

const code = (n: number | null | undefined) => errorCodeFromNumber(n ?? 0);
const ctx = { clientId: 'c', clientHost: 'h' };

function commitReq(group: string, offset: number, member?: { memberId: string; generationId: number }, partition = 0) {
  return {
    groupId: group,
    generationId: member?.generationId ?? -1,
    memberId: member?.memberId ?? '',
    topics: [{ name: 'orders', partitions: [{ partition, committedOffset: offset, metadata: `at ${offset}` }] }],
  };
}

/** A group id whose offsets partition is p. */
function groupOn(p: number, prefix = 'g'): string {
  for (let i = 0; ; i++) if (partitionForGroup(`${prefix}${i}`, PARTITIONS) === p) return `${prefix}${i}`;
}

describe('consumer groups over a replicated __consumer_offsets', () => {
  const open: ClusterGroups[] = [];
  afterEach(() => {
    for (const g of open.splice(0)) g.close();
  });
  const start = (world: World, id: number, o?: Parameters<typeof groups>[2]) => {
    const g = groups(world, id, o);
    open.push(g);
    return g;
  };

  it('creates __consumer_offsets on the first FindCoordinator (compacted, RF capped at the live brokers), once, and names the leader everywhere', async () => {
    const world = new World();
    const b1 = start(world, 1);
    const b2 = start(world, 2);
    const group = groupOn(1);
    // Both brokers get the first FindCoordinator at once: one creation wins, the other's TOPIC_ALREADY_EXISTS is fine.
    expect(code(b1.findCoordinator(group).errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(code(b2.findCoordinator(group).errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    await until(() => world.topic !== undefined, 'the topic');
    await b1.ensureOffsetsTopic();
    await b2.ensureOffsetsTopic();
    expect(world.created).toEqual([
      {
        name: OFFSETS_TOPIC,
        topicId: expect.any(String),
        numPartitions: PARTITIONS,
        replicationFactor: 2,
        configs: { 'cleanup.policy': 'compact', 'retention.ms': '-1', 'min.insync.replicas': '1' },
      },
    ]);
    // No leader yet: still not available.
    expect(code(b1.findCoordinator(group).errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    await world.elect(0, 1);
    await world.elect(1, 2);
    for (const b of [b1, b2]) expect(b.findCoordinator(group)).toEqual({ errorCode: 0, nodeId: 2, host: 'host2', port: 9002 });
    expect(b1.findCoordinator(groupOn(0)).nodeId).toBe(1);
    // A broker that has lost the controller does not answer from its (maybe stale) metadata.
    world.cutOff.add(1);
    expect(code(b1.findCoordinator(group).errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(b2.findCoordinator(group).nodeId).toBe(2);
  });

  it('replication factor: offsets.topic.replication.factor capped at the live brokers; min.insync.replicas 2 from RF 3', () => {
    expect(internalTopicReplication(3, 5)).toEqual({ replicationFactor: 3, minInsyncReplicas: 2 });
    expect(internalTopicReplication(3, 2)).toEqual({ replicationFactor: 2, minInsyncReplicas: 1 });
    expect(internalTopicReplication(1, 3)).toEqual({ replicationFactor: 1, minInsyncReplicas: 1 });
  });

  it('answers a commit only once the in-sync replicas have it (acks=all); too few replicas is a retriable coordinator error', async () => {
    const world = new World();
    const b1 = start(world, 1, { commitTimeoutMs: 300 });
    await b1.ensureOffsetsTopic();
    await world.elect(0, 1);
    await world.elect(1, 1);
    const group = groupOn(0);
    await until(() => b1.coordinator?.isCoordinatorFor(group) === true, 'the load');
    let answered = false;
    const pending = b1.coordinator!.offsetCommit(commitReq(group, 5)).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 30));
    expect(answered).toBe(false); // broker 2 has not fetched it yet
    await world.replicate(0);
    const r = await pending;
    expect(code(r.topics![0]!.partitions![0]!.errorCode)).toBe('NONE');
    expect(world.replica(2, 0).log.logEndOffset).toBe(world.replica(1, 0).log.logEndOffset);

    // The follower stops fetching: the commit times out in the purgatory → COORDINATOR_NOT_AVAILABLE, not applied.
    const latePending = b1.coordinator!.offsetCommit(commitReq(group, 9));
    await new Promise((r) => setTimeout(r, 20));
    await world.timers.advance(400); // the leader's purgatory runs on the manual clock
    const late = await latePending;
    expect(code(late.topics![0]!.partitions![0]!.errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    const fetched = await b1.coordinator!.offsetFetch({ groupId: group, topics: [{ name: 'orders', partitions: [0] }] });
    expect(fetched.topics![0]!.partitions![0]!.committedOffset).toBe(5);
  });

  it('maps replication errors to the retriable group errors clients re-find the coordinator on', () => {
    const mapped = (c: ConstructorParameters<typeof MqError>[0]) => groupErrorOf(new MqError(c, 'x'), 3).code;
    expect(mapped('NOT_ENOUGH_REPLICAS')).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(mapped('NOT_ENOUGH_REPLICAS_AFTER_APPEND')).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(mapped('REQUEST_TIMED_OUT')).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(mapped('NOT_LEADER')).toBe('NOT_COORDINATOR');
    expect(mapped('FENCED_LEADER_EPOCH')).toBe('NOT_COORDINATOR');
    expect(mapped('LOG_CLOSED')).toBe('NOT_COORDINATOR');
    expect(groupErrorOf(new Error('boom'), 3).code).toBe('COORDINATOR_NOT_AVAILABLE');
    for (const c of ['NOT_ENOUGH_REPLICAS', 'REQUEST_TIMED_OUT', 'NOT_LEADER'] as const) expect(groupErrorOf(new MqError(c, 'x'), 0).retriable).toBe(true);
  });

  it('refuses commits at once while the ISR is below min.insync.replicas', async () => {
    const world = new World();
    world.isr = [1];
    const b1 = start(world, 1);
    await b1.ensureOffsetsTopic();
    await world.elect(0, 1);
    await world.elect(1, 1);
    const group = groupOn(1);
    await until(() => b1.coordinator?.isCoordinatorFor(group) === true, 'the load');
    const r = await b1.coordinator!.offsetCommit(commitReq(group, 1));
    expect(code(r.topics![0]!.partitions![0]!.errorCode)).toBe('COORDINATOR_NOT_AVAILABLE');
    expect(world.replica(1, 1).log.logEndOffset).toBe(0); // nothing appended
  });

  it('fails over: the old coordinator answers NOT_COORDINATOR, the new one loads once its HW covers what it took over, and every acknowledged commit and the group are there', async () => {
    const world = new World();
    const b1 = start(world, 1);
    const b2 = start(world, 2);
    await b1.ensureOffsetsTopic();
    await world.elect(0, 1);
    await world.elect(1, 1);
    const group = groupOn(0);
    await until(() => b1.coordinator?.isCoordinatorFor(group) === true, 'the load on broker 1');
    const c1 = b1.coordinator!;

    // A member joins and syncs (each group write needs the follower: pump replication meanwhile).
    const pump = setInterval(() => void world.replicate(0).catch(() => undefined), 5);
    try {
      const join = async (memberId: string) =>
        c1.joinGroup({ groupId: group, memberId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription }] }, ctx);
      const first = await join('');
      const joined = await join(first.memberId!);
      expect(code(joined.errorCode)).toBe('NONE');
      const member = { memberId: joined.memberId!, generationId: joined.generationId! };
      const assignment = wire.ConsumerAssignment.encode({ assignedPartitions: [{ topic: 'orders', partitions: [0, 1, 2] }] }).finish();
      const synced = await c1.syncGroup({ groupId: group, ...member, assignments: [{ memberId: member.memberId, assignment }] }, ctx);
      expect(code(synced.errorCode)).toBe('NONE');
      for (const o of [10, 20, 30]) {
        const r = await c1.offsetCommit(commitReq(group, o, member));
        expect(code(r.topics![0]!.partitions![0]!.errorCode)).toBe('NONE');
      }
      const r = await c1.offsetCommit(commitReq(group, 7, member, 2));
      expect(code(r.topics![0]!.partitions![0]!.errorCode)).toBe('NONE');
      clearInterval(pump);

      // Broker 2 holds the records but learned no HW (its checkpoint is empty): the HW of a new
      // leader starts below what the old one acknowledged.
      expect(world.replica(2, 0).checkpoint.value).toBeUndefined();
      const l2 = await world.elect(0, 2);
      expect(l2.highWatermark).toBeLessThan(l2.logEndOffset);
      // Broker 1 unloaded at once.
      const old = await c1.heartbeat({ groupId: group, ...member });
      expect(code(old.errorCode)).toBe('NOT_COORDINATOR');
      expect(code((await c1.offsetCommit(commitReq(group, 40, member))).topics![0]!.partitions![0]!.errorCode)).toBe('NOT_COORDINATOR');
      // Broker 2 is loading until broker 1 (its follower now) fetches and the HW reaches the log end.
      await until(() => b2.coordinator !== undefined, 'broker 2 coordinator');
      const c2 = b2.coordinator!;
      expect(code((await c2.heartbeat({ groupId: group, ...member })).errorCode)).toBe('COORDINATOR_LOAD_IN_PROGRESS');
      expect(b1.findCoordinator(group).nodeId).toBe(2);
      await world.replicate(0);
      await until(() => c2.isCoordinatorFor(group), 'the load on broker 2');

      // The member carries on with the same generation; every acknowledged commit is there.
      expect(code((await c2.heartbeat({ groupId: group, ...member })).errorCode)).toBe('NONE');
      const fetched = await c2.offsetFetch({ groupId: group, topics: [{ name: 'orders', partitions: [0, 1, 2] }] });
      expect(fetched.topics![0]!.partitions!.map((p) => [p.partition, p.committedOffset])).toEqual([
        [0, 30],
        [1, -1],
        [2, 7],
      ]);
      const d = await c2.describeGroups({ groupIds: [group] });
      expect(d.groups![0]!.state).toBe('Stable');
      expect(d.groups![0]!.members!.map((m) => m.memberId)).toEqual([member.memberId]);
    } finally {
      clearInterval(pump);
    }
  });

  it('a leadership lost while loading leaves nothing loaded (the load stops, requests get NOT_COORDINATOR)', async () => {
    const world = new World();
    const b1 = start(world, 1);
    const b2 = start(world, 2);
    await b1.ensureOffsetsTopic();
    await world.elect(0, 1);
    await world.elect(1, 1);
    const group = groupOn(1);
    await until(() => b1.coordinator?.isCoordinatorFor(group) === true, 'the load');
    const pump = setInterval(() => void world.replicate(1).catch(() => undefined), 5);
    const r = await b1.coordinator!.offsetCommit(commitReq(group, 3));
    clearInterval(pump);
    expect(code(r.topics![0]!.partitions![0]!.errorCode)).toBe('NONE');
    await world.elect(1, 2); // broker 2 waits for its HW...
    await until(() => b2.coordinator !== undefined, 'broker 2 coordinator');
    expect(code((await b2.coordinator!.offsetFetch({ groupId: group })).errorCode)).toBe('COORDINATOR_LOAD_IN_PROGRESS');
    await world.elect(1, 1); // ...and loses the partition before it got there
    expect(code((await b2.coordinator!.offsetFetch({ groupId: group })).errorCode)).toBe('NOT_COORDINATOR');
    const pump2 = setInterval(() => void world.replicate(1).catch(() => undefined), 5);
    try {
      await until(() => b1.coordinator!.isCoordinatorFor(group), 'the reload on broker 1');
    } finally {
      clearInterval(pump2);
    }
    expect(b2.coordinator!.isPartitionLoaded(1)).toBe(false);
    const f = await b1.coordinator!.offsetFetch({ groupId: group, topics: [{ name: 'orders', partitions: [0] }] });
    expect(f.topics![0]!.partitions![0]!.committedOffset).toBe(3);
  });

  it('checks a commit against the high watermark only where the partition is led here; elsewhere it is accepted as is (as Kafka does)', async () => {
    const world = new World();
    const b1 = start(world, 1, {
      topics: { partitionCount: (t) => (t === 'orders' ? 3 : undefined), logEndOffset: (_t, p) => (p === 0 ? 10 : undefined) },
    });
    world.isr = [1];
    world.minInsync = 1;
    await b1.ensureOffsetsTopic();
    await world.elect(0, 1);
    await world.elect(1, 1);
    const group = groupOn(0);
    await until(() => b1.coordinator?.isCoordinatorFor(group) === true, 'the load');
    const over = await b1.coordinator!.offsetCommit(commitReq(group, 11, undefined, 0));
    expect(code(over.topics![0]!.partitions![0]!.errorCode)).toBe('INVALID_COMMIT_OFFSET');
    const remote = await b1.coordinator!.offsetCommit(commitReq(group, 1_000, undefined, 1));
    expect(code(remote.topics![0]!.partitions![0]!.errorCode)).toBe('NONE');
    expect(errorNumber('NONE')).toBe(0);
  });
});
