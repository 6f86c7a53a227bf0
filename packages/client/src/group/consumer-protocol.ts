/**
 * The "consumer" protocol type: what a member puts in its JoinGroup metadata
 * (its subscription) and what the leader sends back per member in SyncGroup
 * (its assignment). Protobuf messages of mq.proto.
 */
import { MqError } from '@mq/protocol/errors';
import { mq } from '@mq/protocol/wire';
import type { TopicPartition } from './types.js';

export const CONSUMER_PROTOCOL_TYPE = 'consumer';

export interface Subscription {
  topics: string[];
  ownedPartitions: TopicPartition[];
  generationId: number;
  userData?: Uint8Array;
  rack?: string;
}

/** Groups partitions by topic (topics and partitions sorted). */
export function groupByTopic(partitions: readonly TopicPartition[]): Array<{ topic: string; partitions: number[] }> {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of partitions) {
    let list = byTopic.get(topic);
    if (!list) byTopic.set(topic, (list = []));
    list.push(partition);
  }
  return [...byTopic.keys()].sort().map((topic) => ({ topic, partitions: byTopic.get(topic)!.sort((a, b) => a - b) }));
}

function flatten(list: readonly mq.TopicPartitions.$Properties[] | null | undefined): TopicPartition[] {
  const out: TopicPartition[] = [];
  for (const tp of list ?? []) for (const partition of tp.partitions ?? []) out.push({ topic: tp.topic ?? '', partition });
  return out;
}

export function encodeSubscription(s: Subscription): Uint8Array {
  return mq.ConsumerSubscription.encode({
    topics: [...s.topics].sort(),
    ownedPartitions: groupByTopic(s.ownedPartitions),
    generationId: s.generationId,
    userData: s.userData ?? new Uint8Array(),
    rack: s.rack ?? '',
  }).finish();
}

export function decodeSubscription(buf: Uint8Array | null | undefined): Subscription {
  try {
    const s = mq.ConsumerSubscription.decode(buf ?? new Uint8Array());
    return {
      topics: s.topics ?? [],
      ownedPartitions: flatten(s.ownedPartitions),
      generationId: s.generationId ?? -1,
      userData: s.userData,
      rack: s.rack ?? '',
    };
  } catch (cause) {
    throw new MqError('CORRUPT_MESSAGE', `a member's subscription does not decode: ${(cause as Error).message}`, { cause });
  }
}

export function encodeAssignment(partitions: readonly TopicPartition[], userData?: Uint8Array): Uint8Array {
  return mq.ConsumerAssignment.encode({ assignedPartitions: groupByTopic(partitions), userData: userData ?? new Uint8Array() }).finish();
}

export function decodeAssignment(buf: Uint8Array | null | undefined): TopicPartition[] {
  try {
    return flatten(mq.ConsumerAssignment.decode(buf ?? new Uint8Array()).assignedPartitions);
  } catch (cause) {
    throw new MqError('CORRUPT_MESSAGE', `the assignment does not decode: ${(cause as Error).message}`, { cause });
  }
}

export function tpKey(tp: TopicPartition): string {
  return `${tp.topic}\u0000${tp.partition}`;
}

export function compareTp(a: TopicPartition, b: TopicPartition): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
}
