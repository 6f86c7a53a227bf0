export { GroupMember } from './group-member.js';
export {
  BUILTIN_ASSIGNORS,
  cooperativeStickyAssignor,
  rangeAssignor,
  rebalanceProtocolOf,
  resolveAssignors,
  roundRobinAssignor,
  stickyAssignor,
} from './assignors/index.js';
export {
  CONSUMER_PROTOCOL_TYPE,
  decodeAssignment,
  decodeSubscription,
  encodeAssignment,
  encodeSubscription,
  groupByTopic,
} from './consumer-protocol.js';
export {
  DEFAULT_HEARTBEAT_INTERVAL_MS,
  DEFAULT_MAX_POLL_INTERVAL_MS,
  DEFAULT_PARTITION_ASSIGNERS,
  DEFAULT_SESSION_TIMEOUT_MS,
  parseGroupMemberOptions,
} from './options.js';
export { ManualTime, systemTimers } from '@mq/protocol/components';

export type { GroupMemberComponents } from './group-member.js';
export type { Subscription } from './consumer-protocol.js';
export type { GroupMemberOptions, ParsedGroupMemberOptions } from './options.js';
export type { Clock, Logger, TimerHandle, Timers } from '@mq/protocol/components';
export type {
  AssignmentContext,
  Assignor,
  AssignorMember,
  Generation,
  GroupMetadataSource,
  GroupRpc,
  MemberState,
  RebalanceListener,
  RebalanceProtocol,
  TopicPartition,
} from './types.js';
