/**
 * Produce: the Kafka client's record batches go to the core's produce
 * handler as they are (validated there, once, as every produce is). A Kafka
 * answer carries one base offset per partition: the core is asked as a v0
 * client, which refuses the rare retry whose batches were not written back
 * to back. acks=0 gets no response, as in Kafka.
 */
import { ProduceApi, type ProduceRequest, type ProduceResponse } from '@mq/kafka-protocol/messages';
import { NO_RESPONSE } from '../../handlers/types.js';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { callCore } from './call-core.js';

const EMPTY = Buffer.alloc(0);

export const produce: KafkaApi<ProduceRequest, ProduceResponse> = {
  api: ProduceApi,
  needs: ['produce'],
  async handle(req, call) {
    const r = await callCore(call, 'produce', {
      acks: req.acks,
      timeoutMs: req.timeoutMs,
      transactionalId: req.transactionalId ?? '',
      topics: req.topicData.map((t) => ({ name: t.name, partitions: t.partitionData.map((p) => ({ partition: p.index, records: p.records ?? EMPTY })) })),
    });
    if (r === NO_RESPONSE) return NO_RESPONSE;
    return {
      responses: (r.topics ?? []).map((t) => ({
        name: t.name ?? '',
        partitionResponses: (t.partitions ?? []).map((p) => ({
          index: p.partition ?? 0,
          errorCode: kafkaCode(p.errorCode),
          baseOffset: Number(p.baseOffset ?? -1),
          logAppendTimeMs: Number(p.logAppendTime ?? -1),
          logStartOffset: Number(p.logStartOffset ?? -1),
          errorMessage: messageOrNull(p.errorMessage),
        })),
      })),
    };
  },
  refused: (req, code, message) => ({
    responses: req.topicData.map((t) => ({
      name: t.name,
      partitionResponses: t.partitionData.map((p) => ({ index: p.index, errorCode: code, baseOffset: -1, errorMessage: message })),
    })),
  }),
};
