/**
 * The client rides out a broker crash: a producer keeps sending while the
 * broker is killed with SIGKILL and restarted; it reconnects and retries,
 * and afterwards every record acknowledged with acks=1 or acks=all is there,
 * at its acknowledged offset, read back by a consumer.
 */
import { MqClient, type ConsumerRecord, type RecordMetadata } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor } from './src/harness.js';

afterAll(async () => {
  await cleanup();
});

describe('client across a broker SIGKILL and restart', () => {
  it.each([
    ['always', 'all'],
    ['interval', 1],
    ['os', 'all'],
  ] as const)('flush policy %s, acks=%s: every acknowledged record survives at its offset', async (policy, acks) => {
    const broker = await startBroker({ args: ['--config-set', `log.flush.policy=${policy}`] });
    const client = new MqClient({ bootstrap: broker.bootstrap, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 20 } });
    try {
      const topic = uniqueName(`crash-${policy}`);
      await client.admin().createTopic(topic, { numPartitions: 2 });
      const producer = client.producer({ acks, lingerMs: 1, deliveryTimeoutMs: 30_000 });
      const acked: Array<{ m: RecordMetadata; value: string }> = [];
      let stop = false;
      let seq = 0;
      const pump = (async () => {
        const window: Array<Promise<void>> = [];
        while (!stop) {
          const value = `v${seq++}`;
          window.push(producer.send(topic, { value, partition: seq % 2 }).then((m) => void acked.push({ m, value }), () => undefined));
          if (window.length >= 64) await window.shift();
        }
        await Promise.all(window);
      })();
      await waitFor(() => acked.length >= 300, { timeout: 10_000, message: 'acks before the crash' });
      await broker.kill();
      const before = acked.length;
      await broker.restart();
      await waitFor(() => acked.length >= before + 300, { timeout: 20_000, message: 'acks after the restart' });
      stop = true;
      await pump;
      await producer.flush();

      const consumer = client.consumer({ autoOffsetReset: 'earliest' });
      consumer.assign([0, 1].map((partition) => ({ topic, partition })));
      const high = await Promise.all([0, 1].map((p) => client.admin().watermarks(topic, p).then((w) => w.high)));
      const got = new Map<string, ConsumerRecord>();
      await waitFor(
        async () => {
          for (const r of await consumer.poll(200)) got.set(`${r.partition}:${r.offset}`, r);
          return got.size >= high[0]! + high[1]!;
        },
        { timeout: 20_000, message: 'reading everything back' },
      );
      for (const { m, value } of acked) expect([m.offset, got.get(`${m.partition}:${m.offset}`)?.value?.toString()]).toEqual([m.offset, value]);
      await consumer.close();
    } finally {
      await client.close({ timeoutMs: 2000 });
      await broker.kill();
    }
  });

  it('a consumer polling through the crash reconnects and reads every acknowledged record once, in order', async () => {
    const broker = await startBroker();
    const client = new MqClient({ bootstrap: broker.bootstrap, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 20 } });
    const readerClient = new MqClient({ bootstrap: broker.bootstrap, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 20 } });
    try {
      const topic = uniqueName('crash-consumer');
      await client.admin().createTopic(topic, { numPartitions: 1 });
      const consumer = readerClient.consumer({ autoOffsetReset: 'earliest', maxWaitMs: 200 });
      consumer.assign([{ topic, partition: 0 }]);
      const read: ConsumerRecord[] = [];
      let reading = true;
      const reader = (async () => {
        while (reading) {
          try {
            read.push(...(await consumer.poll(200)));
          } catch {
            // errors while the broker is down are retried by polling again
          }
        }
      })();
      const producer = client.producer({ acks: 'all', lingerMs: 0 });
      const acked: RecordMetadata[] = [];
      for (let i = 0; i < 100; i++) acked.push(await producer.send(topic, { value: `before-${i}` }));
      await waitFor(() => read.length >= 100, { timeout: 10_000, message: 'reading before the crash' });
      await broker.kill();
      await broker.restart();
      for (let i = 0; i < 100; i++) acked.push(await producer.send(topic, { value: `after-${i}` }));
      await waitFor(() => read.length >= 200, { timeout: 20_000, message: 'reading after the restart' });
      reading = false;
      await reader;
      expect(read.map((r) => r.offset)).toEqual(acked.map((m) => m.offset));
      expect(read.slice(-1)[0]!.value!.toString()).toBe('after-99');
      await consumer.close();
    } finally {
      await readerClient.close({ timeoutMs: 2000 });
      await client.close({ timeoutMs: 2000 });
      await broker.kill();
    }
  });
});
