/** AddOffsetsToTxn: the group's __consumer_offsets partition joins the transaction, at the core's transaction coordinator. */
import { AddOffsetsToTxnApi, type AddOffsetsToTxnRequest, type AddOffsetsToTxnResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const addOffsetsToTxn: KafkaApi<AddOffsetsToTxnRequest, AddOffsetsToTxnResponse> = {
  api: AddOffsetsToTxnApi,
  needs: ['addOffsetsToTxn'],
  async handle(req, call) {
    const r = await askCore(call, 'addOffsetsToTxn', { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, groupId: req.groupId });
    return { errorCode: kafkaCode(r.errorCode) };
  },
  refused: (_req, code) => ({ errorCode: code }),
};
