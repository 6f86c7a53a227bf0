/** AddOffsetsToTxn: the group's `__consumer_offsets` partition joins the transaction (TxnOffsetCommit to the group coordinator follows). */
import { wireError } from '../errors.js';
import { shown } from '../request-limits.js';
import type { Handler } from './types.js';
import { txnCoordinator, txnRequestOf, type TxnHandlerSource } from './txn-deps.js';

export function addOffsetsToTxn(source: TxnHandlerSource): Handler<'addOffsetsToTxn'> {
  return async (req, ctx) => {
    const r = txnRequestOf(req);
    try {
      await txnCoordinator(source, r.transactionalId).addOffsets(r, req.groupId ?? '');
      return { errorCode: 0, errorMessage: '' };
    } catch (err) {
      const e = wireError(err);
      ctx.logger.debug({ conn: ctx.connection.id, transactionalId: shown(r.transactionalId), code: e.errorCode, err: e.errorMessage }, 'AddOffsetsToTxn refused');
      return e;
    }
  };
}
