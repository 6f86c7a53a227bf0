export { PartitionLeader, createPartitionLeader } from './partition-leader.js';
export { FollowerFetcher, createFollowerFetcher, truncateFullyAndStartAt } from './follower-fetcher.js';
export { handleFetch, ParkedFetches } from './fetch-handler.js';
export { ThrottleBucket } from './throttle-bucket.js';
export { handleOffsetForLeaderEpoch } from './offset-for-leader-epoch-handler.js';
export { FileCheckpoint } from './file-checkpoint.js';
export { endOffsetForEpoch, latestEpoch, truncationTarget } from './epoch-cache.js';
export {
  DEFAULT_MAX_PENDING_FETCHES,
  DEFAULT_MAX_PENDING_PRODUCES,
  DEFAULT_MIN_INSYNC_REPLICAS,
  DEFAULT_REPLICA_FETCH_BACKOFF_MS,
  DEFAULT_REPLICA_FETCH_MAX_BACKOFF_MS,
  DEFAULT_REPLICA_FETCH_MAX_BYTES,
  DEFAULT_REPLICA_FETCH_MAX_WAIT_MS,
  DEFAULT_REPLICA_FETCH_MIN_BYTES,
  DEFAULT_REPLICA_FETCH_PARTITION_MAX_BYTES,
  DEFAULT_REPLICA_LAG_TIME_MAX_MS,
  DEFAULT_REQUEST_TIMEOUT_MS,
  parseFollowerFetcherOptions,
  parsePartitionLeaderOptions,
} from './options.js';
export { CONSUMER_REPLICA_ID, UNDEFINED } from './types.js';

export type { LeaderAppendOptions, LeaderAppendResult, PartitionLeaderComponents, ReplicaStatus } from './partition-leader.js';
export type {
  FollowerFetcherComponents,
  FollowerPartitionOptions,
  FollowerPartitionState,
  FollowerPartitionStatus,
} from './follower-fetcher.js';
export type { HandleFetchComponents, LeaderLookup, StepSlicer } from './fetch-handler.js';
export type { TruncationTarget } from './epoch-cache.js';
export type {
  FollowerFetcherOptions,
  ParsedFollowerFetcherOptions,
  ParsedPartitionLeaderOptions,
  PartitionLeaderOptions,
} from './options.js';
export type {
  AlterPartitionFn,
  AlterPartitionRequest,
  EpochEndOffset,
  EpochEntry,
  FetchFn,
  FetchPartitionRequest,
  FetchPartitionResponse,
  FetchRequest,
  FetchResponse,
  HighWatermarkCheckpoint,
  OffsetForLeaderEpochFn,
  OffsetForLeaderEpochPartitionRequest,
  OffsetForLeaderEpochPartitionResponse,
  OffsetForLeaderEpochRequest,
  OffsetForLeaderEpochResponse,
  PartitionState,
  ReplicaAppendResult,
  ReplicaEpochCache,
  ReplicaLog,
  ReadPool,
} from './types.js';
