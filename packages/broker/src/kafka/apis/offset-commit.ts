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
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, committedOffset: p.committedOffset, committedLeaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata ?? '' })),
      })),
    });
    return {
      topics: (r.topics ?? []).map((t) => ({
        name: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({ partitionIndex: p.partition ?? 0, errorCode: kafkaCode(p.errorCode) })),
      })),
    };
  },
  refused: (req, code) => ({ topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })) }),
};
