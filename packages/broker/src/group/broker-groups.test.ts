/**
 * The coordinator inside a real (in-process) broker: commits over the wire
 * land in __consumer_offsets, its closed segments get compacted to the
 * latest record per key, and a restart rebuilds the same state from what is
 * left.
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { errorCodeFromNumber, errorNumber as errorNumberOf } from '@mq/protocol/errors';
import { coordinatorReady, partitionDir, startTestBroker, TestClient, waitFor, type TestBroker } from '../../test/helpers.js';

async function segmentBytes(dir: string): Promise<number> {
  let total = 0;
  for (const f of await readdir(dir)) if (f.endsWith('.log')) total += (await stat(path.join(dir, f))).size;
  return total;
}

import { mq as wire } from '@mq/protocol/wire';

const subscription = wire.ConsumerSubscription.encode({ topics: ['ledger'] }).finish();

describe('group coordinator in the broker', () => {
  let t: TestBroker;
  let c: TestClient;
  afterEach(async () => {
    await c?.close();
    await t?.cleanup();
  });

  it('compacts __consumer_offsets and restarts with the latest offsets', async () => {
    t = await startTestBroker({ 'offsets.topic.segment.bytes': '2048', 'log.cleaner.interval.ms': '50' });
    c = await TestClient.connect(t.url);
    await coordinatorReady(c);
    const created = await c.request({ createTopics: { topics: [{ name: 'ledger', numPartitions: 2 }] } });
    expect(created.createTopics!.results[0]!.errorCode).toBe(0);
    const { encodeBatchSync } = await import('@mq/protocol/batch');
    for (let p = 0; p < 2; p++) {
      await c.request({ produce: { acks: -1, timeoutMs: 5000, topics: [{ name: 'ledger', partitions: [{ partition: p, records: encodeBatchSync(Array.from({ length: 500 }, (_, i) => ({ value: `v${i}` }))) }] }] } });
    }
    const commit = async (group: string, partition: number, offset: number) => {
      const r = await c.request({
        offsetCommit: { groupId: group, generationId: -1, memberId: '', topics: [{ name: 'ledger', partitions: [{ partition, committedOffset: offset, metadata: `at ${offset}` }] }] },
      });
      expect(errorCodeFromNumber(r.offsetCommit!.topics[0]!.partitions[0]!.errorCode)).toBe('NONE');
    };
    for (let i = 1; i <= 300; i++) {
      await commit('busy', i % 2, i);
      if (i % 100 === 0) await commit('quiet', 0, i / 100);
    }
    const dir = await partitionDir(t.dataDir, '__consumer_offsets', 0);
    // The cleaner runs every 50 ms: of the 303 commit records, only the latest per key and the
    // active segment's records stay; the files shrink to about one segment.
    const removed = () => t.lines.filter((l) => l.msg === 'compacted' && l.topic === '__consumer_offsets').reduce((n, l) => n + (l.removedRecords as number), 0);
    const deadline = Date.now() + 20_000;
    while (removed() < 250) {
      if (Date.now() > deadline) throw new Error(`compaction removed only ${removed()} records`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Compaction passes run one segment after another: wait for the pass that reaches the last closed one.
    const shrunk = Date.now() + 20_000;
    while ((await segmentBytes(dir)) >= 2 * 2048 && Date.now() < shrunk) await new Promise((r) => setTimeout(r, 50));
    expect(await segmentBytes(dir)).toBeLessThan(2 * 2048);
    const fetch = async (group: string) => {
      const r = await c.request({ offsetFetch: { groupId: group, topics: [{ name: 'ledger', partitions: [0, 1] }] } });
      return r.offsetFetch!.topics[0]!.partitions.map((p) => [p.partition, p.committedOffset, p.metadata]);
    };
    const expected = { busy: [[0, 300, 'at 300'], [1, 299, 'at 299']], quiet: [[0, 3, 'at 3'], [1, -1, '']] };
    expect(await fetch('busy')).toEqual(expected.busy);
    await c.close();
    await t.restart();
    c = await TestClient.connect(t.url);
    // The coordinator loads its offsets partition once the restarted broker leads it (COORDINATOR_LOAD_IN_PROGRESS until then).
    await waitFor(async () => (await c.request({ offsetFetch: { groupId: 'busy', topics: [{ name: 'ledger', partitions: [0] }] } })).offsetFetch!.errorCode === 0, 10_000);
    expect(await fetch('busy')).toEqual(expected.busy);
    expect(await fetch('quiet')).toEqual(expected.quiet);
  });

  it('answers joins waiting for a rebalance at once when the broker shuts down', async () => {
    t = await startTestBroker({ 'group.initial.rebalance.delay.ms': '0' });
    c = await TestClient.connect(t.url);
    await coordinatorReady(c);
    const join = async (memberId: string, timeoutMs = 10_000) =>
      (
        await c.request(
          {
            joinGroup: {
              groupId: 'slow',
              memberId,
              sessionTimeoutMs: 30_000,
              rebalanceTimeoutMs: 60_000,
              protocolType: 'consumer',
              protocols: [{ name: 'range', metadata: subscription }],
            },
          },
          timeoutMs,
        )
      ).joinGroup!;
    const a = await join((await join('')).memberId);
    expect(a.errorCode).toBe(0);
    const bId = (await join('')).memberId;
    // b's join waits for a to rejoin (up to the 60 s rebalance timeout)...
    const waiting = join(bId, 30_000);
    await new Promise((r) => setTimeout(r, 200));
    const started = Date.now();
    await t.broker.close();
    // ...but the shutdown answers it (or closes the connection) without waiting that long.
    const r = await waiting.catch((err: Error) => ({ errorCode: -1, errorMessage: err.message }));
    expect(Date.now() - started).toBeLessThan(5000);
    expect(r.errorCode === errorNumberOf('COORDINATOR_NOT_AVAILABLE') || r.errorCode === -1).toBe(true);
  });
});
