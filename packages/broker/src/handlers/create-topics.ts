/**
 * CreateTopics: each topic checked here as the controller will (name, counts
 * with Kafka's -1 for the broker default, configs, replication factor against
 * the live brokers, min.insync.replicas against it), then committed through
 * the controller and answered once applied here; `validate_only` supported.
 */
import { randomBytes } from 'node:crypto';
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { TopicConfig, validateTopicConfigs } from '../config/topic-config.js';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import { requestDeadline, type RequestDeadline } from '../request-limits.js';
import { refuseInternal, validateTopicName } from '@mq/protocol/topic-name';
import { applied, type HandlerDeps } from './deps.js';
import { answerEachTopic } from './each-topic.js';
import type { Handler } from './types.js';

/** Creates one topic (or only checks it); the result is its CreateTopics entry. */
export async function createTopic(d: HandlerDeps, name: string, numPartitions: number, replicationFactor: number, configs: Record<string, unknown>, validateOnly: boolean, deadline?: RequestDeadline): Promise<mq.TopicResult.$Properties> {
const md = d.controller.metadata;
  validateTopicName(name);
  refuseInternal(name, 'create');
  const cfg = d.config;
  // As Kafka: -1 (or 0, what an omitted proto3 field reads as) takes the broker default; anything else below 1 is refused.
  const n = numPartitions === 0 || numPartitions === -1 ? cfg.int('num.partitions') : numPartitions;
  if (!Number.isInteger(n) || n < 1) throw new MqError('INVALID_PARTITIONS', `partition count ${n} must be at least 1 (or -1 for the broker's num.partitions)`);
  const rf = replicationFactor === 0 || replicationFactor === -1 ? cfg.int('default.replication.factor') : replicationFactor;
  if (!Number.isInteger(rf) || rf < 1) throw new MqError('INVALID_REPLICATION_FACTOR', `replication factor ${rf} must be at least 1 (or -1 for the broker's default.replication.factor)`);
  const own = validateTopicConfigs(configs, cfg.int('max.frame.bytes'));
  // Refused here rather than per produce (where Kafka refuses acks=all): a partition leader never waits for more replicas than it has.
  const topicConfig = new TopicConfig(own, cfg);
  if (topicConfig.minInsyncReplicas > rf) {
    throw new MqError('INVALID_CONFIG', `min.insync.replicas ${topicConfig.minInsyncReplicas} is more than the replication factor ${rf}: acks=all could never succeed`);
  }
  const live = md.brokers().filter((b) => !b.fenced).length;
  if (rf > live) throw new MqError('INVALID_REPLICATION_FACTOR', `replication factor ${rf} is larger than the number of live brokers (${live})`);
  if (md.topic(name)) throw new MqError('TOPIC_ALREADY_EXISTS', `topic "${name}" already exists`);
  // The controller's own checks, on this broker's view (so validate_only answers what a real request would).
  const command = checkCommand({ type: 'createTopic', name, topicId: randomBytes(16).toString('base64url'), numPartitions: n, replicationFactor: rf, configs: own }, md, commandLimitsOf(cfg));
  const warning = /[._]/.test(name) ? `topic names with a period ('.') or underscore ('_') could collide in metric names; use one or the other, not both` : '';
  const result = { name, errorCode: 0, numPartitions: n, replicationFactor: rf, configs: own, warning };
  if (validateOnly) return result;
  await d.controller.submit(command, deadline?.check());
  await applied(d, () => md.topic(name)?.topicId === command.topicId, Math.min(5000, deadline?.remaining() ?? 5000));
  // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
  await d.replicas.settled();
  return result;
}

export function createTopics(d: HandlerDeps): Handler<'createTopics'> {
  return async (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    const results = await answerEachTopic(ctx, 'create topic', req.topics, (t) => t.name ?? '', async (t, name) => {
      deadline.check();
      const result = await createTopic(d, name, t.numPartitions ?? 0, t.replicationFactor ?? 0, t.configs ?? {}, req.validateOnly ?? false, deadline);
      if (!req.validateOnly) ctx.logger.info({ topic: name }, 'topic created through the controller');
      return result;
    });
    return { results };
  };
}
