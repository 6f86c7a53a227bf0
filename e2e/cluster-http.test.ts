/**
 * The HTTP API of a three-broker cluster (real processes): topics created,
 * described and deleted through any broker; records produced to every
 * broker's HTTP port (non-leaders forward to the partition's leader over the
 * inter-broker connection) and read back over HTTP from every broker and
 * over the wire; bad input answered with typed JSON errors. Then compaction
 * and retention in cluster mode: after many updates of a few keys every
 * replica keeps only the latest value per key, and the replicas agree on
 * every offset they still hold; retention.ms deletes old segments on every
 * replica.
 */
import path from 'node:path';
import { readdir } from 'node:fs/promises';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

interface Reply {
  status: number;
  body: any;
}

async function call(base: string, method: string, url: string, body?: unknown, raw?: string): Promise<Reply> {
  const res = await fetch(`${base}${url}`, {
    method,
    headers: { 'content-type': 'application/json' },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    signal: AbortSignal.timeout(40_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * POST /topics, retried while the broker's own metadata does not count every broker as live yet
 * (a restarted broker is unfenced a moment after another broker's view says so).
 */
async function createTopic(base: string, body: Record<string, unknown>): Promise<Reply> {
  return waitFor<Reply | undefined>(
    async () => {
      const r = await call(base, 'POST', '/topics', body);
      return r.body?.error?.code === 'INVALID_REPLICATION_FACTOR' ? undefined : r;
    },
    { timeout: 15_000, interval: 200, message: `create ${String(body.name)}` },
  ) as Promise<Reply>;
}

/** Every record of a stopped broker's replica of a partition, decoded: offset → [key, value]. */
async function replicaRecords(dataDir: string, topic: string, partition: number): Promise<Map<number, [string | null, string | null]>> {
  const { openLog } = await import('@mq/log-store');
  const { iterateBatches, decodeBatchSync } = await import('@mq/protocol/batch');
  const root = path.join(dataDir, 'cluster-logs');
  const dir = (await readdir(root)).find((d) => d.startsWith(`${topic}-${partition}.`) && !d.endsWith('.hw'));
  const out = new Map<number, [string | null, string | null]>();
  if (!dir) throw new Error(`no replica of ${topic}-${partition} in ${dataDir}`);
  const log = await openLog(path.join(root, dir));
  try {
    let offset = log.logStartOffset;
    while (offset < log.logEndOffset) {
      const { records, nextOffset } = await log.read(offset, 1 << 20);
      if (records.length === 0) break;
      for (const b of iterateBatches(records)) {
        for (const r of decodeBatchSync(records, b.position).records) out.set(r.offset, [r.key?.toString() ?? null, r.value?.toString() ?? null]);
      }
      offset = nextOffset;
    }
  } finally {
    await log.close();
  }
  return out;
}

describe('cluster: HTTP API, compaction and retention', () => {
  it('serves topics and records from every broker, refuses bad input with typed errors, compacts and retains on every replica', async () => {
    cluster = await startCluster({
      brokers: 3,
      proxies: false,
      config: { ...FAST_FAILOVER_CONFIG, 'log.cleaner.interval.ms': '300', 'log.retention.check.interval.ms': '300', 'http.max.body.bytes': '65536' },
    });
    const c = cluster;
    await c.waitHealthy();
    const api = (id: number) => c.broker(id).process.httpUrl;

    // Create on broker 2; every broker describes it with leaders, replicas and ISR.
    const topic = uniqueName('http');
    const created = await call(api(2), 'POST', '/topics', { name: topic, partition_count: 3, replication_factor: 3, configs: { 'min.insync.replicas': '2', 'max.message.bytes': '2048' } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: topic, partition_count: 3, replication_factor: 3 });
    expect(created.body.partitions).toHaveLength(3);
    await c.waitHealthy(30_000, [topic]);
    for (const id of c.ids) {
      // Every broker answers from its own copy of the metadata log, which may apply the creation a moment later.
      const d = (await waitFor<Reply | undefined>(
        async () => {
          const r = await call(api(id), 'GET', `/topics/${topic}`);
          return r.status === 200 && r.body.partitions.every((p: { isr: number[] }) => p.isr.length === 3) ? r : undefined;
        },
        { timeout: 10_000, message: `broker ${id} describes ${topic}` },
      )) as Reply;
      expect(d.body.configs['min.insync.replicas']).toBe('2');
      for (const p of d.body.partitions) {
        expect([...p.replicas].sort()).toEqual([1, 2, 3]);
        expect(p.replicas).toContain(p.leader);
        expect(p.isr).toHaveLength(3);
      }
      expect((await call(api(id), 'GET', '/topics')).body).toContainEqual({ name: topic, partition_count: 3, replication_factor: 3 });
    }

    // Produce to every partition through every broker (leader or not), acks=all (the default).
    const acked = new Map<string, string>(); // "partition:offset" → value
    for (const id of c.ids) {
      for (const p of [0, 1, 2]) {
        const value = `via-${id}-to-${p}`;
        const r = await call(api(id), 'POST', `/topics/${topic}/records`, { partition: p, key: `k${p}`, value });
        expect(r.status).toBe(200);
        expect(r.body.partition).toBe(p);
        acked.set(`${p}:${r.body.offset}`, value);
      }
      // An array of keyed records, spread by murmur2, answered in request order.
      const many = await call(api(id), 'POST', `/topics/${topic}/records?acks=1`, { records: [0, 1, 2, 3, 4].map((i) => ({ key: `key-${id}-${i}`, value: `many-${id}-${i}` })) });
      expect(many.status).toBe(200);
      (many.body as Array<{ partition: number; offset: number }>).forEach((x, i) => acked.set(`${x.partition}:${x.offset}`, `many-${id}-${i}`));
    }
    expect(acked.size).toBe(3 * 3 + 3 * 5);

    // GET /log-dirs on any broker asks every live broker (DescribeLogDirs): each hosts a replica of each partition,
    // one of them the leader, with bytes on its disk once the followers have the records.
    await waitFor(
      async () => {
        const r = await call(api(3), 'GET', `/log-dirs?topic=${topic}`);
        expect(r.status).toBe(200);
        const brokers = r.body.brokers as Array<{ broker: number; replicas: Array<{ topic: string; partition: number; size_bytes: number; leader: boolean }> }>;
        expect(brokers.map((b) => b.broker).sort()).toEqual([1, 2, 3]);
        for (const b of brokers) expect(b.replicas.map((x) => x.partition).sort()).toEqual([0, 1, 2]);
        for (const p of [0, 1, 2]) expect(brokers.filter((b) => b.replicas.some((x) => x.partition === p && x.leader))).toHaveLength(1);
        return brokers.every((b) => b.replicas.every((x) => x.topic === topic && x.size_bytes > 0));
      },
      { timeout: 10_000, message: 'every replica has bytes on disk in /log-dirs' },
    );
    expect((await call(api(1), 'GET', '/log-dirs?topic=bad%20name')).status).toBe(400);

    // Read back over HTTP from every broker: each sees every acknowledged record at its offset (the acks=1 ones
    // once the followers have them: reads stop at the high watermark), and the leader's watermarks.
    for (const id of c.ids) {
      const seen = new Map<string, string>();
      await waitFor(
        async () => {
          for (const p of [0, 1, 2]) {
            const page = await call(api(id), 'GET', `/topics/${topic}/partitions/${p}/records?offset=0`);
            expect(page.status).toBe(200);
            for (const r of page.body.records) seen.set(`${p}:${r.offset}`, r.value);
            expect(page.body.next_offset).toBeLessThanOrEqual(page.body.high);
            const wm = await call(api(id), 'GET', `/topics/${topic}/partitions/${p}/watermarks`);
            expect(wm.body.low).toBe(0);
            expect(wm.body.high).toBeGreaterThanOrEqual(page.body.high);
          }
          return [...acked.keys()].every((k) => seen.has(k));
        },
        { timeout: 10_000, message: `broker ${id} reads every acknowledged record` },
      );
      for (const [k, v] of acked) expect([k, seen.get(k)]).toEqual([k, v]);
    }
    // And over the wire.
    const client = new MqClient({ bootstrap: c.bootstrap });
    try {
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([0, 1, 2].map((partition) => ({ topic, partition, offset: 0 })));
      const wire = new Map<string, string>();
      await waitFor(
        async () => {
          for (const r of await consumer.poll(300)) wire.set(`${r.partition}:${r.offset}`, r.value!.toString());
          return wire.size >= acked.size;
        },
        { timeout: 15_000, message: 'the wire consumer reads every record' },
      );
      await consumer.close();
      expect(wire).toEqual(acked);
    } finally {
      await client.close();
    }

    // The leader of partition 1 dies: a produce sent to another broker waits for the new leader and lands there.
    const victim = await leaderFor(c, topic, 1);
    const [via, reader] = c.ids.filter((id) => id !== victim) as [number, number];
    await c.kill(victim);
    const afterKill = await call(api(via), 'POST', `/topics/${topic}/records`, { partition: 1, key: 'k1', value: 'after-failover' });
    expect(afterKill.status).toBe(200);
    const readBack = await call(api(reader), 'GET', `/topics/${topic}/partitions/1/records?offset=${afterKill.body.offset}`);
    expect(readBack.body.records[0]).toMatchObject({ offset: afterKill.body.offset, value: 'after-failover' });
    await c.restart(victim);
    await c.waitHealthy(30_000, [topic]);

    // Bad input, on a broker that does not lead the partition: typed JSON errors, nothing written.
    const leader0 = await leaderFor(c, topic, 0);
    const other = c.ids.find((id) => id !== leader0)!;
    const highBefore = (await call(api(leader0), 'GET', `/topics/${topic}/partitions/0/watermarks`)).body.high;
    const error = (r: Reply) => [r.status, r.body?.error?.code, typeof r.body?.error?.message, typeof r.body?.error?.retriable];
    expect(error(await call(api(other), 'POST', `/topics/${uniqueName('nope')}/records`, { value: 'x' }))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'string', 'boolean']);
    expect(error(await call(api(other), 'GET', `/topics/${topic}/partitions/7/records`))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'string', 'boolean']);
    expect(error(await call(api(other), 'GET', `/topics/${topic}/partitions/x/watermarks`))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', `/topics/${topic}/records`, { partition: 7, value: 'x' }))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', `/topics/${topic}/records`, { partition: 0, value: 'x'.repeat(4096) }))).toEqual([413, 'RECORD_TOO_LARGE', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', `/topics/${topic}/records`, { partition: 0, value: 'x'.repeat(100_000) }))).toEqual([413, 'MESSAGE_TOO_LARGE', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', `/topics/${topic}/records`, undefined, '{"value": "unterminated'))).toEqual([400, 'INVALID_REQUEST', 'string', 'boolean']);
    expect(error(await call(api(other), 'GET', `/topics/${topic}/partitions/0/records?offset=99999`))).toEqual([400, 'OFFSET_OUT_OF_RANGE', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', '/topics', { name: topic, partition_count: 1 }))).toEqual([409, 'TOPIC_ALREADY_EXISTS', 'string', 'boolean']);
    expect(error(await call(api(other), 'POST', '/topics', { name: uniqueName('rf'), partition_count: 1, replication_factor: 5 }))).toEqual([400, 'INVALID_REPLICATION_FACTOR', 'string', 'boolean']);
    // Nothing was written by the refused requests; a non-leader reports the leader's watermarks.
    expect((await call(api(leader0), 'GET', `/topics/${topic}/partitions/0/watermarks`)).body.high).toBe(highBefore);
    expect((await call(api(other), 'GET', `/topics/${topic}/partitions/0/watermarks`)).body.high).toBe(highBefore);

    // Delete through broker 3: gone everywhere.
    expect((await call(api(3), 'DELETE', `/topics/${topic}`)).body).toEqual({ name: topic, deleted: true, partition_count: 3 });
    for (const id of c.ids) {
      await waitFor(async () => (await call(api(id), 'GET', `/topics/${topic}`)).status === 404, { timeout: 10_000, message: `topic deleted on broker ${id}` });
    }

    // Compaction: four keys updated many times, then filler so the updates sit in closed segments.
    const compacted = uniqueName('compacted');
    expect(
      (await createTopic(api(1), { name: compacted, partition_count: 1, replication_factor: 3, configs: { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'delete.retention.ms': '0', 'min.insync.replicas': '2' } })).status,
    ).toBe(201);
    // Retention: records stamped an hour ago in a topic that keeps a minute, small segments.
    const retained = uniqueName('retained');
    expect(
      (await createTopic(api(2), { name: retained, partition_count: 1, replication_factor: 3, configs: { 'retention.ms': '60000', 'segment.bytes': '1024' } })).status,
    ).toBe(201);
    await c.waitHealthy(30_000, [compacted, retained]);
    const keys = ['a', 'b', 'c', 'd'];
    const latest = new Map<string, { offset: number; value: string }>();
    for (let round = 0; round < 25; round++) {
      // Spread over every broker's HTTP port, one request per round.
      const id = c.ids[round % 3]!;
      const r = await call(api(id), 'POST', `/topics/${compacted}/records`, keys.map((k) => ({ key: k, value: `${k}-${round}-${'.'.repeat(60)}` })));
      expect(r.status).toBe(200);
      (r.body as Array<{ offset: number }>).forEach((x, i) => latest.set(keys[i]!, { offset: x.offset, value: `${keys[i]}-${round}-${'.'.repeat(60)}` }));
    }
    for (let i = 0; i < 30; i++) {
      expect((await call(api(c.ids[i % 3]!), 'POST', `/topics/${compacted}/records`, { key: `filler-${i}`, value: '.'.repeat(100) })).status).toBe(200);
    }
    const hour = Date.now() - 3_600_000;
    for (let i = 0; i < 30; i++) {
      expect((await call(api(c.ids[i % 3]!), 'POST', `/topics/${retained}/records`, { key: `r${i}`, value: '.'.repeat(100), timestamp: hour })).status).toBe(200);
    }
    const updatesEnd = Math.max(...[...latest.values()].map((v) => v.offset)) + 1;

    // The leader's view over HTTP: only the latest value of each updated key remains.
    await waitFor(
      async () => {
        const page = await call(api(3), 'GET', `/topics/${compacted}/partitions/0/records?offset=0`);
        const updates = (page.body.records as Array<{ key: string }>).filter((r) => keys.includes(r.key));
        return updates.length === keys.length;
      },
      { timeout: 20_000, interval: 300, message: 'the leader compacted the updates' },
    );
    // Retention on every replica: each one's own log start moved past the old segments.
    await waitFor(
      async () => {
        const starts = await Promise.all(c.ids.map(async (id) => (await c.status(id)).hosted.find((h) => h.topic === retained)));
        return starts.every((h) => h !== undefined && (h as unknown as { logStartOffset: number }).logStartOffset > 0);
      },
      { timeout: 20_000, interval: 300, message: 'retention deleted segments on every replica' },
    );
    expect((await call(api(1), 'GET', `/topics/${retained}/partitions/0/watermarks`)).body.low).toBeGreaterThan(0);
    // Followers compact on their own; give every replica a few cleaner rounds, then stop them and read their logs.
    await waitFor(
      async () => {
        const st = await Promise.all(c.ids.map((id) => c.status(id)));
        return st.every((s) => (s.hosted.find((h) => h.topic === compacted)?.logEndOffset ?? -1) === updatesEnd + 30);
      },
      { timeout: 10_000, message: 'every replica has every record' },
    );
    await new Promise((r) => setTimeout(r, 2000));
    for (const id of c.ids) await c.broker(id).process.stop();
    const replicas = await Promise.all(c.ids.map((id) => replicaRecords(c.broker(id).dataDir, compacted, 0)));
    for (const [i, records] of replicas.entries()) {
      const updates = [...records].filter(([, [k]]) => keys.includes(k!));
      // Exactly the latest value of each key, at its acknowledged offset.
      expect([`broker ${c.ids[i]}`, updates.sort((x, y) => x[0] - y[0])]).toEqual([
        `broker ${c.ids[i]}`,
        keys.map((k) => [latest.get(k)!.offset, [k, latest.get(k)!.value]]).sort((x, y) => (x[0] as number) - (y[0] as number)),
      ]);
    }
    // The replicas agree on every offset any two of them hold.
    for (const o of new Set(replicas.flatMap((r) => [...r.keys()]))) {
      const versions = new Set(replicas.map((r) => r.get(o)).filter((v) => v !== undefined).map((v) => JSON.stringify(v)));
      expect([o, versions.size]).toEqual([o, 1]);
    }
  }, 120_000);
});
