/**
 * The shape of one Kafka API on the Kafka listener: decode is done, the
 * adapter turns the Kafka request into the broker core's (the same handlers
 * the WebSocket door calls), and the core's answer into Kafka's. Adapters
 * hold no broker logic of their own.
 */
import type { ApiDef, Input } from '@mq/kafka-protocol';
import type { RequestBody } from '@mq/protocol/wire';
import type { RequestContext } from '../context.js';
import type { HandlerMap } from '../handlers/types.js';
import type { NO_RESPONSE } from '../handlers/types.js';

/** A broker's Kafka listener address, as Metadata and FindCoordinator give it. */
export interface KafkaEndpoint {
  host: string;
  port: number;
}

/** SASL on the Kafka listener (from the broker's Security): what a connection may log in with, and whether it must. */
export interface KafkaSaslView {
  /** authentication.enabled: a connection without a principal may send only ApiVersions, SaslHandshake and SaslAuthenticate. */
  readonly required: boolean;
  /** The mechanisms SaslHandshake accepts on a plaintext or a TLS connection (PLAIN only on TLS). */
  mechanisms(encrypted: boolean): readonly string[];
}

/** The SASL exchange of one Kafka connection: SaslHandshake picks the mechanism its SaslAuthenticate steps use. */
export interface KafkaSaslState {
  mechanism: string | undefined;
  /** After a SaslHandshake v0: the next frames are bare SASL tokens (the pre-KIP-152 framing) until the login is done. */
  rawTokens: boolean;
}

/** What an adapter may use besides the core handlers. */
export interface KafkaDoorView {
  /** The Kafka listener of broker `id` (undefined: that broker has none). */
  endpoint(id: number): KafkaEndpoint | undefined;
  /** The APIs and versions this listener serves (ApiVersions). */
  readonly apiVersions: ReadonlyArray<{ apiKey: number; minVersion: number; maxVersion: number }>;
  readonly sasl: KafkaSaslView;
}

/** One request as an adapter sees it. */
export interface KafkaCall {
  readonly version: number;
  /** The context the core handlers get (connection, logger, broker). */
  readonly ctx: RequestContext;
  readonly core: HandlerMap;
  readonly door: KafkaDoorView;
  /** The protocol type of each group this connection joined (JoinGroup), for SyncGroup, whose request does not say. */
  readonly groupProtocols: Map<string, string>;
  /** This connection's SASL exchange (the mechanism SaslHandshake chose). */
  readonly sasl: KafkaSaslState;
  /** Runs `fn` once the response has been written (or dropped): gives pooled buffers back. */
  afterWrite(fn: () => void): void;
}

export interface KafkaApi<Req, Res> {
  readonly api: ApiDef<Req, Res>;
  /** The core handlers it calls: the API is served (and advertised) only when the core has them all. */
  readonly needs: readonly RequestBody[];
  handle(req: Req, call: KafkaCall): Promise<Input<Res> | typeof NO_RESPONSE>;
  /** The answer when the core refused the request as a whole (`code`: a Kafka error code). */
  refused(req: Req, code: number, message: string, version: number): Input<Res>;
}

/** A KafkaApi of any message types (the registry holds many). */
export type AnyKafkaApi = KafkaApi<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
