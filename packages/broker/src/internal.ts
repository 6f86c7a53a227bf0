/**
 * For sibling packages that extend the broker (consumer groups, replication):
 * the handler and route plumbing and the topic model. Not for applications.
 */
export { NO_RESPONSE, DEFAULT_HANDLERS, apiVersionsFor } from './handlers/index.js';
export { Router, httpStatusFor, errorBody } from './http/router.js';
export { TopicManager } from './topics/topic-manager.js';
export { Partition } from './topics/partition.js';
export { leaderAppend } from './records/leader-append.js';
export { validateTopicName } from './topics/topic-name.js';
export { toMqError, wireError } from './errors.js';

export type { Handler, HandlerMap, RequestOf, ResponseOf } from './handlers/types.js';
export type { BrokerContext, ConnectionInfo, RequestContext } from './context.js';
export type { HttpRequest, HttpResponse, Method, RouteHandler } from './http/router.js';
export type { Topic } from './topics/topic-manager.js';
export type { OpenLog, PartitionLog } from './topics/partition-log.js';
export type { LogOpener } from './log-factory.js';
