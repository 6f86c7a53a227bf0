/**
 * Valid Kafka request frames (size prefix included) of every API the Kafka
 * listener serves, at several versions each, built with @mq/kafka-protocol:
 * what the mutator starts from. Topic and group names are the fuzzer's own
 * (fzk-*), never the steady client's topic.
 */
import {
  ApiVersionsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteGroupsApi,
  DeleteRecordsApi,
  DeleteTopicsApi,
  DescribeClusterApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  FetchApi,
  FindCoordinatorApi,
  HeartbeatApi,
  IncrementalAlterConfigsApi,
  InitProducerIdApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
  SyncGroupApi,
  Writer,
  encodeRequest,
} from '@mq/kafka-protocol';
import { DescribeClientQuotasApi, SaslAuthenticateApi, SaslHandshakeApi, writeConsumerProtocolSubscription } from '@mq/kafka-protocol/messages';
import { encodeBatchSync } from '@mq/protocol/batch';

function subscription(topics) {
  const w = new Writer();
  w.int16(0);
  writeConsumerProtocolSubscription(w, 0, { topics, userData: null });
  return Buffer.concat(w.finish());
}

/** One request body per API (the fuzzer's names), valid at every version the listener serves. */
function bodies() {
  const t = 'fzk-t1';
  const batch = encodeBatchSync([{ key: Buffer.from('k'), value: Buffer.from('fuzz value'), headers: [{ key: 'h', value: Buffer.from('v') }] }, { value: Buffer.alloc(300, 7) }]);
  return [
    [ApiVersionsApi, { clientSoftwareName: 'fuzz', clientSoftwareVersion: '1' }],
    [MetadataApi, { topics: [{ name: t }, { name: 'fzk-t2' }] }],
    [MetadataApi, { topics: null }],
    [ProduceApi, { acks: 1, timeoutMs: 5000, topicData: [{ name: t, partitionData: [{ index: 0, records: batch }] }] }],
    [ProduceApi, { acks: -1, timeoutMs: 5000, topicData: [{ name: 'fzk-t2', partitionData: [{ index: 0, records: batch }, { index: 1, records: batch }] }] }],
    [FetchApi, { replicaId: -1, maxWaitMs: 50, minBytes: 1, maxBytes: 1 << 20, sessionEpoch: -1, topics: [{ topic: t, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 16 }] }] }],
    [ListOffsetsApi, { replicaId: -1, topics: [{ name: t, partitions: [{ partitionIndex: 0, timestamp: -2 }, { partitionIndex: 1, timestamp: -1 }] }] }],
    [OffsetForLeaderEpochApi, { replicaId: -1, topics: [{ topic: t, partitions: [{ partition: 0, leaderEpoch: 0 }] }] }],
    [FindCoordinatorApi, { key: 'fzk-g1', keyType: 0 }],
    [JoinGroupApi, { groupId: 'fzk-g1', sessionTimeoutMs: 10000, rebalanceTimeoutMs: 100, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription([t]) }] }],
    [SyncGroupApi, { groupId: 'fzk-g1', generationId: 1, memberId: 'm', assignments: [] }],
    [HeartbeatApi, { groupId: 'fzk-g1', generationId: 1, memberId: 'm' }],
    [LeaveGroupApi, { groupId: 'fzk-g1', memberId: 'm', members: [{ memberId: 'm' }] }],
    [OffsetCommitApi, { groupId: 'fzk-g1', generationId: -1, memberId: '', topics: [{ name: t, partitions: [{ partitionIndex: 0, committedOffset: 1, committedMetadata: 'x' }] }] }],
    [OffsetFetchApi, { groupId: 'fzk-g1', topics: [{ name: t, partitionIndexes: [0, 1] }] }],
    [ListGroupsApi, {}],
    [DescribeGroupsApi, { groups: ['fzk-g1'] }],
    [DeleteGroupsApi, { groupsNames: ['fzk-g2'] }],
    [CreateTopicsApi, { topics: [{ name: 'fzk-t3', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '60000' }] }], timeoutMs: 5000 }],
    [DeleteTopicsApi, { topicNames: ['fzk-t3'], timeoutMs: 5000 }],
    [CreatePartitionsApi, { topics: [{ name: 'fzk-t3', count: 3, assignments: null }], timeoutMs: 5000 }],
    [DescribeConfigsApi, { resources: [{ resourceType: 2, resourceName: t, configurationKeys: null }, { resourceType: 4, resourceName: '1', configurationKeys: ['num.partitions'] }] }],
    [IncrementalAlterConfigsApi, { resources: [{ resourceType: 2, resourceName: 'fzk-t3', configs: [{ name: 'retention.ms', configOperation: 0, value: '120000' }] }] }],
    [DeleteRecordsApi, { topics: [{ name: 'fzk-t2', partitions: [{ partitionIndex: 0, offset: 1 }] }], timeoutMs: 5000 }],
    [InitProducerIdApi, { transactionalId: null, transactionTimeoutMs: 1000 }],
    [DescribeClusterApi, {}],
    // ---- quotas: read-only (a mutated AlterClientQuotas could set a <default> quota that throttles the steady client)
    [DescribeClientQuotasApi, { components: [{ entityType: 'client-id', matchType: 0, match: 'fzk-c1' }, { entityType: 'user', matchType: 1, match: null }], strict: false }],
    // SASL: a handshake (v0 turns the connection to bare tokens) and a SCRAM client-first.
    [SaslHandshakeApi, { mechanism: 'SCRAM-SHA-256' }],
    [SaslAuthenticateApi, { authBytes: Buffer.from('n,,n=fzk-user,r=fuzznonce') }],
  ];
}

/** Every corpus frame: {api, version, bytes} with size prefix, correlation id 0 (the runner rewrites it). */
export function kafkaCorpus() {
  const out = [];
  for (const [api, body] of bodies()) {
    for (let v = api.minVersion; v <= api.maxVersion; v++) out.push({ api: api.name, version: v, bytes: encodeRequest(api, v, 0, 'fuzz-kafka', body) });
  }
  return out;
}
