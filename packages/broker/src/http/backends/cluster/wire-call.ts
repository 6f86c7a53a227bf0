/**
 * The HTTP backend's one request path: every operation is a wire request
 * made as the HTTP caller, authorized and counted against its quotas here
 * whichever broker answers, then answered by this broker's own handler (the
 * one its WebSocket clients reach) or sent to the broker that must answer it
 * over the inter-broker connection.
 */
import { sleep, type Timers } from '@mq/protocol/components';
import { errorCodeFromNumber, MqError } from '@mq/protocol/errors';
import type { RequestBody } from '@mq/protocol/wire';
import type { RequestContext } from '../../../context.js';
import { NO_RESPONSE, type Handler, type RequestOf, type ResponseOf } from '../../../handlers/types.js';
import { httpSessions } from '../../../security/http-auth.js';
import type { ClusterBackendComponents, WireCall } from './types.js';

/** The context of one HTTP call: negative request ids (never a WebSocket connection's), the caller's session (security/http-auth.ts) for the authorization of each call. */
export function httpRequestContexts(c: Pick<ClusterBackendComponents, 'broker'>): (signal: AbortSignal) => RequestContext {
  let requestIds = 0;
  return (signal) => {
    const broker = c.broker();
    const id = --requestIds;
    const logger = broker.logger.child({ http: true });
    const session = httpSessions.getStore();
    return { broker, connection: { id, remote: 'http', clientId: 'http-api', signal, ...(session ? { session } : {}) }, apiVersion: 0, logger };
  };
}

export function wireCall(me: number, c: ClusterBackendComponents, timers: Timers, requestContext: (signal: AbortSignal) => RequestContext): WireCall {
  return async <K extends RequestBody>(id: number, body: K, payload: RequestOf<K>, o: { timeoutMs: number; signal: AbortSignal }): Promise<ResponseOf<K>> => {
    const rctx = requestContext(o.signal);
    c.authorize?.(body, payload, rctx);
    // ---- quotas: recorded here, whichever broker answers (a peer's inter-broker listener records nothing).
    c.quotas?.before(body, payload, rctx);
    let r: ResponseOf<K>;
    if (id === me) {
      const h = c.handlers[body] as Handler<K> | undefined;
      // A controller-only process (process.roles=controller) hosts no partitions and serves no topic admin.
      if (!h) throw new MqError('INVALID_REQUEST', `this process does not serve ${body} (it is not a broker); use a broker's HTTP port`);
      const answer = await h(payload, rctx);
      if (answer === NO_RESPONSE) throw new MqError('UNKNOWN', `the ${body} handler did not answer`);
      r = answer;
    } else {
      r = (await c.peers.request(id, body, payload, o)) as ResponseOf<K>;
    }
    c.quotas?.after(body, r, rctx);
    // An HTTP caller over its quota gets its answer that much later (no connection to mute).
    if (rctx.throttleMs) await sleep(timers, rctx.throttleMs, o.signal).catch(() => undefined);
    return r;
  };
}

/** An entry's error code in a wire answer as an MqError (UNKNOWN_TOPIC_OR_PARTITION not retriable), or undefined for NONE. */
export function wireFailure(code: number | null | undefined, message: string | null | undefined, what: string): MqError | undefined {
  const c = errorCodeFromNumber(code ?? 0);
  if (c === 'NONE') return undefined;
  return new MqError(c, message || `${what} failed with ${c}`, c === 'UNKNOWN_TOPIC_OR_PARTITION' ? { retriable: false } : {});
}
