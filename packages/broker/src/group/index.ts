export { createGroupCoordinator, isGroupState } from './group-coordinator.js';
export { MemoryOffsetsLog } from './offsets-log.js';
export {
  DEFAULT_GROUP_INITIAL_REBALANCE_DELAY_MS,
  DEFAULT_GROUP_MAX_SESSION_TIMEOUT_MS,
  DEFAULT_GROUP_MIN_SESSION_TIMEOUT_MS,
  DEFAULT_OFFSETS_RETENTION_MS,
  DEFAULT_OFFSETS_TOPIC_PARTITIONS,
  OFFSETS_TOPIC,
  groupOptionsFromConfig,
  parseGroupCoordinatorOptions,
} from './options.js';
export { partitionForGroup } from './offsets-schema.js';
export { ManualTime, systemTimers } from '@mq/protocol/components';
export { GROUP_STATES } from './types.js';

export type { GroupCoordinator } from './group-coordinator.js';
export type { OffsetsLog } from './offsets-log.js';
export type { GroupCoordinatorOptions, ParsedGroupCoordinatorOptions } from './options.js';
export type { Clock, TimerHandle, Timers } from '@mq/protocol/components';
export type { GroupCoordinatorComponents, GroupState, GroupSummary, RequestContext, TopicView } from './types.js';
