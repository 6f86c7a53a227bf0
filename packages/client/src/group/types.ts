import type { mq } from '@mq/protocol/wire';

export interface TopicPartition {
  topic: string;
  partition: number;
}

/** A member as the leader's assignor sees it (decoded from its JoinGroup metadata). */
export interface AssignorMember {
  memberId: string;
  groupInstanceId: string | null;
  /** Topics the member subscribes to. */
  topics: readonly string[];
  /** Partitions the member owned in `generationId` (sent with cooperative and sticky protocols). */
  ownedPartitions: readonly TopicPartition[];
  /** Generation of the owned partitions, -1 when unknown. */
  generationId: number;
  userData?: Uint8Array;
}

export type RebalanceProtocol = 'eager' | 'cooperative';

/**
 * A partition assignment strategy, run by the group's leader member only
 * (so new strategies need no broker change). Pure: same input, same output.
 */
export interface Assignor {
  readonly name: string;
  /** Rebalance protocols the strategy supports; a group is cooperative only when every configured assignor supports it. */
  readonly protocols: readonly RebalanceProtocol[];
  assign(
    members: readonly AssignorMember[],
    partitionCounts: ReadonlyMap<string, number>,
    context?: AssignmentContext,
  ): Map<string, TopicPartition[]>;
}

export interface AssignmentContext {
  /** The rebalance protocol the group runs (the leader's). */
  protocol: RebalanceProtocol;
}

/** What the application hears of rebalances. Listeners run before the member carries on; errors are logged and surfaced. */
export interface RebalanceListener {
  /** Partitions newly given to this member (all of them with eager; only the added ones with cooperative). */
  onPartitionsAssigned?(partitions: TopicPartition[]): void | Promise<void>;
  /** Partitions taken away in an orderly rebalance: commit their progress here. */
  onPartitionsRevoked?(partitions: TopicPartition[]): void | Promise<void>;
  /** Partitions lost without a rebalance (session expired, fenced): others may own them already; do not commit. */
  onPartitionsLost?(partitions: TopicPartition[]): void | Promise<void>;
}

/**
 * The group requests as the member sends them. The client routes each to the
 * group's coordinator (FindCoordinator) and re-routes after NOT_COORDINATOR;
 * protocol-level errors come back in the responses' error codes.
 */
export interface GroupRpc {
  joinGroup(req: mq.JoinGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.JoinGroupResponse.$Properties>;
  syncGroup(req: mq.SyncGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.SyncGroupResponse.$Properties>;
  heartbeat(req: mq.HeartbeatRequest.$Properties, signal?: AbortSignal): Promise<mq.HeartbeatResponse.$Properties>;
  leaveGroup(req: mq.LeaveGroupRequest.$Properties, signal?: AbortSignal): Promise<mq.LeaveGroupResponse.$Properties>;
  /** Called after NOT_COORDINATOR / COORDINATOR_NOT_AVAILABLE so the next request looks the coordinator up again. */
  coordinatorLost?(): void;
}

/** Topic metadata the member needs: partition counts (the leader) and topic names (pattern subscriptions). */
export interface GroupMetadataSource {
  /** Partition counts of the topics that exist among `topics`. */
  partitionCounts(topics: readonly string[], signal?: AbortSignal): Promise<Map<string, number>>;
  /** Names of every (non-internal) topic. */
  listTopics(signal?: AbortSignal): Promise<string[]>;
}

export type MemberState = 'unjoined' | 'joining' | 'syncing' | 'stable' | 'failed' | 'closed';

/** The generation a member commits offsets with. */
export interface Generation {
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolName: string;
}
