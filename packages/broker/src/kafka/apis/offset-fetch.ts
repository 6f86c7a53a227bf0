/** OffsetFetch: the core's coordinator; a null topic list (v2+) asks for every committed offset of the group; v7's require_stable is KIP-447's. */
import { OffsetFetchApi, type OffsetFetchRequest, type OffsetFetchResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const offsetFetch: KafkaApi<OffsetFetchRequest, OffsetFetchResponse> = {
  api: OffsetFetchApi,
  needs: ['offsetFetch'],
  async handle(req, call) {
    const r = await askCore(call, 'offsetFetch', {
      groupId: req.groupId,
      topics: (req.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes })),
      requireStable: req.requireStable ?? false,
    });
    const errorCode = kafkaCode(r.errorCode);
    // v1 has no top-level error code: each partition carries it.
    const perPartition = call.version < 2 ? errorCode : 0;
    const topics = (r.topics ?? []).map((t) => ({
      name: t.name ?? '',
      partitions: (t.partitions ?? []).map((p) => ({
        partitionIndex: p.partition ?? 0,
        committedOffset: Number(p.committedOffset ?? -1),
        committedLeaderEpoch: p.committedLeaderEpoch ?? -1,
        metadata: p.metadata ?? '',
        errorCode: kafkaCode(p.errorCode) || perPartition,
      })),
    }));
    if (call.version < 2 && errorCode && topics.length === 0) {
      return { errorCode, topics: (req.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1, errorCode })) })) };
    }
    return { errorCode, topics };
  },
  refused: (req, code) => ({
    errorCode: code,
    topics: (req.topics ?? []).map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((p) => ({ partitionIndex: p, committedOffset: -1, errorCode: code })) })),
  }),
};
