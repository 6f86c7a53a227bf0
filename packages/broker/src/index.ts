export { BROKER_VERSION, startBroker } from './broker.js';
export { DEFAULT_DATA_DIR, DEFAULT_HOST, DEFAULT_HTTP_PORT, DEFAULT_KAFKA_PORT, DEFAULT_PORT, parseBrokerOptions } from './options.js';
export { BROKER_CONFIG_DEFS } from './config/broker-config.js';
export { TOPIC_CONFIG_DEFAULTS } from './config/topic-config.js';
export { isLoopbackHost } from './server/origins.js';

export type { Broker, BrokerComponents, RouteModule } from './broker.js';
export type { BrokerOptions, ParsedBrokerOptions } from './options.js';
export type { ConfigDef } from './config/config-def.js';
export type { BodySpec, ParamSpec, ResponseSpec, RouteDeclaration, RouteSpec, Schema } from './http/route-spec.js';
