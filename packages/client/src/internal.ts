// For sibling packages (cli, bench, groups); not part of the public API.
export { Cluster, invalidatesMetadata, unknownTopicError } from './cluster.js';
export { Connection } from './connection.js';
export { addressToUrl } from './transport/address.js';
export { connectWebSocket } from './transport/node.js';
export { connectNativeWebSocket } from './transport/native-websocket.js';
export { Fetcher } from './consumer/fetcher.js';
export { CompletedFetch } from './consumer/record-decoder.js';
export { parseClientOptions, parseAddress, DEFAULT_BOOTSTRAP } from './options.js';
export { parseCompression } from './producer/options.js';
export { parseAutoOffsetReset } from './consumer/options.js';
export { abortableSleep, abortError, isProgrammerError } from './retrier.js';
export type { ParsedClientOptions } from './options.js';
export type { ConnectFn, RequestOptions, RequestPayload, ResponseOf } from './connection.js';
export type { Target } from './cluster.js';
export { CoordinatorClient, clusterMetadataSource } from './group/coordinator-client.js';
export { GroupMember } from './group/group-member.js';
