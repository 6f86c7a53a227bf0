import type { mq } from '@mq/protocol/wire';
import type { Clock, Logger, Timers } from '@mq/protocol/components';
import type { OffsetsLog } from './offsets-log.js';

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export const GROUP_STATES: readonly GroupState[] = ['Empty', 'PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead'];

/** What the coordinator needs to know about topics (from the broker's metadata and logs). */
export interface TopicView {
  /** Partition count of a topic, or undefined when it does not exist. */
  partitionCount(topic: string): number | undefined;
  /** The highest offset a consumer may commit for a partition (its high watermark), or undefined when unknown. */
  logEndOffset(topic: string, partition: number): number | undefined;
  /** The id of the topic's current incarnation, or undefined when it does not exist (or the view does not know ids). */
  topicId?(topic: string): string | undefined;
}

export interface GroupCoordinatorComponents {
  offsetsLog: OffsetsLog;
  topics: TopicView;
  clock?: Clock;
  timers?: Timers;
  logger?: Logger;
  /** Member ids for new members; `${clientId}-${uuid}` by default. */
  newMemberId?: (clientId: string) => string;
}

/** Who sent a request (from the connection). */
export interface RequestContext {
  clientId: string;
  clientHost: string;
  /** The connection the request came on: group creation is rate-limited per connection (absent: not limited). */
  connectionId?: number;
}

export interface CommittedOffset {
  offset: number;
  leaderEpoch: number;
  metadata: string;
  commitTimestamp: number;
  /** The topic's id when the offset was committed (absent in offsets written before topic ids were kept). */
  topicId?: string;
  /** Position of the record in `__consumer_offsets`: a later record wins. */
  logOffset: number;
}

/** A JSON-friendly view of a group for the HTTP API and the CLI. */
export interface GroupSummary {
  groupId: string;
  state: GroupState;
  protocolType: string;
  protocol: string;
  generationId: number;
  leader: string;
  members: Array<{
    memberId: string;
    groupInstanceId: string | null;
    clientId: string;
    clientHost: string;
    /** Decoded for protocol type "consumer"; empty otherwise. */
    assignment: Array<{ topic: string; partitions: number[] }>;
  }>;
  offsets: Array<{
    topic: string;
    partition: number;
    committedOffset: number;
    logEndOffset: number | null;
    lag: number | null;
    metadata: string;
    owner: string | null;
  }>;
}

export type JoinGroupRequest = mq.JoinGroupRequest.$Properties;
export type JoinGroupResponse = mq.JoinGroupResponse.$Properties;
export type SyncGroupRequest = mq.SyncGroupRequest.$Properties;
export type SyncGroupResponse = mq.SyncGroupResponse.$Properties;
export type HeartbeatRequest = mq.HeartbeatRequest.$Properties;
export type HeartbeatResponse = mq.HeartbeatResponse.$Properties;
export type LeaveGroupRequest = mq.LeaveGroupRequest.$Properties;
export type LeaveGroupResponse = mq.LeaveGroupResponse.$Properties;
export type OffsetCommitRequest = mq.OffsetCommitRequest.$Properties;
export type OffsetCommitResponse = mq.OffsetCommitResponse.$Properties;
export type OffsetFetchRequest = mq.OffsetFetchRequest.$Properties;
export type OffsetFetchResponse = mq.OffsetFetchResponse.$Properties;
export type ListGroupsRequest = mq.ListGroupsRequest.$Properties;
export type ListGroupsResponse = mq.ListGroupsResponse.$Properties;
export type DescribeGroupsRequest = mq.DescribeGroupsRequest.$Properties;
export type DescribeGroupsResponse = mq.DescribeGroupsResponse.$Properties;
export type DeleteGroupsRequest = mq.DeleteGroupsRequest.$Properties;
export type DeleteGroupsResponse = mq.DeleteGroupsResponse.$Properties;
