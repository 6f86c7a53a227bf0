/**
 * What the cluster HTTP backend is built from (the broker's handlers,
 * metadata, peer connections and security), and what its operations share.
 */
import type { Timers } from '@mq/protocol/components';
import type { MqError } from '@mq/protocol/errors';
import type { RequestBody } from '@mq/protocol/wire';
import type { BrokerContext, RequestContext } from '../../../context.js';
import type { MetadataState } from '../../../controller/metadata-state.js';
import type { HandlerMap, RequestOf, ResponseOf } from '../../../handlers/types.js';
import type { QuotaRecorder } from '../../../quota/quota-handlers.js';
import type { ParsedClusterBackendOptions } from './options.js';

/** Sends a wire request to another broker (the cluster's PeerConnections). */
export interface PeerRequester {
  request<B extends RequestBody>(id: number, body: B, payload: RequestOf<B>, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<unknown>;
}

/** Authenticates and authorizes one wire request as the HTTP caller (handlers/authorize.ts); throws its refusal. */
export type RequestAuthorizer = <K extends RequestBody>(body: K, payload: RequestOf<K>, ctx: RequestContext) => void;

export interface ClusterBackendComponents {
  /** Checked before every request, local or sent to a peer (the inter-broker listener does not check again). */
  authorize?: RequestAuthorizer;
  /** Quotas of every request, local or sent to a peer (the inter-broker listener records nothing). */
  quotas?: QuotaRecorder;
  /** Whether the caller may see a topic (GET /topics lists only those). */
  mayDescribe?: (topic: string, ctx: RequestContext) => boolean;
  metadata: MetadataState;
  /** This broker's cluster handlers (CreateTopics, Produce, Fetch, ...). */
  handlers: HandlerMap;
  peers: PeerRequester;
  /** The broker context handed to local handler calls. */
  broker: () => BrokerContext;
  /** Watermarks of partitions this broker leads, without a request. */
  localLeader: (topic: string, partition: number) => { logStartOffset: number; highWatermark: number } | undefined;
  /** Why this broker's replica of a partition is offline (its log failed to open), if it is. */
  localOffline?: (topic: string, partition: number) => MqError | undefined;
  /** Waits between leader retries and of throttled callers (default: the system's). */
  timers?: Timers;
}

/** One wire request to broker `id`, as the HTTP caller: this broker's own handler, or a peer over the inter-broker connection. */
export type WireCall = <K extends RequestBody>(id: number, body: K, payload: RequestOf<K>, o: { timeoutMs: number; signal: AbortSignal }) => Promise<ResponseOf<K>>;

/** What the backend's operations share (as HandlerDeps for the wire handlers). */
export interface BackendDeps {
  readonly options: ParsedClusterBackendOptions;
  readonly c: ClusterBackendComponents;
  readonly timers: Timers;
  readonly call: WireCall;
  /** The context of one HTTP call (its session, a request id of its own). */
  requestContext(signal: AbortSignal): RequestContext;
  /** The signal of an admin call (60 s). */
  adminSignal(): AbortSignal;
}
