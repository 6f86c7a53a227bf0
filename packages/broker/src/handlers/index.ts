/**
 * The broker's request handlers, keyed by the frame body name. Adding an API
 * is adding its module and one line here; the handshake advertises exactly
 * the APIs listed.
 */
import { BODY_API, SUPPORTED_API_VERSIONS, type ApiVersionRange, type RequestBody } from '@mq/protocol/wire';
import { alterPartitionReassignments } from './alter-partition-reassignments.js';
import { alterReplicationThrottle } from './alter-replication-throttle.js';
import { controllerForward } from './controller-forward.js';
import { decommissionBroker } from './decommission-broker.js';
import { electLeaders } from './elect-leaders.js';
import { listPartitionReassignments } from './list-partition-reassignments.js';
import { createPartitions } from './create-partitions.js';
import { createTopics } from './create-topics.js';
import { deleteRecords } from './delete-records.js';
import { deleteTopics } from './delete-topics.js';
import type { HandlerDeps } from './deps.js';
import { describeConfigs } from './describe-configs.js';
import { fetch } from './fetch.js';
import { handshake } from './handshake.js';
import { incrementalAlterConfigs } from './incremental-alter-configs.js';
import { initProducerId } from './init-producer-id.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';
import { writeTxnMarkers } from './write-txn-markers.js';
import type { HandlerMap } from './types.js';
import { alterUserScramCredentials, describeUserScramCredentials } from './alter-user-scram-credentials.js';
import { createAcls, deleteAcls, describeAcls } from './acls.js';
import { alterClientQuotas, describeClientQuotas } from './client-quotas.js';
import { describeLogDirs } from './describe-log-dirs.js';
import { alterRaftVoters } from './alter-raft-voters.js';
import { describeQuorum } from './describe-quorum.js';

/** The handlers that need nothing but the broker context; the groups add theirs (group/broker-groups.ts). */
export const DEFAULT_HANDLERS: HandlerMap = {
  handshake,
  initProducerId,
};

/**
 * The metadata, topic admin and partition APIs, over the controller and the
 * replica manager (the cluster node builds them; a one-node cluster's too):
 * Metadata from the metadata log; Produce, Fetch, ListOffsets and
 * OffsetForLeaderEpoch on the partitions this broker leads (NOT_LEADER
 * otherwise, so the client refreshes metadata and goes to the leader); topic
 * admin (and IncrementalAlterConfigs) through the controller; DeleteRecords
 * on the leaders; ControllerForward for other brokers.
 */
export function partitionHandlers(d: HandlerDeps): HandlerMap {
  return {
    metadata: metadata(d),
    produce: produce(d),
    fetch: fetch(d),
    listOffsets: listOffsets(d),
    offsetForLeaderEpoch: offsetForLeaderEpoch(d),
    createTopics: createTopics(d),
    deleteTopics: deleteTopics(d),
    createPartitions: createPartitions(d),
    describeConfigs: describeConfigs(d),
    incrementalAlterConfigs: incrementalAlterConfigs(d),
    deleteRecords: deleteRecords(d),
    controllerForward: controllerForward(d),
    writeTxnMarkers: writeTxnMarkers(d),
    // ---- security: users and ACLs in the metadata log (SaslAuthenticate is the broker's, see broker.ts)
    alterUserScramCredentials: alterUserScramCredentials(d),
    describeUserScramCredentials: describeUserScramCredentials(d),
    createAcls: createAcls(d),
    deleteAcls: deleteAcls(d),
    describeAcls: describeAcls(d),
    // ---- scaleout
    alterPartitionReassignments: alterPartitionReassignments(d),
    listPartitionReassignments: listPartitionReassignments(d),
    electLeaders: electLeaders(d),
    decommissionBroker: decommissionBroker(d),
    alterReplicationThrottle: alterReplicationThrottle(d),
    // ---- quotas: client quotas in the metadata log (enforced by quota/)
    alterClientQuotas: alterClientQuotas(d),
    describeClientQuotas: describeClientQuotas(d),
    // ---- log dirs
    describeLogDirs: describeLogDirs(d),
    // ---- controller quorum membership (forwarded to the active controller)
    alterRaftVoters: alterRaftVoters(d),
    describeQuorum: describeQuorum(d),
  };
}

/** The version ranges of the APIs `handlers` implements. */
export function apiVersionsFor(handlers: HandlerMap): ApiVersionRange[] {
  const out: ApiVersionRange[] = [];
  for (const body of Object.keys(handlers) as RequestBody[]) {
    const api = BODY_API[body];
    const range = SUPPORTED_API_VERSIONS.find((r) => r.api === api);
    if (range) out.push({ ...range });
  }
  return out.sort((a, b) => a.api - b.api);
}

export { NO_RESPONSE } from './types.js';
export { authorizeRequest, secureHandlers } from './authorize.js';
export { saslAuthenticate } from './sasl-authenticate.js';
export type { Handler, HandlerMap, RequestOf, ResponseOf } from './types.js';
export type { HandlerDeps } from './deps.js';
