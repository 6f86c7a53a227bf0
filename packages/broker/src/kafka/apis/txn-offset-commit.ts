/** TxnOffsetCommit: offsets committed inside a transaction, at the core's group coordinator (applied when the transaction commits). */
import { TxnOffsetCommitApi, type TxnOffsetCommitRequest, type TxnOffsetCommitResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const txnOffsetCommit: KafkaApi<TxnOffsetCommitRequest, TxnOffsetCommitResponse> = {
  api: TxnOffsetCommitApi,
  needs: ['txnOffsetCommit'],
  async handle(req, call) {
    const r = await askCore(call, 'txnOffsetCommit', {
      transactionalId: req.transactionalId,
      groupId: req.groupId,
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
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
