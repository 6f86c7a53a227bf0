import { AckPolicy, DeliverPolicy, StorageType, connect, type JetStreamClient, type JetStreamManager, type NatsConnection } from 'nats';
import type { BenchTarget, TargetConsumer, TargetProducer } from '../target.js';
import { createPartitioner } from '../target.js';

export interface NatsTargetOptions {
  /** `host:port` of nats-server (JetStream enabled), or of each server of a cluster. */
  servers: string | string[];
  /** What the server's configuration makes an ack mean (stated in results). */
  durability?: string;
  /** Replicas of each stream (JetStream num_replicas, needs a cluster of at least that many servers; default 1). */
  replicas?: number;
}

export const NATS_DEFAULT_DURABILITY = 'JetStream file storage, ack after write to the OS (sync_interval default 2 min: no fsync before ack)';

/** Messages a consumer asks the server for at once. */
const PULL_BATCH = 10_000;

/**
 * NATS JetStream over npm `nats`. A partition is one stream (`<topic>-<p>`,
 * subject `<topic>.<p>`): JetStream has no partitions, and separate streams
 * give it the same parallelism. Keys only choose the partition. Reading alone
 * uses an ordered consumer per stream; a group shares one durable pull
 * consumer per stream (ack policy none, as mq commits offsets, not records).
 */
export async function createNatsTarget(options: NatsTargetOptions): Promise<BenchTarget> {
  const conns: NatsConnection[] = [];
  const open = async (): Promise<NatsConnection> => {
    const nc = await connect({ servers: options.servers, maxPingOut: 100, reconnect: false, noAsyncTraces: true });
    conns.push(nc);
    return nc;
  };
  const admin = await open();
  const jsm: JetStreamManager = await admin.jetstreamManager();
  const stream = (topic: string, p: number): string => `${topic}-${p}`;
  return {
    name: 'nats',
    durability: options.durability ?? NATS_DEFAULT_DURABILITY,
    async createTopic(topic, partitions) {
      for (let p = 0; p < partitions; p++) {
        await jsm.streams.delete(stream(topic, p)).catch(() => false);
        await jsm.streams.add({ name: stream(topic, p), subjects: [`${topic}.${p}`], storage: StorageType.File, num_replicas: options.replicas ?? 1 });
      }
    },
    async deleteTopic(topic) {
      for (const s of await jsm.streams.list().next()) {
        if (s.config.name.startsWith(`${topic}-`)) await jsm.streams.delete(s.config.name).catch(() => false);
      }
    },
    async createProducer(o): Promise<TargetProducer> {
      const nc = await open();
      const js: JetStreamClient = nc.jetstream();
      const partitionOf = createPartitioner(o.partitions);
      const subjects = Array.from({ length: o.partitions }, (_, p) => `${o.topic}.${p}`);
      return {
        send(key, value) {
          return js.publish(subjects[partitionOf(key)], value);
        },
        async flush() {
          await nc.flush();
        },
        async close() {
          await nc.drain().catch(() => undefined);
        },
      };
    },
    async createConsumer(o): Promise<TargetConsumer> {
      const nc = await open();
      const js = nc.jetstream();
      const mine = Array.from({ length: o.partitions }, (_, p) => p);
      const stops: Array<() => void> = [];
      const loops: Array<Promise<void>> = [];
      return {
        async start(onRecord) {
          for (const p of mine) {
            let consumer;
            if (o.group === undefined) {
              consumer = await js.consumers.get(stream(o.topic, p)); // ordered, from the first message
            } else {
              const name = `${o.group}-${p}`;
              await jsm.consumers
                .add(stream(o.topic, p), { durable_name: name, ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All })
                .catch(() => undefined);
              consumer = await js.consumers.get(stream(o.topic, p), name);
            }
            const messages = await consumer.consume({ max_messages: PULL_BATCH });
            stops.push(() => void messages.stop());
            loops.push(
              (async () => {
                for await (const m of messages) onRecord(m.data, null);
              })().catch(() => undefined),
            );
          }
        },
        async close() {
          for (const s of stops) s();
          await Promise.allSettled(loops);
          await nc.close().catch(() => undefined);
        },
      };
    },
    async close() {
      await Promise.allSettled(conns.map((c) => (c.isClosed() ? Promise.resolve() : c.close())));
    },
  };
}
