/**
 * The controller's own partition balancer (partition.autobalancing.mode) with
 * real broker processes: 3 combined brokers and a 4th (broker-only) that was
 * down while the topic was created. With `continuous` mode nobody runs
 * `mq cluster rebalance`: when broker 4 comes back holding no replica, the
 * active controller moves replicas onto it, at most max.concurrent.moves
 * partitions at once, until every broker holds 3 ± 1 of the 12 replicas of
 * 6 partitions RF 2; then broker 4 is SIGKILLed and, once it has been
 * unavailable for longer than node.availability.timeout.ms, its replicas move
 * back to the live brokers (every partition in sync on brokers 1-3 again;
 * a move onto it still in progress is cancelled first).
 * Every acknowledged record is read back at its offset.
 */
import { MqClient, type TopicDescription } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
let client: MqClient | undefined;

afterAll(async () => {
  await client?.close({ timeoutMs: 1000 }).catch(() => undefined);
  await cluster?.close();
  await cleanup();
});

function replicasPerBroker(d: TopicDescription): Map<number, number> {
  const m = new Map<number, number>();
  for (const p of d.partitions) for (const id of p.replicas) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

describe('partition autobalancing by the controller', () => {
  const topic = uniqueName('autobal');
  const acked: Array<{ partition: number; offset: number; value: string }> = [];
  const send = async (n: number, tag: string) => {
    const p = client!.producer({ acks: 'all', lingerMs: 0 });
    for (let i = 0; i < n; i++) {
      const value = `${tag}-${i}`;
      const m = await p.send(topic, { value, partition: i % 6 });
      acked.push({ partition: m.partition, offset: m.offset, value });
    }
  };

  it('moves replicas onto a broker that joins holding none, a few partitions at a time, without mq cluster rebalance', async () => {
    cluster = await startCluster({
      brokers: 3,
      observers: 1,
      config: {
        ...FAST_FAILOVER_CONFIG,
        'partition.autobalancing.mode': 'continuous',
        'partition.autobalancing.tick.interval.ms': '500',
        'partition.autobalancing.max.concurrent.moves': '2',
        'partition.autobalancing.node.availability.timeout.ms': '4000',
      },
    });
    const c = cluster;
    await c.waitHealthy();
    await c.kill(4);
    client = new MqClient({ bootstrap: [1, 2, 3].map((id) => c.broker(id).process.bootstrap), requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    await waitFor(async () => (await client!.admin().describeCluster()).brokers.find((b) => b.id === 4)?.fenced !== false, { timeout: 20_000, message: 'broker 4 fenced' });
    await client.admin().createTopic(topic, { numPartitions: 6, replicationFactor: 2 });
    expect((await client.admin().describeTopic(topic)).partitions.flatMap((p) => p.replicas)).not.toContain(4);
    await send(60, 'before');
    // While broker 4 is down for less than the availability timeout, nothing moves (its replicas would stay; it has none).
    await c.restart(4);
    let mostMoving = 0;
    const balanced = await waitFor(
      async () => {
        const moving = (await client!.admin().listPartitionReassignments()).length;
        mostMoving = Math.max(mostMoving, moving);
        const d = await client!.admin().describeTopic(topic);
        const per = replicasPerBroker(d);
        // The plan's own end: every broker within one of the others (12 replicas: 3 each).
        const counts = [1, 2, 3, 4].map((id) => per.get(id) ?? 0);
        const even = Math.max(...counts) - Math.min(...counts) <= 1;
        return even && moving === 0 && d.partitions.every((p) => p.isr.length === 2) ? d : undefined;
      },
      { timeout: 60_000, interval: 200, message: 'replicas 3±1 per broker, no move in progress' },
    );
    expect(replicasPerBroker(balanced!).get(4)).toBe(3);
    expect(mostMoving).toBeLessThanOrEqual(2);
    await send(60, 'after-join');
  }, 150_000);

  it('moves the replicas of a broker unavailable for longer than the timeout to the live ones', async () => {
    const c = cluster!;
    const killedAt = Date.now();
    await c.kill(4);
    const healed = await waitFor(
      async () => {
        const d = await client!.admin().describeTopic(topic);
        return d.partitions.every((p) => !p.replicas.includes(4) && p.isr.length === 2) ? d : undefined;
      },
      { timeout: 60_000, interval: 250, message: "broker 4's replicas moved to brokers 1-3, in sync" },
    );
    // Not before the availability timeout (4 s) after it was fenced.
    expect(Date.now() - killedAt).toBeGreaterThan(4000);
    expect(healed!.partitions.flatMap((p) => p.replicas).every((id) => [1, 2, 3].includes(id))).toBe(true);
    await send(60, 'after-loss');
    // Every acknowledged record is where it was acknowledged.
    const consumer = client!.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign(Array.from({ length: 6 }, (_, partition) => ({ topic, partition, offset: 0 })));
    const got = new Map<string, string>();
    await waitFor(
      async () => {
        for (const r of await consumer.poll(300)) got.set(`${r.partition}:${r.offset}`, r.value!.toString());
        return got.size >= acked.length;
      },
      { timeout: 30_000, message: 'read back every acknowledged record' },
    );
    await consumer.close();
    for (const a of acked) expect(got.get(`${a.partition}:${a.offset}`)).toBe(a.value);
  }, 150_000);
});
