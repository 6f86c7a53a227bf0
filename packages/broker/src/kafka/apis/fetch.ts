/**
 * Fetch: the core's fetch (one long poll, pooled reads) and its record
 * batches written to the socket as read from the log — they are Kafka's v2
 * batches already (zero copy); the pooled buffers go back once written.
 * No fetch sessions: the answer's session id is 0 (every fetch is full).
 */
import { FetchApi, type FetchRequest, type FetchResponse } from '@mq/kafka-protocol/messages';
import { releaseFetchRecords } from '../../handlers/fetch.js';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

const EMPTY = Buffer.alloc(0);

export const fetch: KafkaApi<FetchRequest, FetchResponse> = {
  api: FetchApi,
  needs: ['fetch'],
  async handle(req, call) {
    const r = await askCore(call, 'fetch', {
      replicaId: -1,
      maxWaitMs: Math.max(0, req.maxWaitMs),
      minBytes: Math.max(0, req.minBytes),
      maxBytes: Math.max(1, req.maxBytes),
      isolationLevel: req.isolationLevel,
      topics: req.topics.map((t) => ({
        name: t.topic,
        partitions: t.partitions.map((p) => ({
          partition: p.partition,
          fetchOffset: p.fetchOffset,
          partitionMaxBytes: Math.max(1, p.partitionMaxBytes),
          currentLeaderEpoch: p.currentLeaderEpoch,
          logStartOffset: p.logStartOffset,
        })),
      })),
    });
    call.afterWrite(() => releaseFetchRecords(r, call.ctx.broker.readBuffers));
    return {
      errorCode: 0,
      sessionId: 0,
      responses: (r.topics ?? []).map((t) => ({
        topic: t.name ?? '',
        partitions: (t.partitions ?? []).map((p) => ({
          partitionIndex: p.partition ?? 0,
          errorCode: kafkaCode(p.errorCode),
          highWatermark: Number(p.highWatermark ?? -1),
          lastStableOffset: Number(p.lastStableOffset ?? p.highWatermark ?? -1),
          logStartOffset: Number(p.logStartOffset ?? -1),
          // read_committed: the aborted transactions within the records (null when none, as Kafka).
          abortedTransactions: p.abortedTransactions && p.abortedTransactions.length > 0 ? p.abortedTransactions.map((a) => ({ producerId: Number(a.producerId ?? -1), firstOffset: Number(a.firstOffset ?? -1) })) : null,
          preferredReadReplica: -1,
          // An empty record set is written as zero bytes, not null (librdkafka refuses a null one).
          records: p.records && p.records.length > 0 ? (p.records as Buffer) : EMPTY,
        })),
      })),
    };
  },
  refused: (req, code) => ({
    errorCode: code,
    responses: req.topics.map((t) => ({ topic: t.topic, partitions: t.partitions.map((p) => ({ partitionIndex: p.partition, errorCode: code, highWatermark: -1 })) })),
  }),
};
