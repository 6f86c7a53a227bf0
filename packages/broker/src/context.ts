/**
 * What a request handler may use: the broker's identity and configuration,
 * and the connection the request came on. Handlers get this object
 * and nothing global, so new handlers (consumer groups, replication) plug in
 * by adding a module and one line to the handler map.
 */
import type { Logger } from 'pino';
import type { ReadBufferPool } from '@mq/log-store';
import type { ApiVersionRange } from '@mq/protocol/wire';
import type { BrokerConfig } from './config/broker-config.js';
import type { BrokerMetrics } from './metrics/broker-metrics.js';
import type { ProducerIdManager } from './producers/producer-ids.js';
import type { Session } from './security/session.js';
import type { SliceClock } from './slicer.js';

export interface BrokerContext {
  readonly brokerId: number;
  readonly clusterId: string;
  readonly config: BrokerConfig;
  readonly logger: Logger;
  /** Host and ports clients should use (Metadata). */
  readonly advertisedHost: string;
  readonly port: number;
  readonly httpPort: number;
  /** The API version ranges this broker serves, derived from its handler map. */
  readonly apiVersions: readonly ApiVersionRange[];
  readonly maxFrameBytes: number;
  readonly softwareVersion: string;
  /** Aborted when the broker starts shutting down: long polls answer at once. */
  readonly shutdownSignal: AbortSignal;
  readonly clock: () => number;
  readonly metrics: BrokerMetrics;
  /**
   * Buffers for fetch reads: a fetch response's record bytes are read into
   * them and released once the socket has written them (server/connection.ts).
   */
  readonly readBuffers: ReadBufferPool;
  /** Producer ids for InitProducerId (from the data directory, or the controller in a cluster). */
  readonly producerIds: ProducerIdManager;
  /** How long work is cut into slices is measured and yielded (slicer.ts); absent: the process's clock and setImmediate. */
  readonly sliceClock?: SliceClock;
}

export interface ConnectionInfo {
  readonly id: number;
  readonly remote: string;
  readonly clientId: string;
  /** Aborted when the connection closes. */
  readonly signal: AbortSignal;
  /** Who is on the other end (security/session.ts); absent: a caller that never authenticates (the request is treated as unauthenticated). */
  readonly session?: Session;
}

export interface RequestContext {
  readonly broker: BrokerContext;
  readonly connection: ConnectionInfo;
  readonly apiVersion: number;
  readonly logger: Logger;
  /**
   * Set by the authorizer when the request came in through the first-user exception (no user existed in this
   * broker's view): what it changes must be conditional on that still being true at the controller.
   */
  bootstrap?: boolean;
  /**
   * Set by a door that can answer a request in parts (the WebSocket door, for a produce with partial_answers):
   * sends one part now; the handler's result is the last part. Absent: the whole answer comes at once.
   */
  answerPart?: (part: unknown) => void;
  /** ---- quotas: set by the quota wrapper (quota/quota-handlers.ts) when the client is over a quota: the door answers with it and reads nothing more from the connection for that long. */
  throttleMs?: number;
}
