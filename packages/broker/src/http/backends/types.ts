/**
 * What the HTTP topic and record routes need from "the topics": the
 * cluster's (metadata through the controller, records on each partition's
 * leader; http/backends/cluster/), a one-node cluster's too. The routes
 * parse and shape JSON; the backend does the work and answers with typed
 * MqErrors, which the HTTP server turns into `{error: {...}}`.
 */
import type { Acks } from '@mq/protocol/acks';
import type { RequestBody } from '@mq/protocol/wire';
import type { RequestOf, ResponseOf } from '../../handlers/types.js';

export interface PartitionView {
  partition: number;
  /** -1 when the partition has no leader. */
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  /** Log start offset and high watermark, when known (the leader could be asked). */
  low?: number;
  high?: number;
  /** The partition cannot serve (log failed to open; no leader). */
  offline?: boolean;
  error?: string;
}

export interface TopicView {
  name: string;
  topicId: string;
  internal: boolean;
  partitionCount: number;
  replicationFactor: number;
  configs: Record<string, string>;
  partitions: PartitionView[];
}

export interface TopicSummaryView {
  name: string;
  internal: boolean;
  partitionCount: number;
  replicationFactor: number;
}

export interface CreateTopicInput {
  name: string;
  numPartitions?: number;
  replicationFactor?: number;
  configs: Record<string, unknown>;
}

/** What producing to a topic needs before any append: where records may go and how large a batch may be. */
export interface ProduceTarget {
  partitionCount: number;
  maxMessageBytes: number;
}

export interface ReadResult {
  /** Whole record batches from the one holding `offset`, none at or above the high watermark. */
  records: Buffer;
  /** The offset read from (the log start offset when none was asked for). */
  offset: number;
  low: number;
  high: number;
}

export interface TopicBackend {
  /** Shown by /health. */
  readonly mode: 'cluster';
  // ---- scaleout
  /** This broker's id. */
  readonly brokerId: number;
  /** One wire request to broker `id` (this broker: its own handler), for admin routes that answer what the wire API answers. */
  request<K extends RequestBody>(id: number, body: K, payload: RequestOf<K>): Promise<ResponseOf<K>>;
  createTopic(input: CreateTopicInput): Promise<{ topic: TopicView; warning?: string }>;
  listTopics(): Promise<TopicSummaryView[]>;
  describeTopic(name: string): Promise<TopicView>;
  deleteTopic(name: string): Promise<{ name: string; partitionCount: number }>;
  /** UNKNOWN_TOPIC_OR_PARTITION when the topic does not exist. */
  produceTarget(topic: string): Promise<ProduceTarget>;
  /**
   * Appends one encoded batch to a partition as its leader would (acks=-1:
   * answered once every in-sync replica has it and min.insync.replicas hold).
   * The batch is handed to the log (or sent to the leader) before this returns,
   * so calls made in order keep their order on one partition.
   */
  append(topic: string, partition: number, batch: Buffer, acks: Acks, options: { now: number; signal: AbortSignal }): Promise<{ baseOffset: number }>;
  /**
   * Reads committed records (below the high watermark) from `offset`, or from the log start when undefined;
   * with `maxWaitMs` > 0, waits up to that long for a first record when there is none yet (a long poll).
   */
  read(topic: string, partition: number, offset: number | undefined, maxBytes: number, signal: AbortSignal, maxWaitMs?: number): Promise<ReadResult>;
  watermarks(topic: string, partition: number, signal: AbortSignal): Promise<{ low: number; high: number }>;
}
