/**
 * Three independent groups read one topic at different paces: each sees
 * every record exactly once, in per-partition order, and no group affects
 * another (their committed offsets and lag are their own; the broker never
 * deletes a record because a group read it).
 */
import { MqClient, type ConsumerRecord, type GroupConsumer } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { GROUP_BROKER_ARGS, createTopic, produce } from './groups-helpers.js';

const RECORDS = 600;

describe('independent consumer groups on one topic', () => {
  let broker: BrokerProcess;
  afterAll(cleanup);

  beforeAll(async () => {
    broker = await startBroker({ args: GROUP_BROKER_ARGS });
  });

  it('each group gets every record once, in order per partition, at its own pace', async () => {
    const topic = uniqueName('orders');
    await createTopic(broker.bootstrap, topic, 4);
    await produce(broker.bootstrap, topic, RECORDS);

    const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'groups-independent' });
    try {
      const paces = [0, 2, 5]; // ms of "work" per batch
      const groups = paces.map((_, i) => uniqueName(`g${i}`));
      const seen = groups.map(() => [] as ConsumerRecord[]);
      const consumers: GroupConsumer[] = groups.map((groupId) =>
        mq.consumer({ groupId, autoOffsetReset: 'earliest', sessionTimeoutMs: 6000, heartbeatIntervalMs: 500, maxPollRecords: 50 }),
      );
      consumers.forEach((c) => c.subscribe([topic]));
      const stop = new AbortController();
      const loops = consumers.map((c, i) =>
        c.run({
          signal: stop.signal,
          pollTimeoutMs: 200,
          eachBatch: async ({ messages }) => {
            seen[i]!.push(...messages);
            if (paces[i]) await new Promise((r) => setTimeout(r, paces[i]));
          },
        }),
      );
      // The fastest group is done well before the slowest: the paces really differ.
      await waitFor(() => seen[0]!.length >= RECORDS, { timeout: 30_000, message: 'fast group did not finish' });
      await waitFor(() => seen.every((s) => s.length >= RECORDS), { timeout: 60_000, message: `groups stalled at ${seen.map((s) => s.length)}` });
      stop.abort();
      await Promise.all(loops);
      for (const s of seen) {
        expect(s).toHaveLength(RECORDS);
        const values = new Set(s.map((r) => r.value!.toString()));
        expect(values.size).toBe(RECORDS);
        const byPartition = new Map<number, number[]>();
        for (const r of s) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r.offset]);
        for (const offsets of byPartition.values()) expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      }
      for (const c of consumers) await c.commit();
      // Each group committed the end of every partition; a fourth, new group still starts at the beginning.
      for (const groupId of groups) {
        const d = await mq.groups().describeGroup(groupId);
        expect(d.totalLag).toBe(0);
        expect(d.offsets.map((o) => o.committedOffset).reduce((a, b) => a + b, 0)).toBe(RECORDS);
      }
      await Promise.all(consumers.map((c) => c.close()));
      const late = mq.consumer({ groupId: uniqueName('late'), autoOffsetReset: 'earliest', sessionTimeoutMs: 6000, heartbeatIntervalMs: 500 });
      late.subscribe([topic]);
      let got = 0;
      await waitFor(async () => (got += (await late.poll(500)).length) >= RECORDS, { timeout: 30_000 });
      expect(got).toBe(RECORDS);
      await late.close();
      // Committed offsets of one group do not move another's.
      const lists = await mq.groups().listGroups();
      for (const g of groups) expect(lists.find((x) => x.groupId === g)?.state).toBe('Empty');
    } finally {
      await mq.close();
    }
  });
});
