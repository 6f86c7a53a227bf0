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
