/**
 * For sibling packages that extend the broker (consumer groups, replication):
 * the handler and route plumbing. Not for applications.
 */
export { NO_RESPONSE, DEFAULT_HANDLERS, apiVersionsFor } from './handlers/index.js';
export { Router, httpStatusFor, errorBody } from './http/router.js';
export { validateTopicName } from '@mq/protocol/topic-name';
export { toMqError, wireError } from './errors.js';

export type { Handler, HandlerMap, RequestOf, ResponseOf } from './handlers/types.js';
export type { BrokerContext, ConnectionInfo, RequestContext } from './context.js';
export type { HttpRequest, HttpResponse, Method, RouteHandler } from './http/router.js';
export type { LogOpener } from './log-factory.js';

// The cluster node's parts, for the simulator (@mq/sim), which assembles brokers from them with injected components.
export { startClusterNode } from './cluster/cluster-node.js';
export { startGroups } from './group/broker-groups.js';
export { startTransactions } from './txn/broker-transactions.js';
export { OFFSETS_TOPIC } from './group/options.js';
export { clientListenerHandlers } from './cluster/listeners.js';
export { BrokerConfig } from './config/broker-config.js';
export { BrokerMetrics } from './metrics/broker-metrics.js';
export { Connection as ServerConnection } from './server/connection.js';
export { ProducerIdManager, controllerBlockSource } from './producers/producer-ids.js';
export { nodeDirFileSystem } from './storage/dir-fs.js';
export type { ClusterNode, ClusterNodeComponents, ClusterNodeOptions } from './cluster/cluster-node.js';
export type { ConnectionLimits } from './server/connection.js';
export type { DirFileSystem } from './storage/dir-fs.js';
export type { PartitionRecord } from './controller/types.js';

// HTTP route declarations for extra routes (BrokerComponents.routes): shared schemas and the error-code annotation.
export { component, ERROR_CODE } from './http/route-spec.js';
