import { MqClient, type Consumer, type ProducerOptions } from '@mq/client';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';

export interface MqTargetOptions {
  bootstrap: string | string[];
  /** What an ack means on this broker as configured (stated in results). */
  durability?: string;
  clientId?: string;
}

export const DEFAULT_MQ_BOOTSTRAP = '127.0.0.1:9092';

/** How long one consumer poll waits for records. */
const POLL_MS = 100;

/**
 * mq over @mq/client: one MqClient (one connection) per producer and per
 * consumer, as separate applications would have. Reading alone assigns every
 * partition from offset 0; a group of C members splits the partitions p % C
 * (the static assignment a range/round-robin group gives C members).
 */
export async function createMqTarget(options: MqTargetOptions): Promise<BenchTarget> {
  const clients = new Set<MqClient>();
  const open = (): MqClient => {
    const c = new MqClient({ bootstrap: options.bootstrap, clientId: options.clientId ?? 'mq-bench' });
    clients.add(c);
    return c;
  };
  const release = async (c: MqClient): Promise<void> => {
    clients.delete(c);
    await c.close();
  };
  const adminClient = open();
  const admin = adminClient.admin();
  return {
    name: 'mq',
    durability: options.durability ?? 'as the broker is configured',
    async createTopic(topic, partitions) {
      await admin.createTopics([{ topic, numPartitions: partitions }]);
    },
    async deleteTopic(topic) {
      await admin.deleteTopics([topic]);
    },
    async createProducer(o): Promise<TargetProducer> {
      const client = open();
      const po: ProducerOptions = { acks: o.acks, compression: o.compression };
      if (o.lingerMs !== null) po.lingerMs = o.lingerMs;
      if (o.batchBytes !== null) po.batchBytes = o.batchBytes;
      const producer = client.producer(po);
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
          await release(client);
        },
      };
    },
    async createConsumer(o): Promise<TargetConsumer> {
      const client = open();
      const consumer: Consumer = client.consumer({ autoOffsetReset: 'earliest' });
      let running = true;
      let loop: Promise<void> = Promise.resolve();
      return {
        async start(onRecord) {
          const mine = [];
          for (let p = 0; p < o.partitions; p++) if (o.group === undefined || p % o.members === o.member) mine.push({ topic: o.topic, partition: p, offset: 0 });
          consumer.assign(mine);
          loop = (async () => {
            while (running) {
              const records = await consumer.poll(POLL_MS);
              for (let i = 0; i < records.length; i++) {
                const r = records[i];
                onRecord(r.value ?? EMPTY, r.key);
              }
            }
          })().catch((err: unknown) => {
            if (running) throw err;
          });
        },
        async close() {
          running = false;
          await consumer.close();
          await loop.catch(() => undefined);
          await release(client);
        },
      };
    },
    async close() {
      await Promise.allSettled([...clients].map((c) => c.close()));
      clients.clear();
    },
  };
}

const EMPTY = Buffer.alloc(0);
