/**
 * Which requests a listener serves. A broker in a cluster has two: the
 * client listener (`--port`) and the inter-broker listener
 * (`inter.broker.port`), which the other brokers and controllers use for
 * replica fetches, OffsetForLeaderEpoch as a follower, ControllerForward
 * (metadata commands and metadata fetches) and the requests they relay for
 * clients. Until brokers authenticate each other (mTLS or a cluster
 * credential), a broker is recognised by the listener it reached: the
 * inter-broker listener belongs on a network only brokers reach, as Kafka's
 * inter-broker listener does. The client listener refuses whatever only a
 * broker may ask: a ControllerForward would let any client change the
 * cluster metadata, and a fetch naming a replica id would move the high
 * watermark and release acks=all writes that replica never received.
 */
import { MqError } from '@mq/protocol/errors';
import type { RequestContext } from '../context.js';
import type { HandlerMap } from '../handlers/types.js';

function refuse(ctx: RequestContext, what: string, fields: Record<string, unknown> = {}): MqError {
  const message = `${what} is served only on the inter-broker listener (inter.broker.port), not on the client port`;
  ctx.logger.warn({ conn: ctx.connection.id, remote: ctx.connection.remote, clientId: ctx.connection.clientId, ...fields }, `refused from a client connection: ${message}`);
  return new MqError('INVALID_REQUEST', message);
}

/**
 * The handlers of the client listener: `handlers` without ControllerForward,
 * and with replica fetches and follower OffsetForLeaderEpoch refused (a
 * replica id above 0; consumers send -1, or 0 when they leave it unset).
 */
export function clientListenerHandlers(handlers: HandlerMap): HandlerMap {
  const out: { -readonly [K in keyof HandlerMap]: HandlerMap[K] } = { ...handlers };
  if (handlers.controllerForward) {
    out.controllerForward = async (req, ctx) => {
      throw refuse(ctx, 'ControllerForward', { claimedBroker: req.brokerId });
    };
  }
  if (handlers.writeTxnMarkers) {
    out.writeTxnMarkers = async (req, ctx) => {
      throw refuse(ctx, 'WriteTxnMarkers (transaction markers come from the transaction coordinator)', { markers: req.markers?.length ?? 0 });
    };
  }
  const fetch = handlers.fetch;
  if (fetch) {
    out.fetch = async (req, ctx) => {
      if ((req.replicaId ?? -1) > 0) throw refuse(ctx, `a replica fetch (replica_id ${req.replicaId})`, { replicaId: req.replicaId });
      return fetch(req, ctx);
    };
  }
  const ofle = handlers.offsetForLeaderEpoch;
  if (ofle) {
    out.offsetForLeaderEpoch = async (req, ctx) => {
      if ((req.replicaId ?? -1) > 0) throw refuse(ctx, `a follower's OffsetForLeaderEpoch (replica_id ${req.replicaId})`, { replicaId: req.replicaId });
      return ofle(req, ctx);
    };
  }
  return out;
}
