import { MqClient } from '@mq/client';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';

export interface MqTargetOptions {
  bootstrap: string | string[];
  /** What an ack means on this broker as configured (stated in results). */
  durability?: string;
  clientId?: string;
}

export const DEFAULT_MQ_BOOTSTRAP = '127.0.0.1:9092';

/** mq over @mq/client: one MqClient (connection) per producer and per consumer, as separate applications would have. */
export async function createMqTarget(options: MqTargetOptions): Promise<BenchTarget> {
  const clients = new Set<MqClient>();
  const open = (): MqClient => {
    const c = new MqClient({ bootstrap: options.bootstrap, clientId: options.clientId ?? 'mq-bench' });
    clients.add(c);
    return c;
  };
  const adminClient = open();
  const admin = adminClient.admin();
  return {
    name: 'mq',
    durability: options.durability ?? 'as the broker is configured',
    async createTopic(topic, partitions) {
      await admin.createTopics([{ topic, partitions }]);
    },
    async deleteTopic(topic) {
      await admin.deleteTopics([topic]);
    },
    async createProducer(o): Promise<TargetProducer> {
      const client = open();
      const producer = client.producer({
        acks: o.acks,
        lingerMs: o.lingerMs,
        batchBytes: o.batchBytes,
        compression: o.compression,
      });
      const topic = o.topic;
      return {
        send(key, value) {
          return producer.send(topic, key === undefined ? { value } : { key, value });
        },
        async flush() {
          await producer.flush();
        },
        async close() {
          await producer.close();
          clients.delete(client);
          await client.close();
        },
      };
    },
    async createConsumer(o): Promise<TargetConsumer> {
      const client = open();
      const consumer = client.consumer(o.group === undefined ? { autoOffsetReset: 'earliest' } : { groupId: o.group, autoOffsetReset: 'earliest' });
      let loop: Promise<void> = Promise.resolve();
      return {
        async start(onRecord) {
          await consumer.subscribe([o.topic]);
          loop = (async () => {
            for await (const batch of consumer) {
              for (const r of batch.records) onRecord(r.value ?? EMPTY, r.key ?? null);
            }
          })();
        },
        async close() {
          await consumer.close();
          await loop.catch(() => undefined);
          clients.delete(client);
          await client.close();
        },
      };
    },
    async close() {
      await Promise.allSettled([...clients].map((c) => c.close()));
      clients.clear();
    },
  };
}

const EMPTY = new Uint8Array(0);
