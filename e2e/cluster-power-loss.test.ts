/**
 * Whole-cluster power loss under flush `os` (KIP-966 in spirit). 3 combined
 * brokers, RF=3, min.insync.replicas=2, acks=all: every write is acknowledged
 * once it is in the page cache of all three. Then all three are SIGKILLed and
 * two of them lose the tail of their partition log, as a power cut would
 * have taken it from the page cache (whole batches cut from the end of the
 * active segment, a different number on each). They restart so that the
 * naive choice is wrong: the intact broker and one cut broker first (the
 * metadata quorum needs two), the other cut broker last, which leaves it as
 * the last ISR member. Without unclean recovery that broker is elected and
 * the others truncate to its shorter log; with it, the candidates report
 * their log ends and the intact one is elected. Every acknowledged record
 * must be read back at its offset, and the replicas must agree byte for byte.
 */
import { open, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { expectReplicasAgree, FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

/** Batch header: base offset (int64) then batch length (int32, bytes after these 12). */
const LOG_OVERHEAD = 12;

/**
 * Cuts the last `batches` whole batches from the end of the active (last)
 * segment of a stopped broker's replica, as a power loss takes the writes
 * still in the page cache. Returns the new log end offset and how many
 * records went.
 */
async function cutTail(dataDir: string, topic: string, partition: number, batches: number): Promise<{ endOffset: number; cutRecords: number }> {
  const root = path.join(dataDir, 'cluster-logs');
  const dir = (await readdir(root)).find((d) => d.startsWith(`${topic}-${partition}.`) && !d.endsWith('.hw'));
  if (!dir) throw new Error(`no log of ${topic}-${partition} in ${root}`);
  const segments = (await readdir(path.join(root, dir))).filter((f) => /^\d{20}\.log$/.test(f)).sort();
  const file = path.join(root, dir, segments.at(-1)!);
  const size = (await stat(file)).size;
  const fh = await open(file, 'r+');
  try {
    const data = Buffer.alloc(size);
    await fh.read(data, 0, size, 0);
    // The batch boundaries: [position, baseOffset, lastOffset + 1].
    const bounds: Array<{ position: number; baseOffset: number; nextOffset: number }> = [];
    for (let pos = 0; pos + LOG_OVERHEAD <= size; ) {
      const baseOffset = Number(data.readBigInt64BE(pos));
      const length = data.readInt32BE(pos + 8);
      if (length <= 0 || pos + LOG_OVERHEAD + length > size) break;
      const lastOffsetDelta = data.readInt32BE(pos + 23);
      bounds.push({ position: pos, baseOffset, nextOffset: baseOffset + lastOffsetDelta + 1 });
      pos += LOG_OVERHEAD + length;
    }
    if (bounds.length <= batches) throw new Error(`${file} has only ${bounds.length} batches; cannot cut ${batches}`);
    const first = bounds[bounds.length - batches]!;
    await fh.truncate(first.position);
    return { endOffset: first.baseOffset, cutRecords: bounds.at(-1)!.nextOffset - first.baseOffset };
  } finally {
    await fh.close();
  }
}

describe('cluster: power loss of every replica under flush os', () => {
  it('elects the replica that kept the acknowledged tail, not the last ISR member that lost it', async () => {
    cluster = await startCluster({ brokers: 3, config: { ...FAST_FAILOVER_CONFIG, 'unclean.recovery.wait.ms': '15000' } });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('powerloss');
    let client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    const acked = new Map<number, string>();
    try {
      await client.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all', lingerMs: 2 });
      // Rounds of concurrent sends: many batches, so there are whole batches to cut.
      for (let round = 0; round < 40; round++) {
        const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => producer.send(topic, { value: `r${round}-${i}`, partition: 0 }).then((m) => [m.offset, `r${round}-${i}`] as const)));
        for (const [offset, value] of rs) acked.set(offset, value);
      }
      const total = Math.max(...acked.keys()) + 1;
      expect(acked.size).toBe(2000);
      // Every replica has appended everything (acks=all), so each log ends at `total` in the page cache.
      await waitFor(async () => (await Promise.all(c.ids.map((id) => c.status(id)))).every((s) => s.hosted.find((h) => h.topic === topic)?.logEndOffset === total), {
        timeout: 10_000,
        message: `every replica at log end ${total}`,
      });
      await client.close();

      const before = new Map((await c.anyStatus()).brokers.map((b) => [b.id, b.brokerEpoch]));
      await Promise.all(c.ids.map((id) => c.kill(id)));
      const [intact, cutFirst, cutLast] = [...c.ids].sort((a, b) => a - b) as [number, number, number];
      const a = await cutTail(c.broker(cutFirst).dataDir, topic, 0, 4);
      const b = await cutTail(c.broker(cutLast).dataDir, topic, 0, 8);
      expect(a.endOffset).toBeLessThan(total);
      expect(b.endOffset).toBeLessThan(a.endOffset);

      // The intact broker and one cut broker first (a metadata quorum); both register as new runs and leave the
      // ISR, so the other cut broker is its last member when it comes back.
      await Promise.all([c.restart(intact), c.restart(cutFirst)]);
      await waitFor(
        async () => {
          const s = await c.anyStatus().catch(() => undefined);
          return [intact, cutFirst].every((id) => {
            const r = s?.brokers.find((x) => x.id === id);
            return r !== undefined && r.brokerEpoch !== before.get(id) && !r.fenced;
          });
        },
        { timeout: 20_000, interval: 100, message: `brokers ${intact} and ${cutFirst} registered again` },
      );
      await c.restart(cutLast);

      const status = await c.waitHealthy(40_000, [topic]);
      expect(status.offline).toEqual([]);
      const leader = await leaderFor(c, topic, 0);
      client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
      const consumer = client.consumer({ maxWaitMs: 200 });
      consumer.assign([{ topic, partition: 0, offset: 0 }]);
      const read = new Map<number, string>();
      // The acknowledged records beyond the cut brokers' logs must still be there: the new leader's HW reaches them.
      // (Leadership may move on to the preferred replica meanwhile: ask whoever leads.)
      const leaderHw = async () => (await c.status(await leaderFor(c, topic, 0))).hosted.find((h) => h.topic === topic)?.highWatermark ?? -1;
      await waitFor(async () => (await leaderHw()) >= total, { timeout: 10_000, message: `elected leader ${leader}: the high watermark at ${total} (every acknowledged record)` }).catch(async (err: unknown) => {
        throw new Error(`${String(err)}: it is ${await leaderHw()}; broker ${intact} kept all ${total}, ${cutFirst} ${a.endOffset}, ${cutLast} ${b.endOffset}`);
      });
      await waitFor(
        async () => {
          for (const r of await consumer.poll(500)) read.set(r.offset, r.value!.toString());
          return [...acked.keys()].every((o) => read.has(o));
        },
        { timeout: 20_000, message: 'reading back every acknowledged record' },
      );
      await consumer.close();
      for (const [offset, value] of acked) expect([offset, read.get(offset)]).toEqual([offset, value]);
      await client.close();
      const trail = c.ids.flatMap((id) => c.broker(id).process.output.filter((l) => /unclean recovery:|UNCLEAN/.test(l)).map((l) => `${id}: ${l}`));
      expect({ leader, trail }).toEqual({ leader: intact, trail: expect.arrayContaining([expect.stringContaining(`now led by broker ${intact}, the longest log`)]) });

      // The cut replicas caught up from the leader (no divergence to truncate) and every replica agrees batch for batch.
      await waitFor(async () => (await c.anyStatus()).underReplicated.length === 0, { timeout: 20_000, message: 'a full ISR again' });
      const counts = await expectReplicasAgree(c, topic, [0]);
      expect(new Set(counts[0]).size).toBe(1);
      console.log(`acked ${acked.size}; cut ${a.cutRecords} records from broker ${cutFirst} and ${b.cutRecords} from broker ${cutLast}; leader ${leader}`);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 90_000);
});
