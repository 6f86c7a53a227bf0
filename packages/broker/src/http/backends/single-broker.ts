/** The HTTP topic backend of a broker running alone: its TopicManager and partition logs. */
import type { Topic, TopicManager } from '../../topics/topic-manager.js';
import { leaderAppend } from '../../records/leader-append.js';
import type { TopicBackend, TopicView } from './types.js';

export function topicView(t: Topic): TopicView {
  return {
    name: t.name,
    topicId: t.topicId,
    internal: t.internal,
    partitionCount: t.partitions.length,
    replicationFactor: t.replicationFactor,
    configs: Object.fromEntries(t.config.entries().map((e) => [e.name, e.value])),
    partitions: t.partitions.map((p) => ({
      partition: p.index,
      leader: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      low: p.logStartOffset,
      high: p.highWatermark,
      ...(p.offline ? { offline: true, error: p.offline.error().message } : {}),
    })),
  };
}

export function singleBrokerBackend(topics: TopicManager): TopicBackend {
  return {
    mode: 'single-broker',
    async createTopic(input) {
      const r = await topics.create({ name: input.name, numPartitions: input.numPartitions, replicationFactor: input.replicationFactor, configs: input.configs });
      return { topic: topicView(topics.require(r.name)), ...(r.warning ? { warning: r.warning } : {}) };
    },
    async listTopics() {
      return topics.list().map((t) => ({ name: t.name, internal: t.internal, partitionCount: t.partitions.length, replicationFactor: t.replicationFactor }));
    },
    async describeTopic(name) {
      return topicView(topics.require(name));
    },
    async deleteTopic(name) {
      const r = await topics.delete(name);
      return { name: r.name, partitionCount: r.numPartitions };
    },
    async produceTarget(name) {
      const t = topics.require(name);
      return { partitionCount: t.partitions.length, maxMessageBytes: t.config.maxMessageBytes };
    },
    async append(topic, partition, batch, acks) {
      const r = await leaderAppend(topics.require(topic), topics.partition(topic, partition), batch, acks);
      return { baseOffset: r.baseOffset };
    },
    async read(topic, partition, offset, maxBytes) {
      const p = topics.partition(topic, partition);
      const from = offset ?? p.logStartOffset;
      const records = await p.read(from, maxBytes);
      return { records, offset: from, low: p.logStartOffset, high: p.highWatermark };
    },
    async watermarks(topic, partition) {
      const p = topics.partition(topic, partition);
      return { low: p.logStartOffset, high: p.highWatermark };
    },
  };
}
