/**
 * The transactional producer's side of KIP-98: its transaction coordinator
 * (FindCoordinator key type 1), its producer id and epoch from
 * InitProducerId with the transactional id (which fences any previous
 * instance), the partitions added to the open transaction before their first
 * batch is sent (AddPartitionsToTxn), offsets sent in it (AddOffsetsToTxn +
 * TxnOffsetCommit), and EndTxn. The state machine refuses what does not fit
 * (a send outside a transaction, a commit without begin) with
 * INVALID_TXN_STATE, changing nothing; once fenced (PRODUCER_FENCED, or
 * INVALID_PRODUCER_EPOCH from a partition), every call fails with
 * PRODUCER_FENCED: the application closes this producer.
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import type { Cluster } from '../cluster.js';
import { CoordinatorClient } from '../group/coordinator-client.js';
import type { ProducerIdentity } from './idempotence.js';

export type TransactionState = 'uninitialized' | 'ready' | 'in-transaction' | 'abortable' | 'completing' | 'fenced';

/** A consumer's group, as `sendOffsetsToTransaction` needs it (Kafka's ConsumerGroupMetadata). */
export interface ConsumerGroupMetadata {
  groupId: string;
  /** The member's generation (default -1: not checked, as a commit from outside the group). */
  generationId?: number;
  memberId?: string;
  groupInstanceId?: string;
}

export interface TransactionOffset {
  topic: string;
  partition: number;
  /** The next offset to consume (the last processed one + 1). */
  offset: number;
  metadata?: string;
  leaderEpoch?: number;
}

const FENCING = new Set(['PRODUCER_FENCED', 'INVALID_PRODUCER_EPOCH', 'INVALID_PRODUCER_ID_MAPPING']);

export class TransactionManager {
  private stateValue: TransactionState = 'uninitialized';
  private identity: ProducerIdentity | undefined;
  private readonly coordinator: CoordinatorClient;
  /** Partitions added to the open transaction (true) and being added (the AddPartitionsToTxn answer). */
  private readonly added = new Map<string, Promise<void> | true>();
  private offsetsAdded = false;
  /** A batch of the open transaction failed: it can only be aborted. */
  private failure: unknown;
  /** Sequences may be broken (a failed batch): the next abort re-initialises (a new epoch, sequences from 0). */
  private needsReinit = false;

  constructor(
    private readonly cluster: Cluster,
    readonly transactionalId: string,
    private readonly timeoutMs: number,
    /** Called with the producer id and epoch whenever InitProducerId gives new ones (the idempotence layer restarts its sequences). */
    private readonly onIdentity: (identity: ProducerIdentity) => void,
  ) {
    this.coordinator = new CoordinatorClient(cluster, transactionalId, cluster.options.requestTimeoutMs, 1);
  }

  get state(): TransactionState {
    return this.stateValue;
  }

  get producerIdentity(): ProducerIdentity | undefined {
    return this.identity;
  }

  /** InitProducerId with the transactional id (fences earlier instances; their open transaction is aborted). */
  async init(signal?: AbortSignal): Promise<void> {
    this.ensureNotFenced();
    if (this.stateValue !== 'uninitialized') throw this.badState('initTransactions()', 'it was already called');
    await this.initProducerId(signal);
    this.stateValue = 'ready';
  }

  private async initProducerId(signal?: AbortSignal): Promise<void> {
    const r = await this.call('initProducerId', { transactionalId: this.transactionalId, transactionTimeoutMs: this.timeoutMs }, signal);
    this.identity = { producerId: Number(r.producerId), epoch: r.producerEpoch ?? 0 };
    this.needsReinit = false;
    this.onIdentity(this.identity);
  }

  begin(): void {
    this.ensureNotFenced();
    if (this.stateValue === 'uninitialized') throw this.badState('beginTransaction()', 'call initTransactions() first');
    if (this.stateValue !== 'ready') throw this.badState('beginTransaction()', 'a transaction is already open (commit or abort it first)');
    this.stateValue = 'in-transaction';
    this.added.clear();
    this.offsetsAdded = false;
    this.failure = undefined;
  }

  /** Throws unless a record may be sent now (inside an open transaction). */
  checkSend(): void {
    this.ensureNotFenced();
    if (this.stateValue === 'in-transaction') return;
    if (this.stateValue === 'abortable') throw new MqError('INVALID_TXN_STATE', `a send of the open transaction of "${this.transactionalId}" failed; abortTransaction() it`, { cause: this.failure });
    throw this.badState('a send', 'a transactional producer sends inside a transaction only: beginTransaction() first');
  }

  /**
   * Adds partitions to the open transaction before their first batch is sent
   * (once each). Undefined when every partition is in already: a send to
   * partitions the transaction has adds no promise.
   */
  addPartitions(partitions: ReadonlyArray<{ topic: string; partition: number }>, signal?: AbortSignal): Promise<void> | undefined {
    this.ensureNotFenced();
    let waits: Promise<void>[] | undefined;
    let fresh: Array<{ topic: string; partition: number }> | undefined;
    for (const tp of partitions) {
      const k = `${tp.topic}\u0000${tp.partition}`;
      const known = this.added.get(k);
      if (known === true) continue;
      if (known) (waits ??= []).push(known);
      else (fresh ??= []).push(tp);
    }
    if (fresh) {
      const identity = this.requireIdentity();
      const topics = new Map<string, number[]>();
      for (const tp of fresh) {
        let l = topics.get(tp.topic);
        if (!l) topics.set(tp.topic, (l = []));
        l.push(tp.partition);
      }
      const adding = this.call(
        'addPartitionsToTxn',
        {
          transactionalId: this.transactionalId,
          producerId: identity.producerId,
          producerEpoch: identity.epoch,
          topics: [...topics].map(([name, ps]) => ({ name, partitions: ps })),
        },
        signal,
      ).then(() => undefined);
      for (const tp of fresh) this.added.set(`${tp.topic}\u0000${tp.partition}`, adding);
      // Added: later sends need not wait; a refusal: not added (a later batch of the same partition asks again).
      adding.then(
        () => this.settleAdded(fresh, adding, true),
        () => this.settleAdded(fresh, adding, false),
      );
      (waits ??= []).push(adding);
    }
    if (!waits) return undefined;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
  }

  private settleAdded(partitions: ReadonlyArray<{ topic: string; partition: number }>, adding: Promise<void>, ok: boolean): void {
    for (const tp of partitions) {
      const k = `${tp.topic}\u0000${tp.partition}`;
      if (this.added.get(k) !== adding) continue;
      if (ok) this.added.set(k, true);
      else this.added.delete(k);
    }
  }

  /** A batch of the open transaction failed for good: the transaction can only abort now. */
  batchFailed(err: unknown): void {
    if (isMqError(err) && FENCING.has(err.code)) {
      this.stateValue = 'fenced';
      return;
    }
    this.needsReinit = true;
    if (this.stateValue === 'in-transaction') {
      this.stateValue = 'abortable';
      this.failure = err;
    }
  }

  async sendOffsets(offsets: readonly TransactionOffset[], group: ConsumerGroupMetadata, signal?: AbortSignal): Promise<void> {
    this.checkSend();
    if (!group || typeof group.groupId !== 'string' || group.groupId === '') throw new MqError('INVALID_ARGUMENT', 'sendOffsetsToTransaction needs the consumer group metadata ({ groupId })');
    for (const o of offsets) {
      if (!Number.isSafeInteger(o.offset) || o.offset < 0) throw new MqError('INVALID_ARGUMENT', `offset ${o.offset} for ${o.topic}-${o.partition} must be an integer >= 0`);
    }
    const identity = this.requireIdentity();
    if (!this.offsetsAdded) {
      await this.call('addOffsetsToTxn', { transactionalId: this.transactionalId, producerId: identity.producerId, producerEpoch: identity.epoch, groupId: group.groupId }, signal);
      this.offsetsAdded = true;
    }
    const byTopic = new Map<string, mq.OffsetCommitPartition.$Properties[]>();
    for (const o of offsets) {
      let l = byTopic.get(o.topic);
      if (!l) byTopic.set(o.topic, (l = []));
      l.push({ partition: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch ?? -1, metadata: o.metadata ?? '' });
    }
    const groupClient = new CoordinatorClient(this.cluster, group.groupId);
    try {
      await groupClient.txnOffsetCommit(
        {
          transactionalId: this.transactionalId,
          groupId: group.groupId,
          producerId: identity.producerId,
          producerEpoch: identity.epoch,
          generationId: group.generationId ?? -1,
          memberId: group.memberId ?? '',
          groupInstanceId: group.groupInstanceId ?? '',
          topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
        },
        signal,
      );
    } catch (err) {
      this.batchFailed(err);
      throw err;
    }
  }

  /** Whether commit may proceed; throws (state unchanged) when it may not. */
  checkCommit(): void {
    this.ensureNotFenced();
    if (this.stateValue === 'abortable') {
      throw new MqError('INVALID_TXN_STATE', `a send of the transaction of "${this.transactionalId}" failed, so it cannot commit: abortTransaction() it`, { cause: this.failure });
    }
    if (this.stateValue !== 'in-transaction') throw this.badState('commitTransaction()', 'no transaction is open (beginTransaction() first)');
  }

  checkAbort(): void {
    this.ensureNotFenced();
    if (this.stateValue !== 'in-transaction' && this.stateValue !== 'abortable') throw this.badState('abortTransaction()', 'no transaction is open');
  }

  /** EndTxn (when anything was added), then ready for the next transaction. */
  async end(commit: boolean, signal?: AbortSignal): Promise<void> {
    const identity = this.requireIdentity();
    const anything = this.added.size > 0 || this.offsetsAdded;
    this.stateValue = 'completing';
    try {
      if (anything) {
        await Promise.allSettled([...this.added.values()]);
        await this.call('endTxn', { transactionalId: this.transactionalId, producerId: identity.producerId, producerEpoch: identity.epoch, committed: commit }, signal);
      }
      // After a failed batch the sequences of its partition cannot go on: a new epoch restarts them.
      if (!commit && this.needsReinit) await this.initProducerId(signal);
    } catch (err) {
      if (this.stateValue === 'completing') this.stateValue = commit ? 'abortable' : 'abortable';
      throw err;
    }
    if (this.stateValue === 'completing') this.stateValue = 'ready';
    this.added.clear();
    this.offsetsAdded = false;
    this.failure = undefined;
  }

  private async call<B extends 'initProducerId' | 'addPartitionsToTxn' | 'addOffsetsToTxn' | 'endTxn'>(body: B, payload: NonNullable<mq.RequestFrame[B]>, signal?: AbortSignal) {
    try {
      return await this.coordinator.txnRequest(body, payload, signal);
    } catch (err) {
      if (isMqError(err) && FENCING.has(err.code)) {
        this.stateValue = 'fenced';
        throw new MqError('PRODUCER_FENCED', `transactional id "${this.transactionalId}": ${err.message} (close this producer; a newer instance owns the id)`, { cause: err });
      }
      throw err;
    }
  }

  private requireIdentity(): ProducerIdentity {
    if (!this.identity) throw this.badState('this', 'call initTransactions() first');
    return this.identity;
  }

  private ensureNotFenced(): void {
    if (this.stateValue === 'fenced') {
      throw new MqError('PRODUCER_FENCED', `the transactional producer "${this.transactionalId}" was fenced by a newer instance with the same transactional id (or its transaction timed out); close it`);
    }
  }

  private badState(what: string, why: string): MqError {
    return new MqError('INVALID_TXN_STATE', `${what} refused for transactional producer "${this.transactionalId}" (state ${this.stateValue}): ${why}`);
  }
}
