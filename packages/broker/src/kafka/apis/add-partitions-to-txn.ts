/** AddPartitionsToTxn (v0-3): the core's transaction coordinator adds all the partitions or none; every partition gets its answer. */
import { AddPartitionsToTxnApi, type AddPartitionsToTxnRequest, type AddPartitionsToTxnResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

function answer(req: AddPartitionsToTxnRequest, errorCode: number) {
  return { results: req.topics.map((t) => ({ name: t.name, results: t.partitions.map((partitionIndex) => ({ partitionIndex, errorCode })) })) };
}

export const addPartitionsToTxn: KafkaApi<AddPartitionsToTxnRequest, AddPartitionsToTxnResponse> = {
  api: AddPartitionsToTxnApi,
  needs: ['addPartitionsToTxn'],
  async handle(req, call) {
    const r = await askCore(call, 'addPartitionsToTxn', {
      transactionalId: req.transactionalId,
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions })),
    });
    return answer(req, kafkaCode(r.errorCode));
  },
  refused: (req, code) => answer(req, code),
};
