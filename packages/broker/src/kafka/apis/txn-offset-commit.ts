/** TxnOffsetCommit: offsets committed inside a transaction, at the core's group coordinator (applied when the transaction commits). */
import { TxnOffsetCommitApi, type TxnOffsetCommitRequest, type TxnOffsetCommitResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { askCore } from './call-core.js';
import { commitAnswer, commitRefused, commitTopics } from './offset-commit.js';

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
      topics: commitTopics(req.topics),
    });
    return commitAnswer(r.topics);
  },
  refused: (req, code) => commitRefused(req.topics, code),
};
