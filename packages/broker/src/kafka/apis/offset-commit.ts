/** OffsetCommit: the core's coordinator (v0, without a generation, commits as from outside the group). */
import { OffsetCommitApi, type OffsetCommitRequest, type OffsetCommitResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const offsetCommit: KafkaApi<OffsetCommitRequest, OffsetCommitResponse> = {
  api: OffsetCommitApi,
  needs: ['offsetCommit'],
  async handle(req, call) {
    const r = await askCore(call, 'offsetCommit', {
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId ?? '',
      topics: commitTopics(req.topics),
    });
    return commitAnswer(r.topics);
  },
  refused: (req, code) => commitRefused(req.topics, code),
};

/** The topics of an OffsetCommit or TxnOffsetCommit (the same shape in both), as the core takes them. */
interface KafkaCommitTopic {
  name: string;
  partitions: ReadonlyArray<{ partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; committedMetadata?: string | null }>;
}

export function commitTopics(topics: readonly KafkaCommitTopic[]) {
  return topics.map((t) => ({
    name: t.name,
    partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata ?? '' })),
  }));
}

/** The core's per-partition answers of a commit, in Kafka's shape. */
export function commitAnswer(topics: ReadonlyArray<{ name?: string | null; partitions?: ReadonlyArray<{ partition?: number | null; errorCode?: number | null }> | null }> | null | undefined) {
  return {
    topics: (topics ?? []).map((t) => ({
      name: t.name ?? '',
      partitions: (t.partitions ?? []).map((p) => ({ partitionIndex: p.partition ?? 0, errorCode: kafkaCode(p.errorCode) })),
    })),
  };
}

/** Every partition of a refused commit answered with `code`. */
export function commitRefused(topics: readonly KafkaCommitTopic[], code: number) {
  return { topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })) };
}
