/** Calling a core handler from a Kafka adapter: the same handler map, the same request context, as the WebSocket door. */
import { MqError } from '@mq/protocol/errors';
import type { RequestBody } from '@mq/protocol/wire';
import { NO_RESPONSE, type Handler, type RequestOf, type ResponseOf } from '../../handlers/types.js';
import type { KafkaCall } from '../types.js';

export async function callCore<K extends RequestBody>(call: KafkaCall, body: K, req: RequestOf<K>): Promise<ResponseOf<K> | typeof NO_RESPONSE> {
  const handler = call.core[body] as Handler<K> | undefined;
  if (!handler) throw new MqError('UNSUPPORTED_VERSION', `this broker does not serve ${body}`);
  return handler(req, call.ctx);
}

/** A core call that always answers (everything but produce with acks=0). */
export async function askCore<K extends RequestBody>(call: KafkaCall, body: K, req: RequestOf<K>): Promise<ResponseOf<K>> {
  const r = await callCore(call, body, req);
  if (r === NO_RESPONSE) throw new MqError('UNKNOWN', `${body} gave no answer`);
  return r;
}
