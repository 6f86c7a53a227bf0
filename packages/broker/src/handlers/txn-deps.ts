/** What the transaction handlers take: the broker's transaction coordinator (once `__transaction_state` exists) and FindCoordinator's answer for key type 1. */
import { MqError } from '@mq/protocol/errors';
import type { FindCoordinatorAnswer } from '../group/cluster-groups.js';
import type { TxnCoordinator } from '../txn/txn-coordinator.js';

export interface TxnHandlerSource {
  coordinator(): TxnCoordinator | undefined;
  findCoordinator(transactionalId: string): FindCoordinatorAnswer;
}

/** The coordinator, or NOT_COORDINATOR while this broker has none (the client finds the coordinator again). */
export function txnCoordinator(source: TxnHandlerSource, transactionalId: string): TxnCoordinator {
  const c = source.coordinator();
  if (!c) throw new MqError('NOT_COORDINATOR', `this broker does not coordinate transactional id "${transactionalId}" (ask FindCoordinator with key type 1)`);
  return c;
}

/** The producer fields every transaction request carries. */
export function txnRequestOf(req: { transactionalId?: string | null; producerId?: number | Long | null; producerEpoch?: number | null }): {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
} {
  return { transactionalId: req.transactionalId ?? '', producerId: Number(req.producerId ?? -1), producerEpoch: req.producerEpoch ?? -1 };
}

type Long = { toNumber(): number };
