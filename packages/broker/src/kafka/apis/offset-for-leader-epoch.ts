/** OffsetForLeaderEpoch (a consumer checking its position after a leader change): the core's, for consumers only. */
import { OffsetForLeaderEpochApi, type OffsetForLeaderEpochRequest, type OffsetForLeaderEpochResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const offsetForLeaderEpoch: KafkaApi<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse> = {
  api: OffsetForLeaderEpochApi,
  needs: ['offsetForLeaderEpoch'],
  async handle(req, call) {
    const r = await askCore(call, 'offsetForLeaderEpoch', {
      // Consumers send -1 (or -2, "debug"); a broker's replica id is refused on the client listeners.
      replicaId: req.replicaId > 0 ? req.replicaId : -1,
      topics: req.topics.map((t) => ({
        name: t.topic,
        partitions: t.partitions.map((p) => ({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, leaderEpoch: p.leaderEpoch })),
      })),
    });
    return {
      topics: (r.topics ?? []).map((t) => ({
        topic: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({
          errorCode: kafkaCode(p.errorCode),
          partition: p.partition ?? 0,
          leaderEpoch: p.leaderEpoch ?? -1,
          endOffset: Number(p.endOffset ?? -1),
        })),
      })),
    };
  },
  refused: (req, code) => ({ topics: req.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: code })) })) }),
};
