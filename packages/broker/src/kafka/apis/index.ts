/**
 * The Kafka APIs the Kafka listener serves, one adapter file each. Adding an
 * API is its schema (packages/kafka-protocol/schema), its adapter and one
 * line here; ApiVersions advertises exactly these, where the core has the
 * handlers they call.
 */
import type { HandlerMap } from '../../handlers/types.js';
import type { AnyKafkaApi } from '../types.js';
import { apiVersions } from './api-versions.js';
import { fetch } from './fetch.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';

export const KAFKA_APIS: readonly AnyKafkaApi[] = [apiVersions, metadata, produce, fetch, listOffsets, offsetForLeaderEpoch];

/** The adapters whose core handlers `core` has, by API key. */
export function servedKafkaApis(core: HandlerMap, apis: readonly AnyKafkaApi[] = KAFKA_APIS): Map<number, AnyKafkaApi> {
  return new Map(apis.filter((a) => a.needs.every((n) => core[n] !== undefined)).map((a) => [a.api.key, a]));
}
