/**
 * The broker's request handlers, keyed by the frame body name. Adding an API
 * is adding its module and one line here; the handshake advertises exactly
 * the APIs listed.
 */
import { BODY_API, SUPPORTED_API_VERSIONS, type ApiVersionRange, type RequestBody } from '@mq/protocol/wire';
import { deleteRecords } from './delete-records.js';
import { describeConfigs } from './describe-configs.js';
import { incrementalAlterConfigs } from './incremental-alter-configs.js';
import { fetch } from './fetch.js';
import { handshake } from './handshake.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';
import { createPartitions } from './create-partitions.js';
import { createTopics } from './create-topics.js';
import { deleteTopics } from './delete-topics.js';
import { initProducerId } from './init-producer-id.js';
import type { HandlerMap } from './types.js';

export const DEFAULT_HANDLERS: HandlerMap = {
  handshake,
  metadata,
  createTopics,
  deleteTopics,
  createPartitions,
  describeConfigs,
  incrementalAlterConfigs,
  produce,
  fetch,
  listOffsets,
  offsetForLeaderEpoch,
  deleteRecords,
  initProducerId,
};

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
export type { Handler, HandlerMap, RequestOf, ResponseOf } from './types.js';
