/**
 * Which versions of each API this build speaks. The handshake exchanges these
 * lists; a peer picks the highest version both sides support.
 */
import { mq } from '../gen/mq.js';

export const ApiKey = mq.ApiKey;
export type ApiKey = mq.ApiKey;

export interface ApiVersionRange {
  api: ApiKey;
  minVersion: number;
  maxVersion: number;
}

export const SUPPORTED_API_VERSIONS: readonly ApiVersionRange[] = [
  { api: mq.ApiKey.HANDSHAKE, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.METADATA, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.CREATE_TOPICS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DELETE_TOPICS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.CREATE_PARTITIONS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_CONFIGS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.INCREMENTAL_ALTER_CONFIGS, minVersion: 0, maxVersion: 0 },
  // v1: a partition's answer carries batch_base_offsets when its batches do not lie back to back.
  { api: mq.ApiKey.PRODUCE, minVersion: 0, maxVersion: 1 },
  { api: mq.ApiKey.FETCH, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.LIST_OFFSETS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.OFFSET_FOR_LEADER_EPOCH, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DELETE_RECORDS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.FIND_COORDINATOR, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.JOIN_GROUP, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.SYNC_GROUP, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.HEARTBEAT, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.LEAVE_GROUP, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.OFFSET_COMMIT, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.OFFSET_FETCH, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.LIST_GROUPS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_GROUPS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DELETE_GROUPS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.INIT_PRODUCER_ID, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ADD_PARTITIONS_TO_TXN, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ADD_OFFSETS_TO_TXN, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.END_TXN, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.WRITE_TXN_MARKERS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.TXN_OFFSET_COMMIT, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.CONTROLLER_FORWARD, minVersion: 0, maxVersion: 0 },
  // ---- security
  { api: mq.ApiKey.SASL_AUTHENTICATE, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ALTER_USER_SCRAM_CREDENTIALS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_USER_SCRAM_CREDENTIALS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.CREATE_ACLS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DELETE_ACLS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_ACLS, minVersion: 0, maxVersion: 0 },
  // ---- quotas
  { api: mq.ApiKey.ALTER_CLIENT_QUOTAS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_CLIENT_QUOTAS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_LOG_DIRS, minVersion: 0, maxVersion: 0 },
  // ---- scaleout
  { api: mq.ApiKey.ALTER_PARTITION_REASSIGNMENTS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.LIST_PARTITION_REASSIGNMENTS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ELECT_LEADERS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DECOMMISSION_BROKER, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ALTER_REPLICATION_THROTTLE, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.ALTER_RAFT_VOTERS, minVersion: 0, maxVersion: 0 },
  { api: mq.ApiKey.DESCRIBE_QUORUM, minVersion: 0, maxVersion: 0 },
];

/** The highest version both lists support, or undefined when they share none. */
export function negotiateVersion(
  api: ApiKey,
  ours: readonly ApiVersionRange[],
  theirs: readonly ApiVersionRange[],
): number | undefined {
  const a = ours.find((r) => r.api === api);
  const b = theirs.find((r) => r.api === api);
  if (!a || !b) return undefined;
  const max = Math.min(a.maxVersion, b.maxVersion);
  const min = Math.max(a.minVersion, b.minVersion);
  return max >= min ? max : undefined;
}
