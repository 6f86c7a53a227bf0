/** ListOffsets: earliest (-2), latest (-1) or by timestamp, from the core (Kafka's v7 max-timestamp, -3, is not served: mq's -3 is the log end). */
import { ListOffsetsApi, type ListOffsetsRequest, type ListOffsetsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const listOffsets: KafkaApi<ListOffsetsRequest, ListOffsetsResponse> = {
  api: ListOffsetsApi,
  needs: ['listOffsets'],
  async handle(req, call) {
    const r = await askCore(call, 'listOffsets', {
      replicaId: -1,
      isolationLevel: req.isolationLevel,
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partitionIndex, timestamp: p.timestamp, currentLeaderEpoch: p.currentLeaderEpoch })),
      })),
    });
    return {
      topics: (r.topics ?? []).map((t) => ({
        name: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({
          partitionIndex: p.partition ?? 0,
          errorCode: kafkaCode(p.errorCode),
          timestamp: Number(p.timestamp ?? -1),
          offset: Number(p.offset ?? -1),
          leaderEpoch: p.leaderEpoch ?? -1,
        })),
      })),
    };
  },
  refused: (req, code) => ({
    topics: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code })) })),
  }),
};
