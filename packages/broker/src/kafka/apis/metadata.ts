/**
 * Metadata: the core's brokers (those with a Kafka listener, at its address)
 * and topics. From v1 a null topic list means every topic and an empty one
 * none (v0: empty means every topic).
 */
import { MetadataApi, type MetadataRequest, type MetadataResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi, KafkaDoorView } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export function kafkaBrokers(door: KafkaDoorView, brokers: ReadonlyArray<{ id?: number | null; rack?: string | null; fenced?: boolean | null }>) {
  const out: Array<{ nodeId: number; host: string; port: number; rack: string | null }> = [];
  for (const b of brokers) {
    const at = b.fenced ? undefined : door.endpoint(b.id ?? -1);
    if (at) out.push({ nodeId: b.id ?? -1, host: at.host, port: at.port, rack: b.rack ? b.rack : null });
  }
  return out;
}

export const metadata: KafkaApi<MetadataRequest, MetadataResponse> = {
  api: MetadataApi,
  needs: ['metadata'],
  async handle(req, call) {
    const none = call.version >= 1 && req.topics !== null && req.topics.length === 0;
    const names = (req.topics ?? []).map((t) => t.name);
    const r = await askCore(call, 'metadata', { topics: names, includeInternal: names.length > 0 });
    return {
      brokers: kafkaBrokers(call.door, r.brokers ?? []),
      clusterId: r.clusterId ?? null,
      controllerId: r.controllerId ?? -1,
      topics: none
        ? []
        : (r.topics ?? []).map((t) => ({
            errorCode: kafkaCode(t.errorCode),
            name: t.name ?? '',
            isInternal: t.internal ?? false,
            partitions: (t.partitions ?? []).map((p) => ({
              errorCode: kafkaCode(p.errorCode),
              partitionIndex: p.partition ?? 0,
              leaderId: p.leader ?? -1,
              leaderEpoch: p.leaderEpoch ?? -1,
              replicaNodes: p.replicas ?? [],
              isrNodes: p.isr ?? [],
              offlineReplicas: p.offlineReplicas ?? [],
            })),
          })),
    };
  },
  refused: (req, code) => ({ brokers: [], topics: (req.topics ?? []).map((t) => ({ name: t.name, errorCode: code })) }),
};
