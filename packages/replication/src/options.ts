/**
 * Options of the partition leader and the follower fetcher: named defaults,
 * one parser each that rejects contradictions and returns a private copy.
 */
import { MqError } from '@mq/protocol/errors';

/** Kafka's replica.lag.time.max.ms default. */
export const DEFAULT_REPLICA_LAG_TIME_MAX_MS = 30_000;
export const DEFAULT_MIN_INSYNC_REPLICAS = 1;
export const DEFAULT_MAX_PENDING_PRODUCES = 10_000;
export const DEFAULT_MAX_PENDING_FETCHES = 10_000;

export const DEFAULT_REPLICA_FETCH_MAX_WAIT_MS = 500;
export const DEFAULT_REPLICA_FETCH_MIN_BYTES = 1;
/** Kafka's replica.fetch.response.max.bytes and replica.fetch.max.bytes. */
export const DEFAULT_REPLICA_FETCH_MAX_BYTES = 10 * 1024 * 1024;
export const DEFAULT_REPLICA_FETCH_PARTITION_MAX_BYTES = 1024 * 1024;
export const DEFAULT_REPLICA_FETCH_BACKOFF_MS = 100;
export const DEFAULT_REPLICA_FETCH_MAX_BACKOFF_MS = 5_000;
/**
 * First retry delay after the leader answered NOT_LEADER or UNKNOWN_LEADER_EPOCH: right after a
 * leader change the follower often asks before the new leader has applied the metadata record
 * naming it, which is a matter of milliseconds.
 */
export const DEFAULT_REPLICA_FETCH_LEADER_CHANGE_BACKOFF_MS = 10;
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
/** Kafka's replica.high.watermark.checkpoint.interval.ms. */
export const DEFAULT_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS = 5_000;

function invalid(message: string): MqError {
  return new MqError('INVALID_CONFIG', message);
}

function int(name: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw invalid(`${name} must be an integer >= ${min}, got ${String(value)}`);
  }
  return value;
}

function brokerIds(name: string, value: unknown): number[] {
  if (!Array.isArray(value)) throw invalid(`${name} must be an array of broker ids`);
  const ids = value.map((v, i) => int(`${name}[${i}]`, v, 0));
  if (new Set(ids).size !== ids.length) throw invalid(`${name} lists a broker twice: [${ids.join(', ')}]`);
  return ids;
}

export interface PartitionLeaderOptions {
  topic: string;
  /**
   * The topic's id (its incarnation: a topic deleted and created again under
   * the same name gets a new one). Replica fetches and OffsetForLeaderEpoch
   * naming another id are refused with INCONSISTENT_TOPIC_ID; answers carry
   * it. Default '' (no id: requests naming one are refused).
   */
  topicId?: string;
  partition: number;
  /** This broker's id: the leader. */
  brokerId: number;
  leaderEpoch: number;
  partitionEpoch: number;
  /** All replicas of the partition, this broker included. */
  replicas: readonly number[];
  /** The committed ISR; must include this broker. */
  isr: readonly number[];
  /** acks=all produces are refused while the ISR is smaller. */
  minInsyncReplicas?: number;
  /** A follower that has not caught up for this long leaves the ISR. */
  replicaLagTimeMaxMs?: number;
  /** How often the ISR is checked for laggards; default half the lag time. */
  isrCheckIntervalMs?: number;
  /** Bound on acks=all produces waiting for replication. */
  maxPendingProduces?: number;
  /** Bound on fetches parked waiting for data. */
  maxPendingFetches?: number;
  /** How often at most the HW is written to its checkpoint; 0 writes every change. */
  highWatermarkCheckpointIntervalMs?: number;
}

export type ParsedPartitionLeaderOptions = Readonly<Required<Omit<PartitionLeaderOptions, 'replicas' | 'isr'>>> & {
  readonly replicas: readonly number[];
  readonly isr: readonly number[];
};

export function parsePartitionLeaderOptions(options: PartitionLeaderOptions): ParsedPartitionLeaderOptions {
  if (typeof options?.topic !== 'string' || options.topic === '') throw invalid('topic must be a non-empty string');
  const partition = int('partition', options.partition, 0);
  const brokerId = int('brokerId', options.brokerId, 0);
  const leaderEpoch = int('leaderEpoch', options.leaderEpoch, 0);
  const partitionEpoch = int('partitionEpoch', options.partitionEpoch, 0);
  const replicas = brokerIds('replicas', options.replicas);
  const isr = brokerIds('isr', options.isr);
  if (!replicas.includes(brokerId)) throw invalid(`leader ${brokerId} is not in the replica set [${replicas.join(', ')}]`);
  if (!isr.includes(brokerId)) throw invalid(`leader ${brokerId} is not in the ISR [${isr.join(', ')}]`);
  for (const id of isr) {
    if (!replicas.includes(id)) throw invalid(`ISR member ${id} is not in the replica set [${replicas.join(', ')}]`);
  }
  const minInsyncReplicas = int('minInsyncReplicas', options.minInsyncReplicas ?? DEFAULT_MIN_INSYNC_REPLICAS, 1);
  if (minInsyncReplicas > replicas.length) {
    throw invalid(
      `min.insync.replicas ${minInsyncReplicas} is more than the ${replicas.length} replicas: acks=all could never succeed`,
    );
  }
  const replicaLagTimeMaxMs = int('replicaLagTimeMaxMs', options.replicaLagTimeMaxMs ?? DEFAULT_REPLICA_LAG_TIME_MAX_MS, 1);
  const isrCheckIntervalMs = int(
    'isrCheckIntervalMs',
    options.isrCheckIntervalMs ?? Math.max(1, Math.floor(replicaLagTimeMaxMs / 2)),
    1,
  );
  const topicId = options.topicId ?? '';
  if (typeof topicId !== 'string') throw invalid('topicId must be a string');
  return Object.freeze({
    topic: options.topic,
    topicId,
    partition,
    brokerId,
    leaderEpoch,
    partitionEpoch,
    replicas: Object.freeze(replicas),
    isr: Object.freeze(isr),
    minInsyncReplicas,
    replicaLagTimeMaxMs,
    isrCheckIntervalMs,
    maxPendingProduces: int('maxPendingProduces', options.maxPendingProduces ?? DEFAULT_MAX_PENDING_PRODUCES, 1),
    maxPendingFetches: int('maxPendingFetches', options.maxPendingFetches ?? DEFAULT_MAX_PENDING_FETCHES, 1),
    highWatermarkCheckpointIntervalMs: int(
      'highWatermarkCheckpointIntervalMs',
      options.highWatermarkCheckpointIntervalMs ?? DEFAULT_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
      0,
    ),
  });
}

export interface FollowerFetcherOptions {
  /** This broker's id, sent as the Fetch's replica id. */
  brokerId: number;
  /** This broker's registration epoch, sent as the Fetch's replica epoch; -1 when unknown. */
  brokerEpoch?: number;
  /** The broker this fetcher pulls from. */
  leaderId: number;
  maxWaitMs?: number;
  minBytes?: number;
  /** Bound on one fetch response (all partitions). */
  maxBytes?: number;
  partitionMaxBytes?: number;
  /** First retry delay after an error; doubles (with jitter) up to maxBackoffMs. */
  backoffMs?: number;
  maxBackoffMs?: number;
  /**
   * First retry delay (doubling like backoffMs) after the leader answered NOT_LEADER or
   * UNKNOWN_LEADER_EPOCH: it has usually not applied the leader change yet.
   */
  leaderChangeBackoffMs?: number;
  /** Deadline of one Fetch or OffsetForLeaderEpoch exchange, on top of maxWaitMs. */
  requestTimeoutMs?: number;
  /** How often at most a partition's HW is written to its checkpoint; 0 writes every change. */
  highWatermarkCheckpointIntervalMs?: number;
}

export type ParsedFollowerFetcherOptions = Readonly<Required<FollowerFetcherOptions>>;

export function parseFollowerFetcherOptions(options: FollowerFetcherOptions): ParsedFollowerFetcherOptions {
  const brokerId = int('brokerId', options?.brokerId, 0);
  const leaderId = int('leaderId', options.leaderId, 0);
  if (leaderId === brokerId) throw invalid(`a follower fetcher of broker ${brokerId} cannot fetch from itself`);
  const maxBytes = int('maxBytes', options.maxBytes ?? DEFAULT_REPLICA_FETCH_MAX_BYTES, 1);
  const partitionMaxBytes = int('partitionMaxBytes', options.partitionMaxBytes ?? DEFAULT_REPLICA_FETCH_PARTITION_MAX_BYTES, 1);
  const backoffMs = int('backoffMs', options.backoffMs ?? DEFAULT_REPLICA_FETCH_BACKOFF_MS, 0);
  const maxBackoffMs = int('maxBackoffMs', options.maxBackoffMs ?? DEFAULT_REPLICA_FETCH_MAX_BACKOFF_MS, 0);
  if (maxBackoffMs < backoffMs) throw invalid(`maxBackoffMs ${maxBackoffMs} is below backoffMs ${backoffMs}`);
  return Object.freeze({
    brokerId,
    brokerEpoch: options.brokerEpoch === undefined ? -1 : int('brokerEpoch', options.brokerEpoch, -1),
    leaderId,
    maxWaitMs: int('maxWaitMs', options.maxWaitMs ?? DEFAULT_REPLICA_FETCH_MAX_WAIT_MS, 0),
    minBytes: int('minBytes', options.minBytes ?? DEFAULT_REPLICA_FETCH_MIN_BYTES, 0),
    maxBytes,
    partitionMaxBytes: Math.min(partitionMaxBytes, maxBytes),
    backoffMs,
    maxBackoffMs,
    leaderChangeBackoffMs: Math.min(backoffMs, int('leaderChangeBackoffMs', options.leaderChangeBackoffMs ?? DEFAULT_REPLICA_FETCH_LEADER_CHANGE_BACKOFF_MS, 0)),
    requestTimeoutMs: int('requestTimeoutMs', options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS, 1),
    highWatermarkCheckpointIntervalMs: int(
      'highWatermarkCheckpointIntervalMs',
      options.highWatermarkCheckpointIntervalMs ?? DEFAULT_HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS,
      0,
    ),
  });
}
