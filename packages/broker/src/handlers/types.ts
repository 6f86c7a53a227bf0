/** The shape of a request handler and the map that registers them by frame body name. */
import type { mq, RequestBody } from '@mq/protocol/wire';
import type { RequestContext } from '../context.js';

/** Returned by a handler that must not answer (produce with acks=0). */
export const NO_RESPONSE: unique symbol = Symbol('mq.no-response');

export type RequestOf<K extends RequestBody> = NonNullable<mq.RequestFrame[K]>;
export type ResponseOf<K extends RequestBody> = NonNullable<mq.ResponseFrame.$Properties[K]>;

export type Handler<K extends RequestBody> = (
  request: RequestOf<K>,
  ctx: RequestContext,
) => Promise<ResponseOf<K> | typeof NO_RESPONSE>;

export type HandlerMap = { readonly [K in RequestBody]?: Handler<K> };
