/**
 * InitProducerId: a new producer id with epoch 0 for an idempotent producer
 * (Kafka's enable.idempotence). Transactional ids are refused: mq has no
 * transactions. Each call gets a new id; a restarted producer is a new
 * producer, and nothing it sent before is deduplicated against.
 */
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import type { Handler } from './types.js';

export const initProducerId: Handler<'initProducerId'> = async (req, ctx) => {
  try {
    if (req.transactionalId) {
      throw new MqError(
        'INVALID_REQUEST',
        `transactional id "${req.transactionalId}" refused: this broker has no transactions; an idempotent producer sends InitProducerId without one`,
      );
    }
    const producerId = await ctx.broker.producerIds.allocate();
    ctx.logger.debug({ conn: ctx.connection.id, producerId }, 'producer id allocated');
    return { errorCode: 0, errorMessage: '', producerId, producerEpoch: 0 };
  } catch (err) {
    return { ...wireError(err), producerId: -1, producerEpoch: -1 };
  }
};
