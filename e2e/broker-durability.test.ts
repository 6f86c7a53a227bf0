/**
 * The broker is killed with SIGKILL while producers write, then restarted:
 * every record acknowledged with acks=1 or acks=all is still there, at its
 * acknowledged offset, under every flush policy. (SIGKILL loses the process,
 * not the page cache: what this proves is that the broker acknowledges only
 * what it has handed to the kernel, and that recovery keeps it.)
 */
import { encodeBatchSync } from '@mq/protocol/batch';
import { cleanup, startBroker, uniqueName } from './src/harness.js';
import { readPartition } from './src/wire-read.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

interface Acked {
  partition: number;
  baseOffset: number;
  values: string[];
}

async function produceUntilKilled(url: string, topic: string, partition: number, acks: number, acked: Acked[], stop: () => boolean) {
  const c = await TestClient.connect(url);
  let seq = 0;
  const inFlight = 8;
  const worker = async () => {
    while (!stop()) {
      const values = Array.from({ length: 10 }, (_, i) => `p${partition}-${seq}-${i}`);
      seq++;
      try {
        const r = await c.request(
          { produce: { acks, timeoutMs: 5000, topics: [{ name: topic, partitions: [{ partition, records: encodeBatchSync(values.map((value) => ({ value }))) }] }] } },
          5000,
        );
        const p = r.produce!.topics[0]!.partitions[0]!;
        if (p.errorCode === 0) acked.push({ partition, baseOffset: p.baseOffset, values });
      } catch {
        return; // the connection died with the broker
      }
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  await c.close().catch(() => undefined);
}

describe('SIGKILL while producing', () => {
  afterEach(async () => {
    await cleanup();
  });

  it.each([
    ['always', {}],
    ['interval', { 'flush.interval.ms': '60000' }],
    ['os', {}],
  ])('keeps every acknowledged record (acks=1 and all) under flush.policy=%s', async (policy, extra) => {
    const broker = await startBroker();
    const url = `ws://${broker.bootstrap}`;
    const topic = uniqueName(`kill-${policy}`);
    const admin = await TestClient.connect(url);
    const created = await admin.request({
      createTopics: { topics: [{ name: topic, numPartitions: 2, replicationFactor: 1, configs: { 'flush.policy': policy, ...extra } }] },
    });
    expect(created.createTopics!.results[0]!.errorCode).toBe(0);
    await admin.close();

    const acked: Acked[] = [];
    let killed = false;
    const producers = [
      produceUntilKilled(url, topic, 0, 1, acked, () => killed),
      produceUntilKilled(url, topic, 1, -1, acked, () => killed),
    ];
    // Kill once both partitions have acknowledged a good number of batches, mid-stream.
    const deadline = Date.now() + 15_000;
    while ((acked.filter((a) => a.partition === 0).length < 100 || acked.filter((a) => a.partition === 1).length < 100) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    await broker.kill();
    killed = true;
    await Promise.all(producers);
    expect(acked.filter((a) => a.partition === 0).length).toBeGreaterThanOrEqual(100);
    expect(acked.filter((a) => a.partition === 1).length).toBeGreaterThanOrEqual(100);

    await broker.restart();
    for (const partition of [0, 1]) {
      const stored = await readPartition(url, topic, partition);
      const mine = acked.filter((a) => a.partition === partition);
      let missing = 0;
      for (const a of mine) {
        a.values.forEach((v, i) => {
          if (stored.get(a.baseOffset + i) !== v) missing++;
        });
      }
      expect({ partition, acknowledged: mine.length * 10, missing }).toEqual({ partition, acknowledged: mine.length * 10, missing: 0 });
      // Offsets are dense from 0: nothing below an acknowledged offset vanished.
      const top = Math.max(...mine.map((a) => a.baseOffset + 9));
      for (let o = 0; o <= top; o++) expect(stored.has(o)).toBe(true);
    }
    // And the restarted broker takes new writes after the recovered ones.
    const c = await TestClient.connect(url);
    const r = await c.request({ produce: { acks: -1, topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'after' }]) }] }] } });
    const p = r.produce!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(p.baseOffset).toBeGreaterThan(Math.max(...acked.filter((a) => a.partition === 0).map((a) => a.baseOffset + 9)));
    await c.close();
  });
});
