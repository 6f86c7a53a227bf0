/**
 * The producer: `send` one record or `sendBatch` many; records are batched
 * per partition, sent to the leaders and resolved with their offsets.
 */
import { MqError, isMqError } from '@mq/protocol/errors';
import type { Cluster } from '../cluster.js';
import { Retrier, abortError } from '../retrier.js';
import { Accumulator } from './accumulator.js';
import type { ProducerRecord } from './batch-builder.js';
import { parseProducerOptions, type ParsedProducerOptions, type ProducerOptions } from './options.js';
import { ErrorSink, GroupSink, sinkFail, type RecordMetadata, type ResolveSink } from './record-sink.js';
import { Idempotence } from './idempotence.js';
import { TransactionManager, type ConsumerGroupMetadata, type TransactionOffset, type TransactionState } from './transactions.js';
import { Sender } from './sender.js';

export interface FlushOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

export interface ProducerStats {
  /** Bytes of the send buffer in use. */
  bufferedBytes: number;
  /** Sends waiting for memory or metadata. */
  blockedSends: number;
  /** Produce requests outstanding. */
  inFlightRequests: number;
}

export class Producer {
  readonly options: ParsedProducerOptions;
  private readonly acc: Accumulator;
  private readonly sender: Sender;
  private closing: Promise<void> | undefined;
  private readonly writeErrors: ErrorSink;
  private readonly txn: TransactionManager | undefined;

  constructor(
    cluster: Cluster,
    options: ProducerOptions = {},
    private readonly onClose?: () => void,
  ) {
    this.options = parseProducerOptions(options);
    this.writeErrors = new ErrorSink(options.onWriteError);
    const retrier = new Retrier({ ...cluster.options.retry, retries: this.options.retries });
    this.acc = new Accumulator(this.options, cluster, { wake: () => this.sender.wake() });
    let idempotence: Idempotence | undefined;
    if (this.options.transactionalId !== undefined) {
      this.txn = new TransactionManager(cluster, this.options.transactionalId, this.options.transactionTimeoutMs, (identity) => idempotence!.setIdentity(identity));
      idempotence = new Idempotence(cluster, this.txn);
    } else if (this.options.idempotent) {
      idempotence = new Idempotence(cluster);
    }
    this.sender = new Sender(this.options, cluster, this.acc, retrier, idempotence);
  }

  // ------------------------------------------------------------ transactions

  /** The transactional producer's state (undefined for a producer without a transactionalId). */
  get transactionState(): TransactionState | undefined {
    return this.txn?.state;
  }

  /**
   * Registers the transactional id with its coordinator: gets the producer id
   * and a new epoch, which fences any earlier instance with the same id (its
   * open transaction is aborted). Called by the first beginTransaction() when
   * not called before.
   */
  async initTransactions(options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.requireTxn('initTransactions()').init(options.signal);
  }

  /** Opens a transaction: sends until commitTransaction() or abortTransaction() belong to it. */
  async beginTransaction(): Promise<void> {
    const txn = this.requireTxn('beginTransaction()');
    if (txn.state === 'uninitialized') await txn.init();
    txn.begin();
  }

  /**
   * Commits the consumed offsets of `group` within the open transaction: the
   * group sees them only if the transaction commits (read-process-write).
   * `offsets` are the next offsets to consume.
   */
  async sendOffsetsToTransaction(offsets: readonly TransactionOffset[], group: ConsumerGroupMetadata, options: { signal?: AbortSignal } = {}): Promise<void> {
    await this.requireTxn('sendOffsetsToTransaction()').sendOffsets(offsets, group, options.signal);
  }

  /**
   * Flushes the transaction's records, then commits it: every record and
   * offset of it becomes visible to read_committed consumers at once. A failed
   * send makes it uncommittable (INVALID_TXN_STATE): abortTransaction() then.
   */
  async commitTransaction(options: FlushOptions = {}): Promise<void> {
    const txn = this.requireTxn('commitTransaction()');
    txn.checkCommit();
    await this.flush(options).catch(() => undefined);
    txn.checkCommit();
    await txn.end(true, options.signal);
  }

  /** Waits for the transaction's sends to finish, then aborts it: none of its records or offsets is ever visible to read_committed consumers. */
  async abortTransaction(options: FlushOptions = {}): Promise<void> {
    const txn = this.requireTxn('abortTransaction()');
    txn.checkAbort();
    await this.flush(options).catch(() => undefined);
    await txn.end(false, options.signal);
  }

  /** Runs `fn` in a transaction: commits when it resolves, aborts (and rethrows) when it throws. */
  async transaction<T>(fn: (producer: Producer) => Promise<T>): Promise<T> {
    await this.beginTransaction();
    let result: T;
    try {
      result = await fn(this);
    } catch (err) {
      const state = this.txn!.state;
      if (state === 'in-transaction' || state === 'abortable') await this.abortTransaction().catch(() => undefined);
      throw err;
    }
    try {
      await this.commitTransaction();
    } catch (err) {
      const state = this.txn!.state;
      if (state === 'in-transaction' || state === 'abortable') await this.abortTransaction().catch(() => undefined);
      throw err;
    }
    return result;
  }

  private requireTxn(what: string): TransactionManager {
    if (!this.txn) throw new MqError('INVALID_TXN_STATE', `${what} needs a transactional producer: create it with producer({ transactionalId })`);
    return this.txn;
  }

  /**
   * Sends one record; resolves with its partition and offset once the broker
   * acknowledged it (per `acks`). Waits (up to `maxBlockMs`) when the send
   * buffer is full; fails with BUFFER_FULL after that.
   */
  send(topic: string, record: ProducerRecord): Promise<RecordMetadata> {
    // A shared executor instead of a closure per call; the resolve function is the record's whole sink.
    const promise = new Promise<RecordMetadata>(captureResolve);
    const sink = capturedResolve!;
    capturedResolve = undefined;
    try {
      this.txn?.checkSend();
      this.acc.append(topic, record, sink, 0);
    } catch (err) {
      sinkFail(sink, 0, err); // as a throw inside a promise executor did: the promise rejects
    }
    return promise;
  }

  /** Sends many records with one promise: resolves with each record's metadata, in order. */
  sendBatch(topic: string, records: readonly ProducerRecord[]): Promise<RecordMetadata[]> {
    return new Promise<RecordMetadata[]>((resolve, reject) => {
      if (!Array.isArray(records)) {
        reject(new MqError('INVALID_ARGUMENT', 'sendBatch takes an array of records'));
        return;
      }
      try {
        this.txn?.checkSend();
      } catch (err) {
        reject(err);
        return;
      }
      const sink = new GroupSink(records.length, resolve, reject);
      for (let i = 0; i < records.length; i++) this.acc.append(topic, records[i]!, sink, i);
    });
  }

  /**
   * Fire and forget: takes the record without a promise (the fastest path).
   * Returns `writable`: false means the buffer is full — wait for `drain()`
   * before writing more (records written anyway wait their turn, up to
   * `maxBlockMs`). A record that fails goes to the `onWriteError` option and
   * makes the next `flush()` or `close()` reject.
   */
  write(topic: string, record: ProducerRecord): boolean {
    this.txn?.checkSend();
    this.acc.append(topic, record, this.writeErrors, 0);
    return this.acc.writable;
  }

  /** False when sends would wait (the buffer is full); `drain()` resolves when they would not. */
  get writable(): boolean {
    return this.acc.writable;
  }

  drain(): Promise<void> {
    return this.acc.drain();
  }

  get stats(): ProducerStats {
    return {
      bufferedBytes: this.acc.pool.usedBytes,
      blockedSends: this.acc.blockedCount,
      inFlightRequests: this.sender.inFlightRequests,
    };
  }

  /** Sends everything buffered now (ignoring lingerMs) and waits until every record sent so far completed. */
  async flush(options: FlushOptions = {}): Promise<void> {
    this.acc.flushing++;
    this.sender.wake();
    try {
      await withDeadline(this.acc.idle(), options, 'flush');
    } finally {
      this.acc.flushing--;
    }
    const failed = this.writeErrors.take();
    if (failed) {
      const first = failed.error as { message?: string; code?: string };
      throw new MqError(
        isMqError(failed.error) ? failed.error.code : 'UNKNOWN',
        `${failed.count} written record${failed.count === 1 ? '' : 's'} failed; the first: ${first?.message ?? String(failed.error)}`,
        { cause: failed.error, failedRecords: failed.count },
      );
    }
  }

  /**
   * Flushes, then stops. Records still unsent when the timeout passes fail
   * with CLOSED. Later sends fail with CLOSED.
   */
  close(options: FlushOptions = {}): Promise<void> {
    this.closing ??= (async () => {
      let writeFailure: unknown;
      try {
        await this.flush(options);
      } catch (err) {
        // A deadline that passed: whatever is left fails below. Failed write()s: reported after closing.
        if (isMqError(err) && err.failedRecords !== undefined) writeFailure = err;
      }
      this.acc.abortAll(new MqError('CLOSED', 'the producer was closed before these records were sent'));
      this.sender.stop();
      this.onClose?.();
      if (writeFailure) throw writeFailure;
    })();
    return this.closing;
  }
}

let capturedResolve: ResolveSink | undefined;
/** A promise executor that hands its resolve function out (it runs synchronously inside `new Promise`). */
function captureResolve(resolve: ResolveSink): void {
  capturedResolve = resolve;
}

async function withDeadline<T>(p: Promise<T>, options: FlushOptions, what: string): Promise<T> {
  const { signal, timeoutMs } = options;
  if (!signal && timeoutMs === undefined) return p;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        if (timeoutMs !== undefined) {
          timer = setTimeout(
            () => reject(new MqError('REQUEST_TIMED_OUT', `${what} did not finish within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }
        if (signal) {
          if (signal.aborted) reject(abortError(signal));
          onAbort = () => reject(abortError(signal));
          signal.addEventListener('abort', onAbort, { once: true });
        }
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal!.removeEventListener('abort', onAbort);
  }
}
export { withDeadline };
