/**
 * The idempotent producer's identity (Kafka's enable.idempotence): one
 * producer id and epoch from InitProducerId, asked for once (the epoch is
 * bumped after a batch with a sequence failed for good), and the next sequence of
 * each partition. A batch gets its sequence when it is first closed and
 * keeps it on every retry, so the partition leader recognises a retry of a
 * batch it already wrote and answers its original offset instead of
 * writing it twice.
 */
import { MqError, errorCodeFromNumber } from '@mq/protocol/errors';
import type { Cluster } from '../cluster.js';
import type { BatchBuilder } from './batch-builder.js';
import type { TransactionManager } from './transactions.js';

/** Batches in flight per partition (Kafka: max.in.flight.requests.per.connection <= 5); the broker remembers the last 5. */
export const MAX_IDEMPOTENT_BATCHES_IN_FLIGHT = 5;
const INT32_MAX = 0x7fff_ffff;
const INT16_MAX = 0x7fff;

export interface ProducerIdentity {
  producerId: number;
  epoch: number;
}

export class Idempotence {
  private identity: ProducerIdentity | undefined;
  private initializing: Promise<ProducerIdentity> | undefined;
  private readonly sequences = new Map<string, number>();

  constructor(
    private readonly cluster: Cluster,
    /** A transactional producer: the identity comes from InitProducerId with its transactional id (initTransactions). */
    readonly txn?: TransactionManager,
  ) {}

  /** New producer id or epoch (a transactional producer's InitProducerId): sequences restart at 0. */
  setIdentity(identity: ProducerIdentity): void {
    this.identity = identity;
    this.sequences.clear();
  }

  /** The producer id and epoch, asking the cluster for them the first time. */
  ensure(): Promise<ProducerIdentity> | ProducerIdentity {
    if (this.identity) return this.identity;
    if (this.txn) throw new MqError('INVALID_TXN_STATE', `transactional producer "${this.txn.transactionalId}" has no producer id yet: call initTransactions() first`);
    this.initializing ??= this.init().finally(() => {
      this.initializing = undefined;
    });
    return this.initializing;
  }

  private async init(): Promise<ProducerIdentity> {
    const r = await this.cluster.send({ kind: 'any' }, 'initProducerId', { transactionalId: '' });
    const code = errorCodeFromNumber(r.errorCode ?? 0);
    if (code !== 'NONE') {
      throw new MqError(code, `InitProducerId failed: ${r.errorMessage || code} (the idempotent producer needs a producer id from the broker)`);
    }
    const identity = { producerId: Number(r.producerId), epoch: r.producerEpoch ?? 0 };
    this.identity = identity;
    return identity;
  }

  /** Gives a batch about to be sent for the first time its producer id, epoch and the partition's next sequence. */
  stamp(b: BatchBuilder, identity: ProducerIdentity): void {
    if (b.producerId >= 0) return; // a retry keeps its sequence
    const key = `${b.topic}\0${b.partition}`;
    const seq = this.sequences.get(key) ?? 0;
    b.producerId = identity.producerId;
    b.producerEpoch = identity.epoch;
    b.baseSequence = seq;
    b.transactional = this.txn !== undefined;
    // int32 sequences wrap from 2^31-1 to 0, as the broker expects.
    this.sequences.set(key, (seq + b.count) % (INT32_MAX + 1));
  }

  /**
   * A batch with a sequence failed for good: the broker may or may not have
   * it, so the partition's sequence cannot go on. Later batches get the next
   * epoch of the same producer id, sequences from 0 on every partition
   * (KIP-360: a partition leader takes a newer epoch starting at 0, known
   * producer or not); a new producer id only when the epoch would overflow.
   * Batches already stamped keep their epoch: each partition sends its
   * batches in order, one request at a time, so no partition sees an older
   * epoch after a newer one. Returns what later sends use.
   */
  reset(b: BatchBuilder, err?: unknown): 'epoch' | 'producer-id' | 'unchanged' {
    if (this.txn) {
      // A transactional producer keeps its id: the transaction can only abort, which starts a new epoch.
      this.txn.batchFailed(err);
      return 'unchanged';
    }
    // Only the first failure of an identity moves it on (the partition's later batches carry the same one).
    const id = this.identity;
    if (!id || b.producerId !== id.producerId || b.producerEpoch !== id.epoch) return 'unchanged';
    this.sequences.clear();
    if (id.epoch >= INT16_MAX) {
      this.identity = undefined;
      return 'producer-id';
    }
    this.identity = { producerId: id.producerId, epoch: id.epoch + 1 };
    return 'epoch';
  }

  /** The producer id and epoch later batches get (undefined before the first InitProducerId answer). */
  get current(): ProducerIdentity | undefined {
    return this.identity;
  }
}
