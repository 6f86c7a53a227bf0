/**
 * InitProducerId. Without a transactional id: a new producer id with epoch 0
 * for an idempotent producer (Kafka's enable.idempotence); each call gets a
 * new id. With one: the transaction coordinator of that id (this broker must
 * be it) answers the id's producer id with its epoch bumped, fencing the
 * previous instance (an open transaction of it is aborted first).
 */
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import type { Handler } from './types.js';
import type { TxnHandlerSource } from './txn-deps.js';
import { txnCoordinator } from './txn-deps.js';

/** The default transaction timeout when the request names none (Kafka's transaction.timeout.ms: 60 s). */
export const DEFAULT_TRANSACTION_TIMEOUT_MS = 60_000;

export function initProducerIdHandler(transactions?: TxnHandlerSource): Handler<'initProducerId'> {
  return async (req, ctx) => {
    try {
      if (req.transactionalId) {
        if (!transactions) throw new MqError('INVALID_REQUEST', `transactional id "${req.transactionalId}" refused: this broker serves no transactions`);
        const r = await txnCoordinator(transactions, req.transactionalId).initProducerId(req.transactionalId, req.transactionTimeoutMs || DEFAULT_TRANSACTION_TIMEOUT_MS);
        ctx.logger.debug({ conn: ctx.connection.id, transactionalId: req.transactionalId, ...r }, 'transactional producer initialised');
        return { errorCode: 0, errorMessage: '', ...r };
      }
      const producerId = await ctx.broker.producerIds.allocate();
      ctx.logger.debug({ conn: ctx.connection.id, producerId }, 'producer id allocated');
      return { errorCode: 0, errorMessage: '', producerId, producerEpoch: 0 };
    } catch (err) {
      return { ...wireError(err), producerId: -1, producerEpoch: -1 };
    }
  };
}

/** InitProducerId for idempotent producers only (a broker without a transaction coordinator). */
export const initProducerId: Handler<'initProducerId'> = initProducerIdHandler();
