import { MqError } from '@mq/protocol/errors';
import type { Assignor } from './types.js';

export const DEFAULT_SESSION_TIMEOUT_MS = 45_000;
export const DEFAULT_REBALANCE_TIMEOUT_MS = 300_000;
export const DEFAULT_HEARTBEAT_INTERVAL_MS = 3_000;
export const DEFAULT_MAX_POLL_INTERVAL_MS = 300_000;
export const DEFAULT_PARTITION_ASSIGNERS: readonly string[] = ['cooperative-sticky'];
export const DEFAULT_RETRY_BACKOFF_MS = 100;
export const DEFAULT_MAX_RETRY_BACKOFF_MS = 1_000;
export const DEFAULT_METADATA_MAX_AGE_MS = 300_000;

export interface GroupMemberOptions {
  groupId: string;
  /** Static membership: a stable id per instance (e.g. the host name); restarts within the session timeout keep the assignment. */
  groupInstanceId?: string;
  sessionTimeoutMs?: number;
  /** How long the coordinator waits for members to rejoin in a rebalance (defaults to maxPollIntervalMs). */
  rebalanceTimeoutMs?: number;
  heartbeatIntervalMs?: number;
  /**
   * Longest time between two polls before the member leaves the group so its
   * partitions go to a live consumer (0 disables the check).
   */
  maxPollIntervalMs?: number;
  /** Assignment strategies in preference order: names (range, roundrobin, sticky, cooperative-sticky) or custom assignors. */
  partitionAssigners?: ReadonlyArray<string | Assignor>;
  retryBackoffMs?: number;
  maxRetryBackoffMs?: number;
  /** How often pattern subscriptions and partition counts are checked for changes. */
  metadataMaxAgeMs?: number;
  rack?: string;
}

export interface ParsedGroupMemberOptions {
  readonly groupId: string;
  readonly groupInstanceId: string | null;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly heartbeatIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly partitionAssigners: ReadonlyArray<string | Assignor>;
  readonly retryBackoffMs: number;
  readonly maxRetryBackoffMs: number;
  readonly metadataMaxAgeMs: number;
  readonly rack: string;
}

function int(name: string, v: number | undefined, fallback: number, min: number): number {
  const x = v ?? fallback;
  if (!Number.isSafeInteger(x) || x < min) throw new MqError('INVALID_ARGUMENT', `${name} must be an integer >= ${min}, got ${String(v)}`);
  return x;
}

export function parseGroupMemberOptions(options: GroupMemberOptions): ParsedGroupMemberOptions {
  if (typeof options.groupId !== 'string' || options.groupId === '') {
    throw new MqError('INVALID_ARGUMENT', 'groupId must be a non-empty string');
  }
  if (options.groupInstanceId !== undefined && (typeof options.groupInstanceId !== 'string' || options.groupInstanceId === '')) {
    throw new MqError('INVALID_ARGUMENT', 'groupInstanceId must be a non-empty string when set');
  }
  const maxPollIntervalMs = int('maxPollIntervalMs', options.maxPollIntervalMs, DEFAULT_MAX_POLL_INTERVAL_MS, 0);
  const parsed: ParsedGroupMemberOptions = {
    groupId: options.groupId,
    groupInstanceId: options.groupInstanceId ?? null,
    sessionTimeoutMs: int('sessionTimeoutMs', options.sessionTimeoutMs, DEFAULT_SESSION_TIMEOUT_MS, 1),
    rebalanceTimeoutMs: int('rebalanceTimeoutMs', options.rebalanceTimeoutMs, maxPollIntervalMs || DEFAULT_REBALANCE_TIMEOUT_MS, 1),
    heartbeatIntervalMs: int('heartbeatIntervalMs', options.heartbeatIntervalMs, DEFAULT_HEARTBEAT_INTERVAL_MS, 1),
    maxPollIntervalMs,
    partitionAssigners: [...(options.partitionAssigners ?? DEFAULT_PARTITION_ASSIGNERS)],
    retryBackoffMs: int('retryBackoffMs', options.retryBackoffMs, DEFAULT_RETRY_BACKOFF_MS, 0),
    maxRetryBackoffMs: int('maxRetryBackoffMs', options.maxRetryBackoffMs, DEFAULT_MAX_RETRY_BACKOFF_MS, 0),
    metadataMaxAgeMs: int('metadataMaxAgeMs', options.metadataMaxAgeMs, DEFAULT_METADATA_MAX_AGE_MS, 1),
    rack: options.rack ?? '',
  };
  if (parsed.heartbeatIntervalMs >= parsed.sessionTimeoutMs) {
    throw new MqError(
      'INVALID_ARGUMENT',
      `heartbeatIntervalMs (${parsed.heartbeatIntervalMs}) must be below sessionTimeoutMs (${parsed.sessionTimeoutMs}); a third of it is usual`,
    );
  }
  if (parsed.maxRetryBackoffMs < parsed.retryBackoffMs) {
    throw new MqError('INVALID_ARGUMENT', `maxRetryBackoffMs (${parsed.maxRetryBackoffMs}) must be >= retryBackoffMs (${parsed.retryBackoffMs})`);
  }
  return Object.freeze(parsed);
}
