/**
 * The consumer protocol's subscription and assignment (protocol type
 * "consumer") as Kafka clients write them (an int16 version and Kafka's
 * encoding) and as mq's coordinator and @mq/client hold them (mq.proto's
 * ConsumerSubscription and ConsumerAssignment). Translating them at the door
 * is what lets a Kafka consumer and an @mq/client consumer share a group:
 * each side reads the other's members and assignments in its own format.
 */
import { Reader, Writer } from '@mq/kafka-protocol';
import {
  readConsumerProtocolAssignment,
  readConsumerProtocolSubscription,
  writeConsumerProtocolAssignment,
  writeConsumerProtocolSubscription,
} from '@mq/kafka-protocol/messages';
import { mq } from '@mq/protocol/wire';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** The highest consumer protocol version read as itself; a later one is read as this (Kafka's rule: new fields come last). */
const MAX_KNOWN_VERSION = 3;
/** The versions written to Kafka clients: subscription v1 (owned partitions, for cooperative assignors), assignment v0. */
const SUBSCRIPTION_VERSION_OUT = 1;
const ASSIGNMENT_VERSION_OUT = 0;

function reader(buf: Uint8Array): { r: Reader; version: number } {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const r = new Reader(b);
  const version = r.int16();
  return { r, version: Math.max(0, Math.min(version, MAX_KNOWN_VERSION)) };
}

function bytesOf(w: Writer): Buffer {
  return Buffer.concat(w.finish());
}

/** A Kafka client's subscription as mq's ConsumerSubscription. Throws MalformedKafkaError when it does not decode. */
export function subscriptionFromKafka(buf: Uint8Array): Buffer {
  if (buf.length === 0) return Buffer.alloc(0);
  const { r, version } = reader(buf);
  const s = readConsumerProtocolSubscription(r, version);
  return Buffer.from(
    mq.ConsumerSubscription.encode({
      topics: s.topics,
      userData: s.userData ?? Buffer.alloc(0),
      ownedPartitions: s.ownedPartitions.map((p) => ({ topic: p.topic, partitions: p.partitions })),
      generationId: s.generationId,
      rack: s.rackId ?? '',
    }).finish(),
  );
}

/** mq's ConsumerSubscription as a Kafka client reads it. */
export function subscriptionToKafka(buf: Uint8Array | null | undefined): Buffer {
  if (!buf || buf.length === 0) return Buffer.alloc(0);
  const s = mq.ConsumerSubscription.decode(buf);
  const w = new Writer(128);
  w.int16(SUBSCRIPTION_VERSION_OUT);
  writeConsumerProtocolSubscription(w, SUBSCRIPTION_VERSION_OUT, {
    topics: s.topics,
    userData: s.userData && s.userData.length > 0 ? Buffer.from(s.userData) : null,
    ownedPartitions: s.ownedPartitions.map((p) => ({ topic: p.topic ?? '', partitions: p.partitions ?? [] })),
  });
  return bytesOf(w);
}

/** A Kafka leader's assignment for one member as mq's ConsumerAssignment. */
export function assignmentFromKafka(buf: Uint8Array): Buffer {
  if (buf.length === 0) return Buffer.alloc(0);
  const { r, version } = reader(buf);
  const a = readConsumerProtocolAssignment(r, version);
  return Buffer.from(
    mq.ConsumerAssignment.encode({
      assignedPartitions: a.assignedPartitions.map((p) => ({ topic: p.topic, partitions: p.partitions })),
      userData: a.userData ?? Buffer.alloc(0),
    }).finish(),
  );
}

/** mq's ConsumerAssignment as a Kafka client reads it. */
export function assignmentToKafka(buf: Uint8Array | null | undefined): Buffer {
  if (!buf || buf.length === 0) return Buffer.alloc(0);
  const a = mq.ConsumerAssignment.decode(buf);
  const w = new Writer(128);
  w.int16(ASSIGNMENT_VERSION_OUT);
  writeConsumerProtocolAssignment(w, ASSIGNMENT_VERSION_OUT, {
    assignedPartitions: a.assignedPartitions.map((p) => ({ topic: p.topic ?? '', partitions: p.partitions ?? [] })),
    userData: a.userData && a.userData.length > 0 ? Buffer.from(a.userData) : null,
  });
  return bytesOf(w);
}
