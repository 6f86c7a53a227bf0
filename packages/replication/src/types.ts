/**
 * The shapes replication shares with the broker that wires it: the log it
 * replicates (a subset of @mq/log-store's `Log`), the clock and timers it is
 * given, the high-watermark checkpoint, and the Fetch / OffsetForLeaderEpoch
 * exchanges (the wire's FetchPartition / FetchPartitionResponse fields in
 * camelCase, flattened to one list of partitions).
 */
import type { ErrorCode } from '@mq/protocol/errors';

/** One entry of a log's leader epoch cache: `epoch` wrote from `startOffset` on. */
export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

/**
 * What replication reads of a log's leader epoch cache (@mq/log-store's
 * `LeaderEpochCache`). The log keeps it: appends with `leaderEpoch` and
 * follower appends of batches with a newer `partitionLeaderEpoch` record
 * their epoch, `truncateTo` drops entries at or above the truncation point.
 */
export interface ReplicaEpochCache {
  /** Entries in ascending epoch (and start offset) order. */
  readonly entries: readonly EpochEntry[];
}

export interface ReplicaAppendResult {
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

/** The parts of @mq/log-store's `Log` replication uses (see docs/CONTRACTS.md). */
export interface ReplicaLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  append(
    batches: Buffer,
    options?: { assignOffsets?: boolean; leaderEpoch?: number; validate?: boolean; logAppendTime?: boolean; maxBatchBytes?: number; coordinator?: boolean; transactional?: boolean },
  ): Promise<ReplicaAppendResult>;
  /**
   * The first offset of the oldest transaction open or ended by a marker the
   * HW has not passed (absent or undefined: none; the last stable offset is
   * then the high watermark).
   */
  readonly firstUnstableOffset?: number | undefined;
  /** The replica's HW reached `highWatermark`: transactions ended below it stop bounding the LSO. */
  onHighWatermarkUpdated?(highWatermark: number): void;
  /** Aborted transactions whose records may lie in [from, to) (read_committed fetches). */
  abortedTransactions?(from: number, to: number): Array<{ producerId: number; firstOffset: number }>;
  read(fromOffset: number, maxBytes: number, options?: { maxOffset?: number; pool?: ReadPool }): Promise<{ records: Buffer; nextOffset: number }>;
  truncateTo(offset: number): Promise<void>;
  deleteRecordsBefore(offset: number): Promise<void>;
  /**
   * Records that `epoch` starts at `startOffset` (a new leader, at its log
   * end). Without it the epoch is recorded by the leader's first append, which
   * answers OffsetForLeaderEpoch the same way.
   */
  assignLeaderEpoch?(epoch: number, startOffset: number): Promise<void>;
  /** Empties the log and makes it start (and end) at `offset` (a follower behind the leader's log start). */
  truncateFullyAndStartAt?(offset: number): Promise<void>;
  flush(): Promise<void>;
  readonly leaderEpochs: ReplicaEpochCache;
}

/**
 * Buffers a fetch reads into and gives back once the response is written
 * (@mq/log-store's ReadBufferPool). Releasing a buffer the pool did not hand
 * out is ignored.
 */
export interface ReadPool {
  take(size: number): Buffer;
  release(view: Uint8Array): void;
}

/** Where a partition's high watermark survives restarts (Kafka's replication-offset-checkpoint). */
export interface HighWatermarkCheckpoint {
  load(): Promise<number | undefined>;
  save(highWatermark: number): Promise<void>;
}

export const CONSUMER_REPLICA_ID = -1;
/** "Unknown" for epochs and offsets, as on the wire. */
export const UNDEFINED = -1;

export interface EpochEndOffset {
  epoch: number;
  endOffset: number;
}

/** One partition of a Fetch request (wire: FetchPartition plus its topic). */
export interface FetchPartitionRequest {
  topic: string;
  /**
   * Followers: the topic id (incarnation) their log belongs to. A leader
   * whose partition of that name belongs to another incarnation refuses the
   * fetch (INCONSISTENT_TOPIC_ID) and counts nothing of it. Absent: by name.
   */
  topicId?: string;
  partition: number;
  fetchOffset: number;
  partitionMaxBytes: number;
  /** -1 when unknown (old consumers); a leader fences a stale one. */
  currentLeaderEpoch: number;
  /** Followers: their own log start offset. */
  logStartOffset?: number;
  /** Followers: the epoch of their last batch (KIP-320 divergence check); -1 when none. */
  lastFetchedEpoch?: number;
}

/** A Fetch request (wire: FetchRequest). `replicaId` is -1 for consumers. */
export interface FetchRequest {
  replicaId: number;
  /** The follower's broker epoch (registration incarnation); -1 when unknown. */
  replicaEpoch?: number;
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  partitions: FetchPartitionRequest[];
  /** Consumers: 0 read_uncommitted (default, up to the high watermark), 1 read_committed (up to the last stable offset, with the aborted transactions). */
  isolationLevel?: number;
}

/** One partition of a Fetch response (wire: FetchPartitionResponse plus its topic). */
export interface FetchPartitionResponse {
  topic: string;
  /** The topic id asked about (a leader refuses a request naming another incarnation than its own), else the answering log's; a follower drops an answer naming another. */
  topicId?: string;
  partition: number;
  errorCode: ErrorCode;
  errorMessage?: string;
  highWatermark: number;
  logStartOffset: number;
  logEndOffset: number;
  /** The last stable offset: the high watermark, or the first offset of the oldest open transaction below it. */
  lastStableOffset?: number;
  /** read_committed: the transactions aborted within the records returned. */
  abortedTransactions?: Array<{ producerId: number; firstOffset: number }>;
  records: Buffer;
  divergingEpoch?: EpochEndOffset;
  currentLeaderId: number;
  currentLeaderEpoch: number;
}

export interface FetchResponse {
  partitions: FetchPartitionResponse[];
}

export interface OffsetForLeaderEpochPartitionRequest {
  topic: string;
  /** As FetchPartitionRequest.topicId. */
  topicId?: string;
  partition: number;
  currentLeaderEpoch: number;
  leaderEpoch: number;
}

export interface OffsetForLeaderEpochRequest {
  replicaId: number;
  partitions: OffsetForLeaderEpochPartitionRequest[];
}

export interface OffsetForLeaderEpochPartitionResponse {
  topic: string;
  /** As FetchPartitionResponse.topicId. */
  topicId?: string;
  partition: number;
  errorCode: ErrorCode;
  leaderEpoch: number;
  endOffset: number;
}

export interface OffsetForLeaderEpochResponse {
  partitions: OffsetForLeaderEpochPartitionResponse[];
}

/** How a follower reaches a leader: the broker sends the Fetch over its transport. */
export type FetchFn = (leaderId: number, request: FetchRequest, signal: AbortSignal) => Promise<FetchResponse>;

export type OffsetForLeaderEpochFn = (
  leaderId: number,
  request: OffsetForLeaderEpochRequest,
  signal: AbortSignal,
) => Promise<OffsetForLeaderEpochResponse>;

/** A proposed ISR change sent to the controller (Kafka's AlterPartition). */
export interface AlterPartitionRequest {
  topic: string;
  /** The leader's topic id (its incarnation), when it has one: the controller refuses a deleted incarnation's proposal. */
  topicId?: string;
  partition: number;
  leaderId: number;
  leaderEpoch: number;
  /** The partition epoch the proposal is based on; the controller rejects a stale one. */
  partitionEpoch: number;
  isr: number[];
}

/** The state the controller committed. */
export interface PartitionState {
  leaderEpoch: number;
  partitionEpoch: number;
  isr: number[];
  replicas?: number[];
}

/**
 * Proposes an ISR change to the controller. Resolves with the committed state,
 * or rejects with an MqError (INCONSISTENT_PARTITION_EPOCH, FENCED_LEADER_EPOCH,
 * NOT_CONTROLLER, ...).
 */
export type AlterPartitionFn = (request: AlterPartitionRequest) => Promise<PartitionState>;
