/**
 * Quotas on the one request path: the client listener's handler map is
 * wrapped once (inside authorization: a refused request records nothing), so every door that calls it (the
 * WebSocket and Kafka listeners) records the same amounts. A wrapped handler
 * records the request (request_rate) and its record bytes (produce: sent,
 * fetch: answered; a sum over partitions, never over records) and leaves the
 * throttle time in `ctx.throttleMs`; the door puts it in the answer and reads
 * nothing more from that connection for that long (KIP-219). With no quota in
 * the metadata a request costs one check.
 */
import type { RequestBody } from '@mq/protocol/wire';
import type { RequestContext } from '../context.js';
import type { Handler, HandlerMap, RequestOf, ResponseOf } from '../handlers/types.js';
import type { QuotaManager } from './quota-manager.js';

/** APIs a connection calls before it is anyone (never throttled: a throttled login would only delay who it is). */
const EXEMPT: ReadonlySet<RequestBody> = new Set<RequestBody>(['handshake', 'saslAuthenticate']);

/** The user part of a request's principal ("User:alice" -> "alice"); undefined when not authenticated. */
export function quotaUser(ctx: RequestContext): string | undefined {
  const p = ctx.connection.session?.principal;
  if (!p) return undefined;
  return p.startsWith('User:') ? p.slice(5) : p;
}

function produceBytes(req: RequestOf<'produce'>): number {
  let n = 0;
  for (const t of req.topics ?? []) for (const p of t.partitions ?? []) n += p.records?.length ?? 0;
  return n;
}

function fetchBytes(res: ResponseOf<'fetch'>): number {
  let n = 0;
  for (const t of res.topics ?? []) for (const p of t.partitions ?? []) n += p.records?.length ?? 0;
  return n;
}

function setThrottle(ctx: RequestContext, ms: number): void {
  if (ms > (ctx.throttleMs ?? 0)) ctx.throttleMs = ms;
}

/** What a request costs against its quotas, recorded before it runs and (fetch) once it is answered. */
export interface QuotaRecorder {
  /** request_rate, and producer_byte_rate for a produce; the throttle time goes to `ctx.throttleMs`. */
  before(body: RequestBody, req: unknown, ctx: RequestContext): void;
  /** consumer_byte_rate for a fetch's answer. */
  after(body: RequestBody, res: unknown, ctx: RequestContext): void;
}

export function quotaRecorder(quotas: QuotaManager): QuotaRecorder {
  return {
    before(body, req, ctx) {
      if (!quotas.active || EXEMPT.has(body)) return;
      const user = quotaUser(ctx);
      const clientId = ctx.connection.clientId;
      setThrottle(ctx, quotas.record(user, clientId, 'request_rate', 1));
      if (body === 'produce') setThrottle(ctx, quotas.record(user, clientId, 'producer_byte_rate', produceBytes(req as RequestOf<'produce'>)));
    },
    after(body, res, ctx) {
      if (!quotas.active || body !== 'fetch' || typeof res !== 'object' || res === null) return;
      setThrottle(ctx, quotas.record(quotaUser(ctx), ctx.connection.clientId, 'consumer_byte_rate', fetchBytes(res as ResponseOf<'fetch'>)));
    },
  };
}

/** `handlers` with quotas recorded (the same map's entries, wrapped). */
export function quotaHandlers(handlers: HandlerMap, quotas: QuotaManager): HandlerMap {
  const recorder = quotaRecorder(quotas);
  const out: { -readonly [K in RequestBody]?: Handler<K> } = {};
  for (const body of Object.keys(handlers) as RequestBody[]) {
    const inner = handlers[body] as Handler<RequestBody>;
    if (EXEMPT.has(body)) {
      (out as Record<string, Handler<RequestBody>>)[body] = inner;
      continue;
    }
    const isFetch = body === 'fetch';
    const wrapped: Handler<RequestBody> = (req, ctx) => {
      if (!quotas.active) return inner(req, ctx);
      recorder.before(body, req, ctx);
      if (!isFetch) return inner(req, ctx);
      return inner(req, ctx).then((res) => {
        recorder.after(body, res, ctx);
        return res;
      });
    };
    (out as Record<string, Handler<RequestBody>>)[body] = wrapped;
  }
  return out as HandlerMap;
}
