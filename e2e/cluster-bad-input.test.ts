/**
 * Bad input to a cluster, over the wire, each refused per the protocol and
 * nothing lost: a produce to a follower (NOT_LEADER naming the leader), a
 * replica fetch from a broker outside the replica set (REPLICA_NOT_AVAILABLE),
 * a fetch in a stale leader epoch (FENCED_LEADER_EPOCH), a malformed or
 * stale controller command (INVALID_REQUEST, INCONSISTENT_PARTITION_EPOCH),
 * and a registration reusing a live broker's run id with other endpoints
 * (DUPLICATE_BROKER_REGISTRATION).
 */
import { MqClient } from '@mq/client';
import { Connection } from '@mq/client/internal';
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorCodeFromNumber } from '@mq/protocol/errors';
import { cleanup, uniqueName } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

function open(address: string): Promise<Connection> {
  return Connection.open({ address, clientId: 'bad-input', connectTimeoutMs: 5000, requestTimeoutMs: 10_000, maxResponseBytes: 64 << 20 });
}

describe('cluster: bad input', () => {
  it('refuses each with its error code and keeps serving', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG, proxies: false });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('bad');
    const client = new MqClient({ bootstrap: c.bootstrap });
    const conns: Connection[] = [];
    try {
      await client.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 2, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const leader = await leaderFor(c, topic, 0);
      const meta = (await client.admin().describeTopic(topic)).partitions[0]!;
      const follower = meta.replicas.find((id) => id !== leader)!;
      const outsider = c.ids.find((id) => !meta.replicas.includes(id))!;
      const at = async (id: number) => {
        const conn = await open(c.broker(id).process.bootstrap);
        conns.push(conn);
        return conn;
      };
      // Replica fetches and controller commands are served on the inter-broker listener only (see cluster-strangers).
      const interBroker = async (id: number) => {
        const conn = await open(`127.0.0.1:${c.broker(id).interBrokerPort}`);
        conns.push(conn);
        return conn;
      };

      // Produce to a follower.
      const toFollower = await (await at(follower)).request('produce', {
        acks: -1,
        timeoutMs: 5000,
        topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: Buffer.from('x') }]) }] }],
      });
      const pr = toFollower.topics![0]!.partitions![0]!;
      expect(errorCodeFromNumber(pr.errorCode!)).toBe('NOT_LEADER');
      expect(pr.errorMessage).toContain(`broker ${leader} is`);

      // A replica fetch from a broker that is not a replica; a fetch in a stale leader epoch.
      const leaderConn = await interBroker(leader);
      const fetch = (replicaId: number, currentLeaderEpoch: number) =>
        leaderConn.request('fetch', {
          replicaId,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch, lastFetchedEpoch: -1, logStartOffset: 0 }] }],
        });
      const outsiderFetch = (await fetch(outsider, meta.leaderEpoch)).topics![0]!.partitions![0]!;
      expect(errorCodeFromNumber(outsiderFetch.errorCode!)).toBe('REPLICA_NOT_AVAILABLE');
      expect(outsiderFetch.records?.length ?? 0).toBe(0);
      await client.admin().describeTopic(topic); // (still serving)
      // Move leadership once so that epoch 0 is stale: kill the leader, wait for the new one, restart it.
      await c.kill(leader);
      const next = await leaderFor(c, topic, 0, [leader]);
      await c.restart(leader);
      const nextConn = await interBroker(next);
      const stale = await nextConn.request('fetch', {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20, currentLeaderEpoch: meta.leaderEpoch, lastFetchedEpoch: -1, logStartOffset: 0 }] }],
      });
      expect(errorCodeFromNumber(stale.topics![0]!.partitions![0]!.errorCode!)).toBe('FENCED_LEADER_EPOCH');

      // Controller commands: garbage, a stale AlterPartition, a conflicting registration.
      const forward = async (command: unknown) => {
        const r = await nextConn.request('controllerForward', { brokerId: 99, command: Buffer.from(typeof command === 'string' ? command : JSON.stringify(command)), timeoutMs: 5000 });
        return { code: errorCodeFromNumber(r.errorCode ?? 0), message: r.errorMessage ?? '', controllerId: r.controllerId ?? -1 };
      };
      const controller = (await c.anyStatus()).controllerId;
      const ctrlConn = await interBroker(controller);
      const forwardToController = async (command: unknown) => {
        const r = await ctrlConn.request('controllerForward', { brokerId: 99, command: Buffer.from(typeof command === 'string' ? command : JSON.stringify(command)), timeoutMs: 5000 });
        return { code: errorCodeFromNumber(r.errorCode ?? 0), message: r.errorMessage ?? '' };
      };
      if (next !== controller) expect((await forward({ type: 'deleteTopic', name: topic })).code).toBe('NOT_CONTROLLER');
      expect((await forwardToController('{not json')).code).toBe('INVALID_REQUEST');
      expect((await forwardToController({ type: 'formatDisk' })).code).toBe('INVALID_REQUEST');
      // The current leader epoch with a stale partition epoch. Leadership may still move (back to the preferred
      // replica once the restarted broker is in sync) between the describe and the command: then the leader
      // epoch is the stale one (FENCED_LEADER_EPOCH), so describe again.
      let stalePe = { code: 'FENCED_LEADER_EPOCH', message: '' };
      for (let attempt = 0; attempt < 10 && stalePe.code === 'FENCED_LEADER_EPOCH'; attempt++) {
        if (attempt > 0) await new Promise((r) => setTimeout(r, 300));
        const now = (await client.admin().describeTopic(topic)).partitions[0]!;
        stalePe = await forwardToController({ type: 'alterPartition', topic, partition: 0, leaderId: now.leader, leaderEpoch: now.leaderEpoch, partitionEpoch: 0, isr: [now.leader] });
      }
      expect(stalePe.code).toBe('INCONSISTENT_PARTITION_EPOCH');
      const oldEpoch = await forwardToController({ type: 'alterPartition', topic, partition: 0, leaderId: leader, leaderEpoch: meta.leaderEpoch, partitionEpoch: 0, isr: [leader] });
      expect(oldEpoch.code).toBe('FENCED_LEADER_EPOCH');
      // A retried registration of one run is idempotent; the same run id with other endpoints is a second
      // process claiming to be that run, and is refused (a new run id is a restart, see cluster-disk-wipe).
      expect((await forwardToController({ type: 'registerBroker', id: 77, host: '127.0.0.1', port: 1, httpPort: 2, rack: '', incarnation: 'r1' })).code).toBe('NONE');
      expect((await forwardToController({ type: 'registerBroker', id: 77, host: '127.0.0.1', port: 1, httpPort: 2, rack: '', incarnation: 'r1' })).code).toBe('NONE');
      expect((await forwardToController({ type: 'registerBroker', id: 77, host: '10.0.0.9', port: 1, httpPort: 2, rack: '', incarnation: 'r1' })).code).toBe('DUPLICATE_BROKER_REGISTRATION');

      // Nothing was lost or broken: the topic takes acks=all writes and reads them back.
      const producer = client.producer({ acks: 'all' });
      const m = await producer.send(topic, { value: 'after', partition: 0 });
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([{ topic, partition: 0, offset: m.offset }]);
      const got = await consumer.poll(5000);
      expect(got.map((r) => r.value!.toString())).toContain('after');
      await consumer.close();
    } finally {
      for (const conn of conns) conn.close();
      await client.close().catch(() => undefined);
    }
  }, 120_000);
});
