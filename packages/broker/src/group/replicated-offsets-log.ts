/**
 * The offsets log of a cluster: the partitions of the replicated topic
 * `__consumer_offsets` this broker leads. Appends go through the
 * partition's PartitionLeader with acks=all (answered once every in-sync
 * replica has the batch, with at least min.insync.replicas of them), so an
 * acknowledged commit survives the loss of the coordinator's broker.
 * Loading reads the local replica's log up to the high watermark, after the
 * new leader's high watermark has caught up with the log end it took over.
 * Replication errors are mapped to the group errors clients retry on
 * (as Kafka's GroupMetadataManager does).
 */
import { MqError, isMqError, type ErrorCode } from '@mq/protocol/errors';
import { iterateBatches, lastOffset } from '@mq/protocol/batch';
import type { OffsetsLog } from './offsets-log.js';
import { OFFSETS_TOPIC } from './options.js';

/** The part of a replication PartitionLeader the offsets log uses. */
export interface OffsetsPartitionLeader {
  readonly highWatermark: number;
  readonly logEndOffset: number;
  readonly closed: boolean;
  append(records: Buffer, options: { acks: -1; timeoutMs: number; coordinator?: boolean }): Promise<{ baseOffset: number }>;
  /** Called when the HW or log end moves or leadership ends (returns the unsubscribe function). */
  watch(listener: () => void): () => void;
}

/** The part of a hosted replica's log the offsets log reads. */
export interface OffsetsReplicaLog {
  readonly logStartOffset: number;
  read(fromOffset: number, maxBytes: number, options?: { maxOffset?: number }): Promise<{ records: Buffer; nextOffset?: number }>;
}

export interface OffsetsReplicas {
  /** The local PartitionLeader of `__consumer_offsets`-p, when this broker leads it. */
  leaderOf(partition: number): OffsetsPartitionLeader | undefined;
  /** The local replica's log of `__consumer_offsets`-p, when this broker hosts it. */
  localLog(partition: number): OffsetsReplicaLog | undefined;
}

export interface ReplicatedOffsetsLogOptions {
  partitionCount: number;
  /** How long an append waits for the in-sync replicas (Kafka's offsets.commit.timeout.ms). */
  commitTimeoutMs: number;
  /** The internal topic (default `__consumer_offsets`; the transaction coordinator's is `__transaction_state`). */
  topic?: string;
}

/** Append errors of a replicated partition → what the group coordinator answers (all retriable). */
const APPEND_ERRORS: Readonly<Partial<Record<ErrorCode, ErrorCode>>> = {
  NOT_ENOUGH_REPLICAS: 'COORDINATOR_NOT_AVAILABLE',
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 'COORDINATOR_NOT_AVAILABLE',
  REQUEST_TIMED_OUT: 'COORDINATOR_NOT_AVAILABLE',
  UNKNOWN_TOPIC_OR_PARTITION: 'COORDINATOR_NOT_AVAILABLE',
  NOT_LEADER: 'NOT_COORDINATOR',
  FENCED_LEADER_EPOCH: 'NOT_COORDINATOR',
  LOG_CLOSED: 'NOT_COORDINATOR',
  STORAGE_ERROR: 'NOT_COORDINATOR',
};

/** The error a group request gets when its write to `__consumer_offsets`-p failed. */
export function groupErrorOf(err: unknown, partition: number, topic = OFFSETS_TOPIC): MqError {
  const code = isMqError(err) ? (err as MqError).code : 'UNKNOWN';
  const mapped = APPEND_ERRORS[code] ?? (code === 'UNKNOWN' ? 'COORDINATOR_NOT_AVAILABLE' : code);
  const message = `writing to ${topic}-${partition} failed (${code}): ${(err as Error)?.message ?? String(err)}`;
  return new MqError(mapped, message, { cause: err });
}

export function replicatedOffsetsLog(replicas: OffsetsReplicas, options: ReplicatedOffsetsLogOptions): OffsetsLog {
  const { partitionCount, commitTimeoutMs } = options;
  const topic = options.topic ?? OFFSETS_TOPIC;
  const check = (partition: number) => {
    if (!Number.isInteger(partition) || partition < 0 || partition >= partitionCount) {
      throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `${topic} has no partition ${partition} (it has ${partitionCount})`);
    }
  };
  const leader = (partition: number): OffsetsPartitionLeader => {
    check(partition);
    const l = replicas.leaderOf(partition);
    if (!l || l.closed) throw new MqError('NOT_COORDINATOR', `this broker no longer leads ${topic}-${partition}`);
    return l;
  };
  const local = (partition: number): OffsetsReplicaLog => {
    check(partition);
    const log = replicas.localLog(partition);
    if (!log) throw new MqError('NOT_COORDINATOR', `this broker holds no replica of ${topic}-${partition}`);
    return log;
  };
  return {
    partitionCount,
    async append(partition, batch, appendOptions) {
      const l = leader(partition);
      try {
        const r = await l.append(batch, { acks: -1, timeoutMs: commitTimeoutMs, ...(appendOptions?.coordinator ? { coordinator: true } : {}) });
        return { baseOffset: r.baseOffset };
      } catch (err) {
        throw groupErrorOf(err, partition, topic);
      }
    },
    async read(partition, fromOffset, maxBytes) {
      const hw = leader(partition).highWatermark;
      const { records } = await local(partition).read(fromOffset, maxBytes, { maxOffset: hw });
      let next = fromOffset;
      for (const span of iterateBatches(records)) next = lastOffset(span.header) + 1;
      return { records, nextOffset: next };
    },
    startOffset: (partition) => local(partition).logStartOffset,
    endOffset: (partition) => leader(partition).highWatermark,
    async awaitLoadable(partition) {
      const l = leader(partition);
      const target = l.logEndOffset;
      while (l.highWatermark < target) {
        if (l.closed) throw new MqError('NOT_COORDINATOR', `this broker stopped leading ${topic}-${partition} while loading it`);
        await changeOf(l);
      }
      if (l.closed || replicas.leaderOf(partition) !== l) {
        throw new MqError('NOT_COORDINATOR', `this broker stopped leading ${topic}-${partition} while loading it`);
      }
    },
  };
}

/** Resolves at the leader's next HW/log-end move or leadership end, or after a short poll interval. */
function changeOf(l: OffsetsPartitionLeader, pollMs = 100): Promise<void> {
  return new Promise((resolve) => {
    let off: (() => void) | undefined;
    const done = () => {
      clearTimeout(timer);
      off?.();
      resolve();
    };
    const timer = setTimeout(done, pollMs);
    try {
      off = l.watch(done);
    } catch {
      // Too many watchers on this partition: the poll timer alone wakes us.
    }
  });
}
