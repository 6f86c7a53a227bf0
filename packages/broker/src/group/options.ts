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
  /** Most groups one coordinator holds; new groups beyond it are refused. */
  maxGroups?: number;
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
    maxGroups: positiveInt('maxGroups', options.maxGroups, DEFAULT_MAX_GROUPS),
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
  };
  const out: GroupCoordinatorOptions = {};
  for (const [key, field] of Object.entries(keys)) {
    const raw = config[key];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (!Number.isFinite(n)) throw new MqError('INVALID_CONFIG', `${key} must be a number, got "${raw}"`);
    out[field] = key === 'offsets.retention.minutes' ? n * 60_000 : n;
  }
  return out;
}
