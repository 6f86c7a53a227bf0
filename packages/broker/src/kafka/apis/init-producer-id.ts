/** InitProducerId: a producer id for an idempotent producer, or a transactional id's (epoch bumped, earlier instances fenced), from the core. */
import { InitProducerIdApi, type InitProducerIdRequest, type InitProducerIdResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const initProducerId: KafkaApi<InitProducerIdRequest, InitProducerIdResponse> = {
  api: InitProducerIdApi,
  needs: ['initProducerId'],
  async handle(req, call) {
    const r = await askCore(call, 'initProducerId', {
      transactionalId: req.transactionalId ?? '',
      transactionTimeoutMs: Math.max(0, req.transactionTimeoutMs),
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
    });
    return { errorCode: kafkaCode(r.errorCode), producerId: Number(r.producerId ?? -1), producerEpoch: r.producerEpoch ?? -1 };
  },
  refused: (_req, code) => ({ errorCode: code, producerId: -1, producerEpoch: -1 }),
};
