/**
 * Wires the transaction coordinator into the broker: `__transaction_state`
 * follows the cluster (cluster-transactions.ts) and the transaction APIs
 * are served from it: InitProducerId with a transactional id,
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn, and FindCoordinator for key
 * type 1 (key type 0, groups, goes to the group handlers).
 */
import type { Timers } from '@mq/protocol/components';
import type { Logger } from 'pino';
import { errorNumber } from '@mq/protocol/errors';
import type { ClusterNode } from '../cluster/cluster-node.js';
import type { BrokerConfig } from '../config/broker-config.js';
import { addOffsetsToTxn } from '../handlers/add-offsets-to-txn.js';
import { addPartitionsToTxn } from '../handlers/add-partitions-to-txn.js';
import { endTxn } from '../handlers/end-txn.js';
import { initProducerIdHandler } from '../handlers/init-producer-id.js';
import type { TxnHandlerSource } from '../handlers/txn-deps.js';
import type { Handler, HandlerMap } from '../handlers/types.js';
import type { ProducerIdManager } from '../producers/producer-ids.js';
import { ClusterTransactions } from './cluster-transactions.js';
import type { TxnCoordinator } from './txn-coordinator.js';

export interface BrokerTransactions {
  readonly coordinator: TxnCoordinator | undefined;
  readonly source: TxnHandlerSource;
  /** The transaction APIs; `findCoordinator` answers key type 1 and hands key type 0 to `groupFindCoordinator`. */
  handlers(groupFindCoordinator: Handler<'findCoordinator'> | undefined): HandlerMap;
  useCluster(node: Pick<ClusterNode, 'controller' | 'replicas' | 'peers'>, producerIds: ProducerIdManager): void;
  close(): void;
}

export function startTransactions(deps: {
  config: BrokerConfig;
  logger: Logger;
  clock: () => number;
  timers: Timers;
  onTxnMarker?: (topic: string, partition: number, producerId: number, committed: boolean) => void;
}): BrokerTransactions {
  let cluster: ClusterTransactions | undefined;
  let closed = false;
  const logger = deps.logger.child({ component: 'txn-coordinator' });
  const source: TxnHandlerSource = {
    coordinator: () => cluster?.coordinator,
    findCoordinator: (id) => cluster?.findCoordinator(id) ?? { errorCode: errorNumber('COORDINATOR_NOT_AVAILABLE'), errorMessage: 'this broker has not joined the cluster yet; retry' },
  };
  return {
    get coordinator() {
      return cluster?.coordinator;
    },
    source,
    handlers(groupFindCoordinator) {
      const findCoordinator: Handler<'findCoordinator'> = async (req, ctx) => {
        if ((req.keyType ?? 0) !== 1) {
          if (groupFindCoordinator) return groupFindCoordinator(req, ctx);
          return { errorCode: errorNumber('INVALID_REQUEST'), errorMessage: 'this broker has no group coordinator' };
        }
        const key = req.key ?? '';
        if (key === '') return { errorCode: errorNumber('INVALID_REQUEST'), errorMessage: 'transactional id must not be empty' };
        return source.findCoordinator(key);
      };
      return {
        findCoordinator,
        initProducerId: initProducerIdHandler(source),
        addPartitionsToTxn: addPartitionsToTxn(source),
        addOffsetsToTxn: addOffsetsToTxn(source),
        endTxn: endTxn(source),
      };
    },
    useCluster(node, producerIds) {
      if (cluster || closed) return;
      cluster = new ClusterTransactions(node, {
        config: deps.config,
        logger,
        clock: deps.clock,
        timers: deps.timers,
        producerIds,
        ...(deps.onTxnMarker ? { onTxnMarker: deps.onTxnMarker } : {}),
      });
    },
    close() {
      closed = true;
      cluster?.close();
    },
  };
}
