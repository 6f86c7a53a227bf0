/**
 * EndTxn: commit or abort the open transaction. The coordinator persists the
 * decision (PrepareCommit / PrepareAbort), writes the markers to every
 * partition of the transaction, then persists the completion; the answer
 * comes once the markers are written (or, if a leader is slow, once the
 * decision is durable: the coordinator keeps writing them).
 */
import { wireError } from '../errors.js';
import { shown } from '../request-limits.js';
import type { Handler } from './types.js';
import { txnCoordinator, txnRequestOf, type TxnHandlerSource } from './txn-deps.js';

export function endTxn(source: TxnHandlerSource): Handler<'endTxn'> {
  return async (req, ctx) => {
    const r = txnRequestOf(req);
    try {
      await txnCoordinator(source, r.transactionalId).endTxn(r, req.committed === true);
      return { errorCode: 0, errorMessage: '' };
    } catch (err) {
      const e = wireError(err);
      ctx.logger.debug({ conn: ctx.connection.id, transactionalId: shown(r.transactionalId), code: e.errorCode, err: e.errorMessage }, 'EndTxn refused');
      return e;
    }
  };
}
