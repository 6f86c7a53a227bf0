/**
 * Scale-out with real broker processes: 3 combined brokers and a 4th
 * (broker-only) that joins after the topic exists. Under continuous acks=all
 * load, `mq cluster rebalance` spreads a 12-partition RF 2 topic over the 4
 * brokers (6 ± 1 replicas and 3 ± 1 leaders each); every acknowledged record
 * is read back at its offset and the producer saw only retriable errors.
 * Then: bad reassignments are refused with typed errors, a move that cannot
 * finish is cancelled (the original replicas come back), a move survives the
 * controller being killed, the source leader being killed, and a broker is
 * decommissioned under load (refused when the others cannot hold the RF).
 */
import { MqClient, type MqError, type TopicDescription } from '@mq/client';
import { cleanup, makeTempDir, runCli, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
const trace = (msg: string) => {
  if (process.env.MQ_E2E_TRACE) process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
};
let client: MqClient | undefined;

afterAll(async () => {
  await client?.close({ timeoutMs: 1000 }).catch(() => undefined);
  await cluster?.close();
  await cleanup();
});

interface Acked {
  partition: number;
  offset: number;
  seq: number;
}

/** acks=all sends over every partition (16 in flight per partition), recording acks and errors, until stopped. */
function pump(c: MqClient, topic: string, partitions: number) {
  const producer = c.producer({ acks: 'all', lingerMs: 2, maxInFlight: 1, deliveryTimeoutMs: 60_000 });
  const acked: Acked[] = [];
  const errors: MqError[] = [];
  let stop = false;
  let seq = 0;
  const one = async (partition: number) => {
    const window: Promise<void>[] = [];
    let n = 0;
    while (!stop && seq < 200_000) {
      const s = seq++;
      window.push(
        producer.send(topic, { value: `v${s}`, partition }).then(
          (m) => void acked.push({ partition, offset: m.offset, seq: s }),
          (err: MqError) => void errors.push(err),
        ),
      );
      if (window.length >= 16) await window.shift();
      if (++n % 16 === 0) await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(window);
  };
  const running = Promise.all(Array.from({ length: partitions }, (_, p) => one(p)));
  return {
    acked,
    errors,
    async stop() {
      stop = true;
      await running;
      await producer.close();
    },
  };
}

async function readBack(c: MqClient, topic: string, partitions: number, acked: readonly Acked[]): Promise<void> {
  const consumer = c.consumer({ maxWaitMs: 200 });
  consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
  const byOffset = new Map<string, string>();
  const needed = new Set(acked.map((a) => `${a.partition}:${a.offset}`));
  await waitFor(
    async () => {
      for (const r of await consumer.poll(500)) byOffset.set(`${r.partition}:${r.offset}`, r.value!.toString());
      return [...needed].every((k) => byOffset.has(k));
    },
    { timeout: 60_000, message: 'reading back every acknowledged record' },
  );
  await consumer.close();
  for (const a of acked) expect(byOffset.get(`${a.partition}:${a.offset}`)).toBe(`v${a.seq}`);
}

function perBroker(d: TopicDescription, ids: number[]): { replicas: Map<number, number>; leaders: Map<number, number> } {
  const replicas = new Map(ids.map((id) => [id, 0]));
  const leaders = new Map(ids.map((id) => [id, 0]));
  for (const p of d.partitions) {
    for (const id of p.replicas) replicas.set(id, (replicas.get(id) ?? 0) + 1);
    leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
  }
  return { replicas, leaders };
}

/** A client address of a running broker other than `exclude` (1, 2 or 3). */
function boot(exclude = -1): string {
  const id = [1, 2, 3].find((x) => x !== exclude && !cluster!.broker(x).process.exited)!;
  return cluster!.broker(id).process.bootstrap;
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'NONE';
  } catch (err) {
    return (err as MqError).code;
  }
}

async function waitMoved(c: MqClient, topic: string, partition: number, replicas: number[], timeout = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const moving = (await c.admin().listPartitionReassignments([topic])).some((r) => r.partition === partition);
      if (moving) return false;
      const d = await c.admin().describeTopic(topic);
      return d.partitions[partition]!.replicas.join() === replicas.join() && d.partitions[partition]!.isr.length === replicas.length;
    },
    { timeout, interval: 200, message: `${topic}-${partition} moved to ${replicas.join(',')}` },
  );
}

describe('cluster scale-out: reassignment, rebalance, decommission', () => {
  const topic = uniqueName('scale');

  it('a fourth broker joins and `mq cluster rebalance` evens out replicas and leaders under acks=all load', async () => {
    cluster = await startCluster({ brokers: 3, observers: 1, config: { ...FAST_FAILOVER_CONFIG } });
    const c = cluster;
    await c.waitHealthy();
    // Broker 4 is down while the topic is created: it joins a cluster whose replicas are all elsewhere.
    await c.kill(4);
    client = new MqClient({ bootstrap: [1, 2, 3].map((id) => c.broker(id).process.bootstrap), requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    await waitFor(async () => (await client!.admin().describeCluster()).brokers.find((b) => b.id === 4)?.fenced !== false, { timeout: 20_000, message: 'broker 4 fenced' });
    await client.admin().createTopic(topic, { numPartitions: 12, replicationFactor: 2 });
    const before = await client.admin().describeTopic(topic);
    expect(before.partitions.flatMap((p) => p.replicas)).not.toContain(4);
    const load = pump(client, topic, 12);
    await waitFor(() => load.acked.length > 500, { timeout: 30_000, message: 'load running' });
    await c.restart(4);
    await c.waitHealthy(30_000);
    const started = Date.now();
    const r = await runCli(['cluster', 'rebalance', '--format', 'json', '--concurrency', '3', '-b', boot()], { timeoutMs: 180_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout) as { moves: { kind: string }[]; executed: boolean; ms: number };
    expect(report.executed).toBe(true);
    expect(report.moves.filter((m) => m.kind === 'replica')).toHaveLength(6);
    process.stderr.write(`rebalance of 12 partitions RF 2 from 3 to 4 brokers under load: ${Date.now() - started} ms\n`);
    // Leaders settle on the preferred replicas (the election ran; the automatic one keeps them there).
    const after = await waitFor(
      async () => {
        const d = await client!.admin().describeTopic(topic);
        const { replicas, leaders } = perBroker(d, [1, 2, 3, 4]);
        const ok = [...replicas.values()].every((n) => Math.abs(n - 6) <= 1) && [1, 2, 3, 4].every((id) => Math.abs((leaders.get(id) ?? 0) - 3) <= 1);
        return ok ? d : undefined;
      },
      { timeout: 30_000, message: 'replicas 6±1 and leaders 3±1 per broker' },
    );
    expect(after!.partitions.every((p) => p.isr.length === 2)).toBe(true);
    const ackedDuring = load.acked.length;
    await load.stop();
    expect(ackedDuring).toBeGreaterThan(1000);
    expect(load.errors.filter((e) => !e.retriable).map((e) => `${e.code}: ${e.message}`)).toEqual([]);
    await readBack(client, topic, 12, load.acked);
    // Broker 4 holds logs of its partitions only; the brokers that lost a replica removed it.
    const status4 = await c.status(4);
    expect(status4.hosted.filter((h) => h.topic === topic).length).toBe(perBroker(after!, [1, 2, 3, 4]).replicas.get(4));
  }, 240_000);

  it('refuses bad reassignments with typed errors, and cancel restores the original replicas', async () => {
    const admin = client!.admin();
    const d = await admin.describeTopic(topic);
    const p0 = d.partitions[0]!;
    const outsider = [1, 2, 3, 4].find((id) => !p0.replicas.includes(id))!;
    expect(await code(admin.reassignPartition('no-such-topic', 0, [1, 2]))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(await code(admin.reassignPartition(topic, 99, [1, 2]))).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(await code(admin.reassignPartition(topic, 0, [p0.replicas[0]!, 9]))).toBe('INVALID_REPLICA_ASSIGNMENT');
    expect(await code(admin.reassignPartition(topic, 0, [outsider, outsider]))).toBe('INVALID_REPLICA_ASSIGNMENT');
    expect(await code(admin.reassignPartition(topic, 0, [...p0.replicas, outsider]))).toBe('INVALID_REPLICATION_FACTOR');
    expect((await admin.describeTopic(topic)).partitions[0]!.replicas).toEqual(p0.replicas);
    // A move to a broker that is down cannot finish: it stays in progress, a second one is refused, cancel restores.
    const cli = await runCli(['topic', 'reassign', topic, '--partition', '0', '--replicas', `${p0.replicas[0]},9`, '-b', boot()]);
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain('broker(s) 9 are not registered');
    await cluster!.kill(outsider);
    const target = [p0.replicas[0]!, outsider];
    const started = await runCli(['topic', 'reassign', topic, '--partition', '0', '--replicas', target.join(','), '-b', boot(outsider)]);
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const status = await runCli(['topic', 'reassign', '--status', '--format', 'json', '-b', boot(outsider)]);
    const listed = (JSON.parse(status.stdout) as { reassignments: { topic: string; partition: number; addingReplicas: number[]; progress?: { adding: { brokerId: number; offsetLag: number }[] } }[] }).reassignments;
    const mine = listed.find((x) => x.topic === topic && x.partition === 0)!;
    expect(mine.addingReplicas).toEqual([outsider]);
    expect(mine.progress?.adding[0]).toMatchObject({ brokerId: outsider });
    expect(await code(admin.reassignPartition(topic, 0, p0.replicas.slice().reverse()))).toBe('REASSIGNMENT_IN_PROGRESS');
    const cancel = await runCli(['topic', 'reassign', '--cancel', topic, '--partition', '0', '-b', boot(outsider)]);
    expect(cancel.stderr).toBe('');
    expect(cancel.code).toBe(0);
    const restored = (await admin.describeTopic(topic)).partitions[0]!;
    expect(restored.replicas).toEqual(p0.replicas);
    expect(await admin.listPartitionReassignments()).toEqual([]);
    expect(await code(admin.cancelPartitionReassignment(topic, 0))).toBe('NO_REASSIGNMENT_IN_PROGRESS');
    await cluster!.restart(outsider);
    await cluster!.waitHealthy(30_000);
  }, 120_000);

  it('a move completes across the controller being killed, and across its source leader being killed', async () => {
    const c = cluster!;
    const admin = client!.admin();
    const load = pump(client!, topic, 12);
    await waitFor(() => load.acked.length > 300, { timeout: 30_000, message: 'load running' });
    // Controller killed while a partition moves to a broker that is down: the move is in the metadata log and
    // completes under the next controller once the broker is back.
    const controller = await c.activeController();
    const d = await admin.describeTopic(topic);
    const p = d.partitions.findIndex((x) => !x.replicas.includes(controller));
    const part = d.partitions[p]!;
    const target = [part.replicas[0]!, controller];
    await admin.reassignPartition(topic, p, target);
    trace(`moving ${topic}-${p} from ${part.replicas.join(',')} to ${target.join(',')}; killing controller ${controller}`);
    await c.kill(controller);
    await c.activeController([controller]);
    expect((await admin.listPartitionReassignments([topic])).map((x) => x.partition)).toEqual([p]);
    trace('restarting the controller');
    await c.restart(controller);
    await waitMoved(client!, topic, p, target);
    trace('moved');
    await c.waitHealthy(30_000);
    // The leader of a moving partition (a replica being removed) is killed: leadership stays in the original
    // set's survivors, and the move completes onto the new set.
    const d2 = await admin.describeTopic(topic);
    const q = d2.partitions.findIndex((x, i) => i !== p && x.leader === x.replicas[0]);
    const part2 = d2.partitions[q]!;
    const newcomers = [1, 2, 3, 4].filter((id) => !part2.replicas.includes(id));
    const keep = part2.replicas[1]!;
    const target2 = [keep, newcomers[0]!];
    await admin.reassignPartition(topic, q, target2);
    trace(`moving ${topic}-${q} from ${part2.replicas.join(',')} to ${target2.join(',')}; killing leader ${part2.leader}`);
    await c.kill(part2.leader);
    await waitMoved(client!, topic, q, target2);
    trace('moved');
    await c.restart(part2.leader);
    await c.waitHealthy(30_000);
    trace('healthy; stopping the load');
    await load.stop();
    trace('stopped');
    expect(load.errors.filter((e) => !e.retriable).map((e) => `${e.code}: ${e.message}`)).toEqual([]);
    await readBack(client!, topic, 12, load.acked);
  }, 180_000);

  it('the replication throttle holds a move back while set, and lifting it at run time lets the move finish', async () => {
    const admin = client!.admin();
    const thr = uniqueName('throttled');
    await admin.createTopic(thr, { numPartitions: 1, replicationFactor: 1 });
    const producer = client!.producer({ acks: 'all', lingerMs: 5 });
    const value = 'x'.repeat(1000);
    await Promise.all(Array.from({ length: 1500 }, () => producer.send(thr, { value, partition: 0 })));
    await producer.close();
    const from = (await admin.describeTopic(thr)).partitions[0]!.replicas[0]!;
    const to = [1, 2, 3, 4].find((id) => id !== from)!;
    const set = await runCli(['cluster', 'throttle', '20000', '--format', 'json', '-b', boot()]);
    expect(set.stderr).toBe('');
    expect(JSON.parse(set.stdout)).toMatchObject({ bytesPerSec: 20_000 });
    await admin.reassignPartition(thr, 0, [to]);
    await new Promise((r) => setTimeout(r, 3000));
    const moving = (await admin.listPartitionReassignments([thr]))[0];
    expect(moving?.addingReplicas).toEqual([to]);
    // About 1.5 MB to copy at 20 KB/s: after 3 s most of it is still to come.
    expect(moving?.progress?.adding[0]?.bytesBehind).toBeGreaterThan(1_000_000);
    await runCli(['cluster', 'throttle', '0', '-b', boot()]);
    await waitMoved(client!, thr, 0, [to], 30_000);
    expect((await admin.replicationThrottle()).bytesPerSec).toBe(0);
  }, 90_000);

  it('decommissions a broker under load, and refuses when the others cannot hold the replication factor', async () => {
    const c = cluster!;
    const admin = client!.admin();
    const rf3 = uniqueName('rf3');
    await admin.createTopic(rf3, { numPartitions: 1, replicationFactor: 3 });
    await c.waitHealthy(30_000);
    const load = pump(client!, topic, 12);
    await waitFor(() => load.acked.length > 300, { timeout: 30_000, message: 'load running' });
    const r = await runCli(['broker', 'decommission', '4', '--format', 'json', '-b', boot()], { timeoutMs: 120_000 });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ broker: 4, remainingReplicas: 0 });
    const d = await admin.describeTopic(topic);
    expect(d.partitions.flatMap((x) => x.replicas)).not.toContain(4);
    // Broker 4 drops its replicas once it has applied the moves' completion (it follows the metadata log).
    await waitFor(async () => (await c.status(4)).hosted.filter((h) => h.topic === topic).length === 0, { timeout: 15_000, message: 'broker 4 dropped its replicas' });
    // mq cluster status marks it.
    const status = JSON.parse((await runCli(['cluster', 'status', '--format', 'json', '-b', boot(), '--data-dir', await makeTempDir('mq-status-')])).stdout) as { brokers: Array<{ id: number; state: string }> };
    expect(status.brokers.find((b) => b.id === 4)?.state).toBe('alive,decommissioned');
    // Three brokers left, one decommissioned: a second decommission would leave 2 for an RF 3 topic.
    const refused = await runCli(['broker', 'decommission', '3', '-b', boot()]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('broker 3 cannot be decommissioned');
    expect((await admin.describeCluster()).brokers.find((b) => b.id === 3)?.fenced).toBe(false);
    expect((await admin.describeTopic(rf3)).partitions[0]!.replicas).toHaveLength(3);
    await c.kill(4);
    await load.stop();
    expect(load.errors.filter((e) => !e.retriable).map((e) => `${e.code}: ${e.message}`)).toEqual([]);
    await readBack(client!, topic, 12, load.acked);
  }, 180_000);
});
