/**
 * AddPartitionsToTxn: the partitions a transactional producer is about to
 * write join its transaction (starting it), all or none, at the transaction
 * coordinator (the leader of the id's `__transaction_state` partition).
 */
import { wireError } from '../errors.js';
import { shown } from '../request-limits.js';
import type { Handler } from './types.js';
import { txnCoordinator, txnRequestOf, type TxnHandlerSource } from './txn-deps.js';

export function addPartitionsToTxn(source: TxnHandlerSource): Handler<'addPartitionsToTxn'> {
  return async (req, ctx) => {
    const r = txnRequestOf(req);
    try {
      const partitions = (req.topics ?? []).flatMap((t) => (t.partitions ?? []).map((partition) => ({ topic: t.name ?? '', partition })));
      await txnCoordinator(source, r.transactionalId).addPartitions(r, partitions);
      return { errorCode: 0, errorMessage: '' };
    } catch (err) {
      const e = wireError(err);
      ctx.logger.debug({ conn: ctx.connection.id, transactionalId: shown(r.transactionalId), code: e.errorCode, err: e.errorMessage }, 'AddPartitionsToTxn refused');
      return e;
    }
  };
}
