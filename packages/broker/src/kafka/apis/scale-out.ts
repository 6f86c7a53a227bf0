/**
 * The scale-out APIs on the Kafka door (KIP-455 reassignments, KIP-460
 * elections, KIP-113 log directories), so Kafka's tools and admin clients
 * (kafka-reassign-partitions, kafkajs' alterPartitionReassignments,
 * @platformatic/kafka's describeLogDirs) work: each calls the same core
 * handler as `mq topic reassign`, `mq cluster elect-leaders` and the console.
 */
import {
  AlterPartitionReassignmentsApi,
  DescribeLogDirsApi,
  ElectLeadersApi,
  ListPartitionReassignmentsApi,
  type AlterPartitionReassignmentsRequest,
  type AlterPartitionReassignmentsResponse,
  type DescribeLogDirsRequest,
  type DescribeLogDirsResponse,
  type ElectLeadersRequest,
  type ElectLeadersResponse,
  type ListPartitionReassignmentsRequest,
  type ListPartitionReassignmentsResponse,
} from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';

/** Groups per-partition results by topic, in the order topics first appear. */
function byTopic<T extends { topic?: string | null }, O>(items: readonly T[], map: (x: T) => O): Array<[string, O[]]> {
  const out = new Map<string, O[]>();
  for (const x of items) {
    const name = x.topic ?? '';
    let l = out.get(name);
    if (!l) out.set(name, (l = []));
    l.push(map(x));
  }
  return [...out];
}

export const alterPartitionReassignments: KafkaApi<AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse> = {
  api: AlterPartitionReassignmentsApi,
  needs: ['alterPartitionReassignments'],
  async handle(req, call) {
    const r = await askCore(call, 'alterPartitionReassignments', {
      timeoutMs: Math.max(0, req.timeoutMs),
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => (p.replicas === null ? { partition: p.partitionIndex, cancel: true } : { partition: p.partitionIndex, replicas: p.replicas })),
      })),
      // Kafka before KIP-860 lets a reassignment change the replication factor (the v1 option defaults to true too).
      allowReplicationFactorChange: true,
    });
    return {
      errorCode: 0,
      errorMessage: null,
      responses: byTopic(r.results ?? [], (x) => ({ partitionIndex: x.partition ?? 0, errorCode: kafkaCode(x.errorCode), errorMessage: messageOrNull(x.errorMessage) })).map(([name, partitions]) => ({ name, partitions })),
    };
  },
  refused: (req, code, message) => ({
    errorCode: code,
    errorMessage: message,
    responses: req.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code, errorMessage: message })) })),
  }),
};

export const listPartitionReassignments: KafkaApi<ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse> = {
  api: ListPartitionReassignmentsApi,
  needs: ['listPartitionReassignments'],
  async handle(req, call) {
    const r = await askCore(call, 'listPartitionReassignments', { topics: (req.topics ?? []).map((t) => t.name) });
    const asked = req.topics ? new Map(req.topics.map((t) => [t.name, new Set(t.partitionIndexes)])) : undefined;
    const ongoing = (r.reassignments ?? []).filter((x) => !asked || asked.get(x.topic ?? '')?.has(x.partition ?? -1));
    return {
      errorCode: 0,
      errorMessage: null,
      topics: byTopic(ongoing, (x) => ({
        partitionIndex: x.partition ?? 0,
        replicas: x.replicas ?? [],
        addingReplicas: x.addingReplicas ?? [],
        removingReplicas: x.removingReplicas ?? [],
      })).map(([name, partitions]) => ({ name, partitions })),
    };
  },
  refused: (_req, code, message) => ({ errorCode: code, errorMessage: message, topics: [] }),
};

export const electLeaders: KafkaApi<ElectLeadersRequest, ElectLeadersResponse> = {
  api: ElectLeadersApi,
  needs: ['electLeaders'],
  async handle(req, call) {
    if (req.electionType !== 0) {
      // mq elects leaders only from the ISR: an unclean election is never asked for, only refused.
      const message = 'only preferred-leader elections (election type 0): mq never elects a leader from outside the ISR on request';
      const code = kafkaErrorCode('INVALID_REQUEST');
      return {
        errorCode: call.version >= 1 ? code : 0,
        replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: code, errorMessage: message })) })),
      };
    }
    const r = await askCore(call, 'electLeaders', {
      timeoutMs: Math.max(0, req.timeoutMs),
      topics: (req.topicPartitions ?? []).map((t) => ({ name: t.topic, partitions: t.partitions })),
    });
    return {
      errorCode: 0,
      replicaElectionResults: byTopic(r.results ?? [], (x) => ({ partitionId: x.partition ?? 0, errorCode: kafkaCode(x.errorCode), errorMessage: messageOrNull(x.errorMessage) })).map(([topic, partitionResult]) => ({
        topic,
        partitionResult,
      })),
    };
  },
  refused: (req, code, message, version) => ({
    errorCode: version >= 1 ? code : 0,
    replicaElectionResults: (req.topicPartitions ?? []).map((t) => ({ topic: t.topic, partitionResult: t.partitions.map((p) => ({ partitionId: p, errorCode: code, errorMessage: message })) })),
  }),
};

export const describeLogDirs: KafkaApi<DescribeLogDirsRequest, DescribeLogDirsResponse> = {
  api: DescribeLogDirsApi,
  needs: ['describeLogDirs'],
  async handle(req, call) {
    // Kafka's null topics: every replica; a list naming no partition: the log dir without replicas (the core reads
    // an empty filter as every replica).
    const none = req.topics !== null && req.topics.every((t) => t.partitions.length === 0);
    const r = await askCore(call, 'describeLogDirs', { partitions: (req.topics ?? []).map((t) => ({ topic: t.topic, partitions: t.partitions })) });
    const replicas = none ? [] : (r.replicas ?? []);
    return {
      errorCode: kafkaCode(r.errorCode),
      results: [
        {
          errorCode: kafkaCode(r.errorCode),
          logDir: r.logDir ?? '',
          topics: byTopic(replicas, (x) => ({ partitionIndex: x.partition ?? 0, partitionSize: Number(x.sizeBytes ?? 0), offsetLag: Number(x.offsetLag ?? 0), isFutureKey: false })).map(([name, partitions]) => ({
            name,
            partitions,
          })),
          totalBytes: Number(r.totalBytes ?? -1),
          usableBytes: Number(r.usableBytes ?? -1),
        },
      ],
    };
  },
  refused: (_req, code) => ({ errorCode: code, results: [] }),
};
