/**
 * The part of @mq/log-store's `Log` (docs/CONTRACTS.md) the broker uses, and
 * the factory that opens one. The broker takes the factory as a component so
 * the wiring stays in one place (`log-factory.ts`).
 */
import type { ReadBufferPool } from '@mq/log-store';
import { MqError } from '@mq/protocol/errors';
import type { TopicLogOptions } from '../config/topic-config.js';

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTime: number;
  batches: number;
  bytes: number;
  /** An idempotent producer's retry of batches already in the log: nothing was written, the offsets are the originals'. */
  duplicate?: boolean;
  /**
   * Set only when the batches do not lie back to back from `baseOffset` (an
   * idempotent retry that gained batches): each batch's base offset, in order.
   */
  batchBaseOffsets?: number[];
}

export interface PartitionLog {
  readonly dir: string;
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  readonly size: number;
  append(
    batches: Buffer,
    options?: { assignOffsets?: boolean; leaderEpoch?: number; validate?: boolean },
  ): Promise<AppendResult>;
  /** With `pool`, `records` lies in a buffer of that pool (see @mq/log-store's ReadBufferPool). */
  read(fromOffset: number, maxBytes: number, options?: { maxOffset?: number; pool?: ReadBufferPool }): Promise<{ records: Buffer; nextOffset: number }>;
  offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null>;
  applyRetention(now?: number, options?: { upToOffset?: number }): Promise<{ deletedSegments: number; deletedBytes: number }>;
  /** Key compaction of closed segments below `upToOffset` (cleanup.policy=compact). */
  compact?(options: { upToOffset?: number }): Promise<{ removedRecords: number; bytesBefore: number; bytesAfter: number }>;
  /** Deletes the records below `offset` (DeleteRecords): the log start moves up to it. */
  deleteRecordsBefore(offset: number): Promise<void>;
  /** New log options while open (the topic's configs changed). */
  reconfigure(options: TopicLogOptions): void;
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly leaderEpochs: {
    /** The largest epoch <= `epoch` the log knows and where it ended; {-1, -1} when none. */
    endOffsetFor(epoch: number): { epoch: number; endOffset: number };
  };
}

export type OpenLog = (dir: string, options: TopicLogOptions) => Promise<PartitionLog>;

/**
 * Stands in for a partition log that could not be opened at start (damaged
 * files, permissions): the broker still starts and serves every other
 * partition, and this one answers STORAGE_ERROR until the cause is fixed and
 * the broker restarted.
 */
export class OfflineLog implements PartitionLog {
  readonly logStartOffset = -1;
  readonly logEndOffset = -1;
  readonly size = 0;
  readonly leaderEpochs = {
    endOffsetFor: (): { epoch: number; endOffset: number } => {
      throw this.error();
    },
  };

  constructor(
    readonly dir: string,
    readonly cause: Error,
  ) {}

  error(): MqError {
    return new MqError('STORAGE_ERROR', `partition log ${this.dir} is offline: it failed to open (${this.cause.message}); fix it and restart the broker`, {
      cause: this.cause,
    });
  }

  append(): Promise<AppendResult> {
    return Promise.reject(this.error());
  }
  read(): Promise<{ records: Buffer; nextOffset: number }> {
    return Promise.reject(this.error());
  }
  offsetForTimestamp(): Promise<{ offset: number; timestamp: number } | null> {
    return Promise.reject(this.error());
  }
  async applyRetention(): Promise<{ deletedSegments: number; deletedBytes: number }> {
    return { deletedSegments: 0, deletedBytes: 0 };
  }
  deleteRecordsBefore(): Promise<void> {
    return Promise.reject(this.error());
  }
  /** Nothing to change: the options apply when the log opens after the restart. */
  reconfigure(): void {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}
