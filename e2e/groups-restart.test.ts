/**
 * The broker (the group coordinator) is killed with SIGKILL and restarted:
 * committed offsets are intact (rebuilt from __consumer_offsets), a new
 * member resumes from them rather than from the start of the topic, and a
 * consumer that lived through the outage rejoins and carries on.
 */
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { GROUP_BROKER_ARGS, createTopic, produce } from './groups-helpers.js';

describe('group coordinator restart', () => {
  let broker: BrokerProcess;
  beforeAll(async () => {
    broker = await startBroker({ args: GROUP_BROKER_ARGS });
  });
  afterAll(cleanup);

  it('keeps committed offsets across a SIGKILL and consumers resume from them', async () => {
    const topic = uniqueName('ledger');
    const group = uniqueName('g');
    const other = uniqueName('other');
    await createTopic(broker.bootstrap, topic, 3);
    await produce(broker.bootstrap, topic, 90, 'before');

    const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'restart-test', requestTimeoutMs: 5000 });
    try {
      const consumerOptions = { groupId: group, autoOffsetReset: 'earliest' as const, sessionTimeoutMs: 3000, heartbeatIntervalMs: 300 };
      const c1 = mq.consumer(consumerOptions);
      c1.subscribe([topic]);
      const seen1: string[] = [];
      await waitFor(async () => {
        seen1.push(...(await c1.poll(300)).map((r) => r.value!.toString()));
        return seen1.length >= 90;
      }, { timeout: 20_000 });
      await c1.commit();
      // A second group with a partial commit, to check both come back.
      await mq.groups().commitOffsets(other, [{ topic, partition: 1, offset: 7, metadata: 'by hand' }]);
      const before = await mq.groups().describeGroup(group);
      expect(before.totalLag).toBe(0);

      await broker.kill();
      await broker.restart();

      // The surviving consumer rejoins (its member id may have expired) and keeps consuming new records only.
      await produce(broker.bootstrap, topic, 30, 'after');
      const seen1b: string[] = [];
      await waitFor(async () => {
        seen1b.push(...(await c1.poll(300)).map((r) => r.value!.toString()));
        return seen1b.length >= 30;
      }, { timeout: 30_000, message: 'the consumer did not carry on after the broker restart' });
      expect(seen1b.every((v) => v.startsWith('after-'))).toBe(true);
      await c1.commit();
      await c1.close();

      const after = await mq.groups().describeGroup(group);
      expect(after.offsets.map((o) => o.committedOffset).reduce((a, b) => a + b, 0)).toBe(120);
      const o = (await mq.groups().describeGroup(other)).offsets;
      expect(o).toEqual([expect.objectContaining({ topic, partition: 1, committedOffset: 7, metadata: 'by hand' })]);

      // Kill again right after commits: a new member resumes exactly at the committed offsets.
      await broker.kill();
      await broker.restart();
      await produce(broker.bootstrap, topic, 15, 'late');
      const c2 = mq.consumer(consumerOptions);
      c2.subscribe([topic]);
      const seen2: string[] = [];
      await waitFor(async () => {
        seen2.push(...(await c2.poll(300)).map((r) => r.value!.toString()));
        return seen2.length >= 15;
      }, { timeout: 30_000, message: 'the new member did not get the records after the committed offsets' });
      await new Promise((r) => setTimeout(r, 500));
      seen2.push(...(await c2.poll(100)).map((r) => r.value!.toString()));
      expect(seen2.sort()).toEqual(Array.from({ length: 15 }, (_, i) => `late-${i}`).sort());
      await c2.close();
    } finally {
      await mq.close();
    }
  });
});
