/** EndTxn: commit or abort, at the core's transaction coordinator. */
import { EndTxnApi, type EndTxnRequest, type EndTxnResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const endTxn: KafkaApi<EndTxnRequest, EndTxnResponse> = {
  api: EndTxnApi,
  needs: ['endTxn'],
  async handle(req, call) {
    const r = await askCore(call, 'endTxn', { transactionalId: req.transactionalId, producerId: req.producerId, producerEpoch: req.producerEpoch, committed: req.committed });
    return { errorCode: kafkaCode(r.errorCode) };
  },
  refused: (_req, code) => ({ errorCode: code }),
};
