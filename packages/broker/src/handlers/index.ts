/**
 * The broker's request handlers, keyed by the frame body name. Adding an API
 * is adding its module and one line here; the handshake advertises exactly
 * the APIs listed.
 */
import { BODY_API, SUPPORTED_API_VERSIONS, type ApiVersionRange, type RequestBody } from '@mq/protocol/wire';
import { handshake } from './handshake.js';
import { initProducerId } from './init-producer-id.js';
import type { HandlerMap } from './types.js';

/** The handlers that need no cluster state; the cluster node adds the partition, topic and metadata APIs (cluster/handlers.ts) and the groups theirs. */
export const DEFAULT_HANDLERS: HandlerMap = {
  handshake,
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
