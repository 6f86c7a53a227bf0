/** DeleteRecords: the core's, on the partitions led here (-1: up to the high watermark). */
import { DeleteRecordsApi, type DeleteRecordsRequest, type DeleteRecordsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const deleteRecords: KafkaApi<DeleteRecordsRequest, DeleteRecordsResponse> = {
  api: DeleteRecordsApi,
  needs: ['deleteRecords'],
  async handle(req, call) {
    const r = await askCore(call, 'deleteRecords', {
      topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, offset: p.offset })) })),
      timeoutMs: Math.max(0, req.timeoutMs),
    });
    return {
      topics: (r.topics ?? []).map((t) => ({
        name: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({ partitionIndex: p.partition ?? 0, lowWatermark: Number(p.lowWatermark ?? -1), errorCode: kafkaCode(p.errorCode) })),
      })),
    };
  },
  refused: (req, code) => ({ topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, lowWatermark: -1, errorCode: code })) })) }),
};
