/**
 * The cluster HTTP backend's options: how long a record request waits for a
 * partition's leader, the acks=all produce timeout it sends, and how long a
 * describe waits for other leaders' watermarks.
 */
import type { BrokerConfig } from '../../../config/broker-config.js';

export interface ClusterBackendOptions {
  brokerId: number;
  config: BrokerConfig;
  /** How long a record request waits for a partition's leader to appear, move or become reachable. Default: broker.session.timeout.ms + 5 s, at most 30 s. */
  leaderWaitMs?: number;
  /** acks=all produce timeout sent to the leader. Default 30000 (as the wire default). */
  produceTimeoutMs?: number;
  /** How long describe waits for remote leaders' watermarks before leaving them out. Default 2000. */
  describeTimeoutMs?: number;
}

export const DEFAULT_LEADER_WAIT_MS = 5000;
export const MAX_LEADER_WAIT_MS = 30_000;
export const DEFAULT_PRODUCE_TIMEOUT_MS = 30_000;
export const DEFAULT_DESCRIBE_TIMEOUT_MS = 2000;

export type ParsedClusterBackendOptions = Readonly<Required<ClusterBackendOptions>>;

export function parseClusterBackendOptions(o: ClusterBackendOptions): ParsedClusterBackendOptions {
  return {
    brokerId: o.brokerId,
    config: o.config,
    leaderWaitMs: o.leaderWaitMs ?? Math.min(MAX_LEADER_WAIT_MS, o.config.int('broker.session.timeout.ms') + DEFAULT_LEADER_WAIT_MS),
    produceTimeoutMs: o.produceTimeoutMs ?? DEFAULT_PRODUCE_TIMEOUT_MS,
    describeTimeoutMs: o.describeTimeoutMs ?? DEFAULT_DESCRIBE_TIMEOUT_MS,
  };
}
