/**
 * What the active controller checks before it proposes a command, beyond
 * the fixed rules `decodeCommand` applies: the limits of this cluster's
 * configuration against the metadata as it is now. Every command that adds
 * partitions (CreateTopics, CreatePartitions, the broker's own internal
 * topics, a forwarded command) passes here, so a partition count is never
 * committed that the brokers cannot host: applying one command costs a
 * broker at most `max.partitions.per.request` partitions' worth of logs,
 * and the whole cluster at most `max.partition.replicas.per.broker` replicas
 * per live broker.
 */
import { MqError } from '@mq/protocol/errors';
import { decodeCommand, encodeCommand, type MetadataCommand } from './commands.js';
import { mergeTopicConfigs } from '../config/alter-topic-configs.js';
import type { MetadataState } from './metadata-state.js';

export interface CommandLimits {
  /** topic.max.partitions: the largest partition count of one topic. */
  readonly maxPartitionsPerTopic: number;
  /** max.partitions.per.request: the most partitions one command may add. */
  readonly maxPartitionsPerRequest: number;
  /** max.partition.replicas.per.broker: the cluster's budget is this times its live brokers. */
  readonly maxReplicasPerBroker: number;
  /** max.frame.bytes: a topic's max.message.bytes must fit in a frame. */
  readonly maxFrameBytes: number;
}

export const DEFAULT_MAX_PARTITIONS_PER_TOPIC = 10_000;
/**
 * Measured (bench/partition-cost.mjs, one broker, RF 1, a loaded 2-core VM): 1000 partitions in one
 * CreateTopics cost the broker ~33 s until all were led, +40 MiB RSS, ~2.5 open files and ~4 files per
 * partition; 10,000 did not finish within 10 minutes (the process's 20,000 file descriptors).
 */
export const DEFAULT_MAX_PARTITIONS_PER_REQUEST = 1000;
/** About 10,000 open files per broker at ~2.5 per replica (Kafka's guidance is a few thousand per broker). */
export const DEFAULT_MAX_REPLICAS_PER_BROKER = 4000;
export const DEFAULT_MAX_FRAME_BYTES = 16 * 1024 * 1024;

export const DEFAULT_COMMAND_LIMITS: CommandLimits = Object.freeze({
  maxPartitionsPerTopic: DEFAULT_MAX_PARTITIONS_PER_TOPIC,
  maxPartitionsPerRequest: DEFAULT_MAX_PARTITIONS_PER_REQUEST,
  maxReplicasPerBroker: DEFAULT_MAX_REPLICAS_PER_BROKER,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
});

/** Whether a command adds partitions (the controller proposes those one at a time, so budgets hold under concurrency). */
export function addsPartitions(cmd: MetadataCommand): boolean {
  return cmd.type === 'createTopic' || cmd.type === 'createPartitions';
}

/** Throws the MqError a client should see when `cmd` breaks a limit of this cluster; returns when it may be proposed. */
export function checkCommandLimits(cmd: MetadataCommand, md: MetadataState, limits: CommandLimits): void {
  if (cmd.type === 'createTopic') {
    if (!md.topic(cmd.name)) {
      const clash = md.collidingTopic(cmd.name);
      if (clash) throw new MqError('INVALID_TOPIC', `topic "${cmd.name}" collides with existing topic "${clash}": '.' and '_' are the same in metric names`);
    }
    checkTopicConfigLimits(cmd.configs, cmd.replicationFactor, limits);
    checkPartitions(cmd.name, cmd.numPartitions, cmd.numPartitions, cmd.replicationFactor, md, limits);
  } else if (cmd.type === 'alterTopicConfigs') {
    const t = md.topic(cmd.name);
    if (!t) return; // the state machine answers UNKNOWN_TOPIC_OR_PARTITION
    checkTopicConfigLimits(mergeTopicConfigs(t.configs, cmd.set, cmd.delete), t.partitions[0]?.replicas.length ?? 1, limits);
  } else if (cmd.type === 'createPartitions') {
    const t = md.topic(cmd.name);
    if (!t) return; // the state machine answers UNKNOWN_TOPIC_OR_PARTITION
    const rf = t.partitions[0]?.replicas.length ?? 1;
    checkPartitions(cmd.name, cmd.count, cmd.count - t.partitions.length, rf, md, limits);
  }
}

/** A topic's own configs against the cluster's limits and its replication factor (at creation and at every change). */
function checkTopicConfigLimits(configs: Readonly<Record<string, string>>, replicationFactor: number, limits: CommandLimits): void {
  const maxMessage = configs['max.message.bytes'];
  if (maxMessage !== undefined && Number(maxMessage) > limits.maxFrameBytes - 1024) {
    throw new MqError('INVALID_CONFIG', `max.message.bytes=${maxMessage} does not fit in a frame: max.frame.bytes is ${limits.maxFrameBytes}`);
  }
  const minInsync = configs['min.insync.replicas'];
  if (minInsync !== undefined && Number(minInsync) > replicationFactor) {
    throw new MqError('INVALID_CONFIG', `min.insync.replicas ${minInsync} is more than the replication factor ${replicationFactor}: acks=all could never succeed`);
  }
}

function checkPartitions(topic: string, total: number, added: number, rf: number, md: MetadataState, limits: CommandLimits): void {
  if (total > limits.maxPartitionsPerTopic) {
    throw new MqError('INVALID_PARTITIONS', `partition count ${total} of topic "${topic}" is over the cluster's limit of ${limits.maxPartitionsPerTopic} (topic.max.partitions)`);
  }
  if (added > limits.maxPartitionsPerRequest) {
    throw new MqError(
      'INVALID_PARTITIONS',
      `adding ${added} partitions to topic "${topic}" in one request is over the limit of ${limits.maxPartitionsPerRequest} (max.partitions.per.request); add them in several requests`,
    );
  }
  if (added <= 0) return;
  const live = md.brokers().filter((b) => !b.fenced).length;
  const budget = limits.maxReplicasPerBroker * live;
  const current = md.replicaCount();
  const wanted = added * rf;
  if (current + wanted > budget) {
    throw new MqError(
      'POLICY_VIOLATION',
      `adding ${added} partitions x ${rf} replicas to topic "${topic}" would put ${current + wanted} partition replicas on ${live} live broker(s), over the budget of ${budget} ` +
        `(max.partition.replicas.per.broker=${limits.maxReplicasPerBroker} per live broker); delete topics or add brokers`,
    );
  }
}

/**
 * Every check a command gets before it is proposed: the rules of
 * decodeCommand on the bytes that would be proposed, then this cluster's
 * limits. Returns the command as it would be committed.
 */
export function checkCommand<C extends MetadataCommand>(cmd: C, md: MetadataState, limits: CommandLimits): C {
  const checked = decodeCommand(encodeCommand(cmd)) as C;
  checkCommandLimits(checked, md, limits);
  return checked;
}

/** The limits a broker's configuration sets (topic.max.partitions, max.partitions.per.request, max.partition.replicas.per.broker, max.frame.bytes). */
export function commandLimitsOf(cfg: { int(name: string): number }): CommandLimits {
  return {
    maxPartitionsPerTopic: cfg.int('topic.max.partitions'),
    maxPartitionsPerRequest: cfg.int('max.partitions.per.request'),
    maxReplicasPerBroker: cfg.int('max.partition.replicas.per.broker'),
    maxFrameBytes: cfg.int('max.frame.bytes'),
  };
}
