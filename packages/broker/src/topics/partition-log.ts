/**
 * The part of @mq/log-store's `Log` (docs/CONTRACTS.md) the broker uses, and
 * the factory that opens one. The broker takes the factory as a component so
 * the wiring stays in one place (`log-factory.ts`).
 */
import type { TopicLogOptions } from '../config/topic-config.js';

export interface AppendResult {
  baseOffset: number;
  lastOffset: number;
  logAppendTime: number;
  batches: number;
  bytes: number;
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
  read(fromOffset: number, maxBytes: number, options?: { maxOffset?: number }): Promise<{ records: Buffer; nextOffset: number }>;
  offsetForTimestamp(ts: number): Promise<{ offset: number; timestamp: number } | null>;
  applyRetention(now?: number): Promise<{ deletedSegments: number; deletedBytes: number }>;
  flush(): Promise<void>;
  close(): Promise<void>;
  readonly leaderEpochs: {
    /** The largest epoch <= `epoch` the log knows and where it ended; {-1, -1} when none. */
    endOffsetFor(epoch: number): { epoch: number; endOffset: number };
  };
}

export type OpenLog = (dir: string, options: TopicLogOptions) => Promise<PartitionLog>;
