import { MqClient, type Consumer, type ProducerOptions } from '@mq/client';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';

export interface MqTargetOptions {
  bootstrap: string | string[];
  /** What an ack means on this broker as configured (stated in results). */
  durability?: string;
  clientId?: string;
  /** Replication factor of the topics the bench creates (default 1); above 1 they get min.insync.replicas = a majority. */
  replicas?: number;
}

export const DEFAULT_MQ_BOOTSTRAP = '127.0.0.1:9092';

/** How long one consumer poll waits for records. */
const POLL_MS = 100;

/**
 * mq over @mq/client: one MqClient (one connection) per producer and per
 * consumer, as separate applications would have. Reading alone assigns every
 * partition from offset 0; a group joins with subscribe() (the broker's
 * group coordinator assigns partitions, offsets are auto-committed).
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
  const nextOffsets = new Map<string, number[]>();
  const adminClient = open();
  const admin = adminClient.admin();
  return {
    name: 'mq',
    durability: options.durability ?? 'as the broker is configured',
    async createTopic(topic, partitions) {
      nextOffsets.delete(topic);
      const replicas = options.replicas ?? 1;
      await admin.createTopics([
        replicas > 1
          ? { topic, numPartitions: partitions, replicationFactor: replicas, configs: { 'min.insync.replicas': String(majority(replicas)) } }
          : { topic, numPartitions: partitions },
      ]);
    },
    async deleteTopic(topic) {
      await admin.deleteTopics([topic]);
    },
    async createProducer(o): Promise<TargetProducer> {
      const client = open();
      // Connected here, as every peer adapter connects its client when it creates it: setup, not measured.
      await client.connect();
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
      await client.connect();
      // A rebalance hands a partition over from its last committed offset, so
      // a group can see a record twice (at least once); count each offset once.
      let next = nextOffsets.get(o.topic);
      if (next === undefined) nextOffsets.set(o.topic, (next = new Array<number>(o.partitions).fill(0)));
      const seen = next;
      let running = true;
      let loop: Promise<void> = Promise.resolve();
      let consumer: Consumer;
      return {
        async start(onRecord) {
          let ready: Promise<void> = Promise.resolve();
          if (o.group === undefined) {
            consumer = client.consumer({ autoOffsetReset: 'earliest' });
            const all = [];
            for (let p = 0; p < o.partitions; p++) all.push({ topic: o.topic, partition: p, offset: 0 });
            consumer.assign(all);
          } else {
            const member = client.consumer({ groupId: o.group, autoOffsetReset: 'earliest' });
            member.subscribe([o.topic]);
            consumer = member;
            ready = member.waitForAssignment();
          }
          loop = (async () => {
            while (running) {
              const records = await consumer.poll(POLL_MS);
              for (let i = 0; i < records.length; i++) {
                const r = records[i];
                if (r.offset < seen[r.partition]) continue;
                seen[r.partition] = r.offset + 1;
                onRecord(r.value ?? EMPTY, r.key);
              }
            }
          })().catch((err: unknown) => {
            if (running) throw err;
          });
          // A group member is ready once the group has given it partitions (polling drives the join).
          await ready;
        },
        async close() {
          running = false;
          await consumer?.close();
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

/** Replicas that make a majority of `replicas` (2 of 3): the min.insync.replicas of a replicated bench topic. */
export function majority(replicas: number): number {
  return Math.floor(replicas / 2) + 1;
}
