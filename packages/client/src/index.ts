export { MqClient } from './client.js';
export { Admin } from './admin.js';
export { Producer } from './producer/index.js';
export { Consumer } from './consumer/index.js';
export { GroupConsumer } from './group/group-consumer.js';
export { GroupAdmin } from './group/group-admin.js';
export { cooperativeStickyAssignor, rangeAssignor, roundRobinAssignor, stickyAssignor } from './group/index.js';
export { Retrier } from './retrier.js';
export { defaultPartitioner, murmur2, murmur2Partition, toPositive } from './partitioner.js';
export { DIAGNOSTICS_CHANNELS, subscribeDiagnostics, unsubscribeDiagnostics } from './diagnostics.js';
export { MqError, isMqError } from '@mq/protocol/errors';

export type {
  Acl,
  AclFilter,
  AclOperation,
  AclResourceType,
  AdminCallOptions,
  ClusterDescription,
  ConfigChange,
  ConfigEntry,
  ConfigResource,
  DeletedRecords,
  ListedOffset,
  NewTopic,
  OffsetSpec,
  RecordsToDelete,
  ScramMechanismName,
  TopicResult,
  UserDescription,
  Watermarks,
  // ---- scaleout
  AddingReplicaProgress,
  DecommissionResult,
  OngoingReassignment,
  BrokerLogDir,
  PartitionOutcome,
  PartitionReassignment,
  // ---- quotas
  ClientQuota,
  ClientQuotaAlteration,
  ClientQuotaEntity,
  ClientQuotaKey,
  // ---- controller quorum membership
  QuorumDescription,
  QuorumMember,
  QuorumMembership,
} from './admin.js';
export type { BrokerDescription, ClientComponents, PartitionDescription, TopicDescription } from './cluster.js';
export type { ClientSocket, ConnectFn, ConnectionOptions } from './connection.js';
export type { ClientOptions, OAuthBearerOptions, SaslOptions, TlsOptions } from './options.js';
export type {
  FetchMessage,
  ProduceBatchMessage,
  RebalanceMessage,
  RequestEndMessage,
  RequestStartMessage,
  RetryMessage,
  DiagnosticsListener,
} from './diagnostics.js';
export type { Acks, AcksInput } from '@mq/protocol/acks';
export type {
  Bytes,
  FlushOptions,
  HeadersInput,
  ProducerOptions,
  ProducerRecord,
  ProducerStats,
  RecordMetadata,
  ConsumerGroupMetadata,
  TransactionOffset,
  TransactionState,
} from './producer/index.js';
export type {
  AutoOffsetReset,
  ConsumerOptions,
  ConsumerPending,
  ConsumerRecord,
  IsolationLevel,
  PollOptions,
  RecordHeader,
  TopicPartition,
  TopicPartitionOffset,
} from './consumer/index.js';
export type { Partitioner, PartitionerContext } from './partitioner.js';
export type {
  DeliverySemantics,
  EachBatchPayload,
  EachMessagePayload,
  GroupConsumerOptions,
  RunOptions,
} from './group/group-consumer.js';
export type { GroupDescription, GroupMemberDescription, GroupPartitionLag, ListedGroup, ResetResult, ResetSpec } from './group/group-admin.js';
export type { CommittedOffset, OffsetAndMetadata, TopicPartitionOffsetAndMetadata } from './group/coordinator-client.js';
export type { Assignor, AssignorMember, RebalanceListener } from './group/index.js';
export type { RetryOptions } from './retrier.js';
export type { ErrorCode } from '@mq/protocol/errors';
// ---- scaleout
export { planRebalance } from './balance-plan.js';
export type { PlanBroker, PlanPartition, PlannedReassignment, RebalancePlan } from './balance-plan.js';
export { createKeySalter, unsaltKey, SALT_SEPARATOR } from './key-salting.js';
export type { KeySalter, KeySalterOptions } from './key-salting.js';
