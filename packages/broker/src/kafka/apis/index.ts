/**
 * The Kafka APIs the Kafka listener serves, one adapter file each. Adding an
 * API is its schema (packages/kafka-protocol/schema), its adapter and one
 * line here; ApiVersions advertises exactly these, where the core has the
 * handlers they call.
 */
import type { HandlerMap } from '../../handlers/types.js';
import type { AnyKafkaApi } from '../types.js';
import { addOffsetsToTxn } from './add-offsets-to-txn.js';
import { addPartitionsToTxn } from './add-partitions-to-txn.js';
import { alterConfigs } from './alter-configs.js';
import { endTxn } from './end-txn.js';
import { txnOffsetCommit } from './txn-offset-commit.js';
import { apiVersions } from './api-versions.js';
import { createPartitions } from './create-partitions.js';
import { createTopics } from './create-topics.js';
import { deleteGroups } from './delete-groups.js';
import { deleteRecords } from './delete-records.js';
import { deleteTopics } from './delete-topics.js';
import { describeCluster } from './describe-cluster.js';
import { alterClientQuotas, describeClientQuotas } from './client-quotas.js';
import { describeConfigs } from './describe-configs.js';
import { describeGroups } from './describe-groups.js';
import { fetch } from './fetch.js';
import { findCoordinator } from './find-coordinator.js';
import { heartbeat } from './heartbeat.js';
import { incrementalAlterConfigs } from './incremental-alter-configs.js';
import { initProducerId } from './init-producer-id.js';
import { joinGroup } from './join-group.js';
import { leaveGroup } from './leave-group.js';
import { listGroups } from './list-groups.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetCommit } from './offset-commit.js';
import { offsetFetch } from './offset-fetch.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';
import { saslAuthenticate } from './sasl-authenticate.js';
import { saslHandshake } from './sasl-handshake.js';
import { syncGroup } from './sync-group.js';
import { alterPartitionReassignments, describeLogDirs, electLeaders, listPartitionReassignments } from './scale-out.js';

export const KAFKA_APIS: readonly AnyKafkaApi[] = [
  apiVersions,
  metadata,
  produce,
  fetch,
  listOffsets,
  offsetForLeaderEpoch,
  findCoordinator,
  joinGroup,
  syncGroup,
  heartbeat,
  leaveGroup,
  offsetCommit,
  offsetFetch,
  listGroups,
  describeGroups,
  deleteGroups,
  createTopics,
  deleteTopics,
  createPartitions,
  describeConfigs,
  alterConfigs,
  incrementalAlterConfigs,
  deleteRecords,
  initProducerId,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  describeCluster,
  // ---- scaleout
  alterPartitionReassignments,
  listPartitionReassignments,
  electLeaders,
  describeLogDirs,
  // ---- quotas
  describeClientQuotas,
  alterClientQuotas,
  saslHandshake,
  saslAuthenticate,
];

/** The adapters whose core handlers `core` has, by API key. */
export function servedKafkaApis(core: HandlerMap, apis: readonly AnyKafkaApi[] = KAFKA_APIS): Map<number, AnyKafkaApi> {
  return new Map(apis.filter((a) => a.needs.every((n) => core[n] !== undefined)).map((a) => [a.api.key, a]));
}
