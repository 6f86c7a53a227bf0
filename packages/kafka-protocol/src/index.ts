/**
 * @mq/kafka-protocol: Kafka's wire protocol for mq — framing, request and
 * response headers, and the codec of every message mq serves, generated from
 * schema/*.json by tools/gen-kafka.mjs. The message types are in
 * `@mq/kafka-protocol/messages`.
 */
export { API_BY_KEY, decodeRequest, decodeResponse, encodeRequest, encodeResponse, isFlexible, readRequestHeader } from './codec.js';
export { KAFKA_ERROR_CODES, MQ_TO_KAFKA_ERRORS, kafkaErrorCode, mqErrorCode } from './error-codes.js';
export { FrameSplitter } from './frames.js';
export { MalformedKafkaError, Reader } from './reader.js';
export { Writer, ZERO_COPY_MIN_BYTES } from './writer.js';
export {
  APIS,
  AlterConfigsApi,
  ApiVersionsApi,
  CreatePartitionsApi,
  CreateTopicsApi,
  DeleteGroupsApi,
  DeleteRecordsApi,
  DeleteTopicsApi,
  DescribeClusterApi,
  DescribeConfigsApi,
  DescribeGroupsApi,
  FetchApi,
  FindCoordinatorApi,
  HeartbeatApi,
  IncrementalAlterConfigsApi,
  InitProducerIdApi,
  JoinGroupApi,
  LeaveGroupApi,
  ListGroupsApi,
  ListOffsetsApi,
  MetadataApi,
  OffsetCommitApi,
  OffsetFetchApi,
  OffsetForLeaderEpochApi,
  ProduceApi,
  SyncGroupApi,
} from './gen/messages.js';
export type { ApiDef, Input } from './gen/messages.js';
export type { DecodedRequest, RequestHeader } from './codec.js';
export type { KafkaErrorName } from './error-codes.js';
