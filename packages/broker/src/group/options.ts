import { MqError } from '@mq/protocol/errors';
import { MAX_TIMER_MS } from '../request-limits.js';

/** The internal topic that holds committed offsets and group metadata. */
export const OFFSETS_TOPIC = '__consumer_offsets';

export const DEFAULT_OFFSETS_TOPIC_PARTITIONS = 50;
export const DEFAULT_GROUP_MIN_SESSION_TIMEOUT_MS = 6_000;
export const DEFAULT_GROUP_MAX_SESSION_TIMEOUT_MS = 1_800_000;
export const DEFAULT_GROUP_INITIAL_REBALANCE_DELAY_MS = 3_000;
export const DEFAULT_GROUP_MAX_SIZE = 10_000;
export const DEFAULT_OFFSETS_RETENTION_MS = 7 * 24 * 3_600_000;
export const DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600_000;
export const DEFAULT_OFFSET_METADATA_MAX_BYTES = 4_096;
export const DEFAULT_OFFSETS_LOAD_BUFFER_BYTES = 5 * 1024 * 1024;
export const DEFAULT_MAX_GROUPS = 100_000;
/**
 * New groups are created only while the coordinator holds fewer than this
 * share of maxGroups (90,000 of 100,000 by default). The rest is a reserve
 * for existing groups: those loaded from `__consumer_offsets` when this
 * broker takes over partitions (never refused) still fit.
 */
export const DEFAULT_GROUP_CREATE_LIMIT_RATIO = 0.9;
/** An empty group with no committed offsets is removed after this long (Kafka keeps it for offsets.retention). */
export const DEFAULT_GROUP_EMPTY_RETENTION_MS = 60_000;
/** New groups one connection may create per second (a token bucket)... */
export const DEFAULT_GROUP_CREATE_RATE_PER_CONNECTION = 10;
/** ...and at once after being idle. */
export const DEFAULT_GROUP_CREATE_BURST_PER_CONNECTION = 100;
/** Bytes of member data (ids, subscriptions, assignments) one DescribeGroups answer may carry. */
export const DEFAULT_DESCRIBE_GROUPS_MAX_BYTES = 16 * 1024 * 1024;

export interface GroupCoordinatorOptions {
  /** Partitions of `__consumer_offsets` (fixed once the topic exists). */
  offsetsTopicPartitions?: number;
  groupMinSessionTimeoutMs?: number;
  groupMaxSessionTimeoutMs?: number;
  /** How long the first rebalance of an empty group waits for more members (0 disables). */
  groupInitialRebalanceDelayMs?: number;
  /** Most members (joined or pending) one group may have. */
  groupMaxSize?: number;
  /** Most groups one coordinator holds. */
  maxGroups?: number;
  /** New groups are refused (GROUP_LIMIT_REACHED) once the coordinator holds this many; default 90% of maxGroups. */
  groupCreateLimit?: number;
  /** An empty group with no members and no committed offsets is removed after this long (checked as often). */
  groupEmptyRetentionMs?: number;
  /** New groups one connection may create per second; past it GROUP_CREATE_THROTTLED. */
  groupCreateRatePerConnection?: number;
  /** New groups one idle connection may create at once. */
  groupCreateBurstPerConnection?: number;
  /** Offsets of a group that has been empty this long expire. */
  offsetsRetentionMs?: number;
  offsetsRetentionCheckIntervalMs?: number;
  /** Largest metadata string a commit may carry (UTF-8 bytes). */
  offsetMetadataMaxBytes?: number;
  /** Bytes read per step while loading a partition of the offsets topic. */
  offsetsLoadBufferBytes?: number;
  /** Bytes of member data one DescribeGroups answer may carry; groups past it are answered MESSAGE_TOO_LARGE, not described. */
  describeGroupsMaxBytes?: number;
}

export type ParsedGroupCoordinatorOptions = Readonly<Required<GroupCoordinatorOptions>>;

function positiveInt(name: string, v: number | undefined, fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (v === undefined) return fallback;
  if (!Number.isSafeInteger(v) || v < min || v > max) {
    throw new MqError('INVALID_CONFIG', `${name} must be an integer in [${min}, ${max}], got ${String(v)}`);
  }
  return v;
}

/** A duration a timer waits for: at most 2^31-1 ms (a longer Node timer fires after 1 ms). */
function timerMs(name: string, v: number | undefined, fallback: number, min = 1): number {
  return positiveInt(name, v, fallback, min, MAX_TIMER_MS);
}

export function parseGroupCoordinatorOptions(options: GroupCoordinatorOptions = {}): ParsedGroupCoordinatorOptions {
  const maxGroups = positiveInt('maxGroups', options.maxGroups, DEFAULT_MAX_GROUPS);
  const parsed = {
    offsetsTopicPartitions: positiveInt('offsetsTopicPartitions', options.offsetsTopicPartitions, DEFAULT_OFFSETS_TOPIC_PARTITIONS),
    groupMinSessionTimeoutMs: timerMs('groupMinSessionTimeoutMs', options.groupMinSessionTimeoutMs, DEFAULT_GROUP_MIN_SESSION_TIMEOUT_MS),
    groupMaxSessionTimeoutMs: timerMs('groupMaxSessionTimeoutMs', options.groupMaxSessionTimeoutMs, DEFAULT_GROUP_MAX_SESSION_TIMEOUT_MS),
    groupInitialRebalanceDelayMs: timerMs(
      'groupInitialRebalanceDelayMs',
      options.groupInitialRebalanceDelayMs,
      DEFAULT_GROUP_INITIAL_REBALANCE_DELAY_MS,
      0,
    ),
    groupMaxSize: positiveInt('groupMaxSize', options.groupMaxSize, DEFAULT_GROUP_MAX_SIZE),
    maxGroups,
    groupCreateLimit: positiveInt(
      'groupCreateLimit',
      options.groupCreateLimit,
      Math.max(1, Math.floor(maxGroups * DEFAULT_GROUP_CREATE_LIMIT_RATIO)),
      1,
      maxGroups,
    ),
    groupEmptyRetentionMs: timerMs('groupEmptyRetentionMs', options.groupEmptyRetentionMs, DEFAULT_GROUP_EMPTY_RETENTION_MS),
    groupCreateRatePerConnection: positiveInt(
      'groupCreateRatePerConnection',
      options.groupCreateRatePerConnection,
      DEFAULT_GROUP_CREATE_RATE_PER_CONNECTION,
    ),
    groupCreateBurstPerConnection: positiveInt(
      'groupCreateBurstPerConnection',
      options.groupCreateBurstPerConnection,
      DEFAULT_GROUP_CREATE_BURST_PER_CONNECTION,
    ),
    offsetsRetentionMs: positiveInt('offsetsRetentionMs', options.offsetsRetentionMs, DEFAULT_OFFSETS_RETENTION_MS),
    offsetsRetentionCheckIntervalMs: timerMs(
      'offsetsRetentionCheckIntervalMs',
      options.offsetsRetentionCheckIntervalMs,
      DEFAULT_OFFSETS_RETENTION_CHECK_INTERVAL_MS,
    ),
    offsetMetadataMaxBytes: positiveInt('offsetMetadataMaxBytes', options.offsetMetadataMaxBytes, DEFAULT_OFFSET_METADATA_MAX_BYTES, 0),
    offsetsLoadBufferBytes: positiveInt('offsetsLoadBufferBytes', options.offsetsLoadBufferBytes, DEFAULT_OFFSETS_LOAD_BUFFER_BYTES, 1024),
    describeGroupsMaxBytes: positiveInt('describeGroupsMaxBytes', options.describeGroupsMaxBytes, DEFAULT_DESCRIBE_GROUPS_MAX_BYTES, 1024),
  };
  if (parsed.groupMinSessionTimeoutMs > parsed.groupMaxSessionTimeoutMs) {
    throw new MqError(
      'INVALID_CONFIG',
      `groupMinSessionTimeoutMs (${parsed.groupMinSessionTimeoutMs}) is above groupMaxSessionTimeoutMs (${parsed.groupMaxSessionTimeoutMs})`,
    );
  }
  return Object.freeze(parsed);
}

/**
 * Reads the coordinator's options from broker config keys (Kafka's names),
 * e.g. `group.initial.rebalance.delay.ms`. Unknown keys are ignored; bad
 * values are an INVALID_CONFIG error.
 */
export function groupOptionsFromConfig(config: Readonly<Record<string, string>>): GroupCoordinatorOptions {
  const keys: Record<string, keyof GroupCoordinatorOptions> = {
    'offsets.topic.num.partitions': 'offsetsTopicPartitions',
    'group.min.session.timeout.ms': 'groupMinSessionTimeoutMs',
    'group.max.session.timeout.ms': 'groupMaxSessionTimeoutMs',
    'group.initial.rebalance.delay.ms': 'groupInitialRebalanceDelayMs',
    'group.max.size': 'groupMaxSize',
    'offsets.retention.minutes': 'offsetsRetentionMs',
    'offsets.retention.ms': 'offsetsRetentionMs',
    'offsets.retention.check.interval.ms': 'offsetsRetentionCheckIntervalMs',
    'offset.metadata.max.bytes': 'offsetMetadataMaxBytes',
    'group.max.groups': 'maxGroups',
    'group.create.limit': 'groupCreateLimit',
    'group.empty.retention.ms': 'groupEmptyRetentionMs',
    'group.create.rate.per.connection': 'groupCreateRatePerConnection',
    'group.create.burst.per.connection': 'groupCreateBurstPerConnection',
  };
  const out: GroupCoordinatorOptions = {};
  for (const [key, field] of Object.entries(keys)) {
    const raw = config[key];
    if (raw === undefined) continue;
    if (key === 'group.create.limit' && raw === '0') continue; // 0: the default share of maxGroups
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new MqError('INVALID_CONFIG', `${key} must be a number, got "${raw}"`);
    out[field] = key === 'offsets.retention.minutes' ? n * 60_000 : n;
  }
  return out;
}
