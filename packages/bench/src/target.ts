/**
 * The system under test, seen by the workloads. mq implements it over
 * @mq/client; the peers (NATS JetStream, Redis Streams, RabbitMQ Streams)
 * implement it over their usual Node clients, so every system runs the same
 * workload code.
 */
import type { Acks } from '@mq/protocol/acks';

export type Compression = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';

export interface TargetProducerOptions {
  topic: string;
  partitions: number;
  acks: Acks;
  /** Null: the client's own default. */
  batchBytes: number | null;
  lingerMs: number | null;
  compression: Compression;
  /** Records the workload may have outstanding (sent, not acknowledged). */
  window: number;
}

export interface TargetProducer {
  /** Resolves when the record is acknowledged as the target's durability defines it. */
  send(key: Buffer | undefined, value: Buffer): Promise<unknown>;
  /** Sends whatever the client still buffers; resolves once it is acknowledged. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export interface TargetConsumerOptions {
  topic: string;
  partitions: number;
  /** Consumer group to join; undefined reads every partition alone. */
  group?: string;
  /** This consumer's index and how many there are (members of one group). */
  member: number;
  members: number;
}

export type RecordHandler = (value: Uint8Array, key: Uint8Array | null) => void;

export interface TargetConsumer {
  /** Starts delivering records from the beginning of the topic; resolves once it is subscribed. */
  start(onRecord: RecordHandler): Promise<void>;
  close(): Promise<void>;
}

export interface BenchTarget {
  readonly name: string;
  /** What an acknowledgement means here, as configured (stated in every result). */
  readonly durability: string;
  /** Creates the topic (or the peer's equivalent), empty, with `partitions` partitions. */
  createTopic(topic: string, partitions: number): Promise<void>;
  /** Removes a topic this run created (best effort). */
  deleteTopic(topic: string): Promise<void>;
  createProducer(options: TargetProducerOptions): Promise<TargetProducer>;
  createConsumer(options: TargetConsumerOptions): Promise<TargetConsumer>;
  close(): Promise<void>;
}

/** Spreads records over `partitions` the way the peers' adapters do: key hash, else round robin. */
export function createPartitioner(partitions: number): (key: Buffer | undefined) => number {
  let next = 0;
  return (key) => {
    if (partitions === 1) return 0;
    if (key === undefined) {
      next = (next + 1) % partitions;
      return next;
    }
    let h = 0x811c9dc5;
    for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key[i], 0x01000193);
    return (h >>> 0) % partitions;
  };
}
