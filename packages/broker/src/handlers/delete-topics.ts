/** DeleteTopics: through the controller (delete.topic.enable), answered once the deletion is applied here and the partitions hosted here are closed. */
import { MqError } from '@mq/protocol/errors';
import { requestDeadline, shown } from '../request-limits.js';
import { refuseInternal, validateTopicName } from '@mq/protocol/topic-name';
import { applied, type HandlerDeps } from './deps.js';
import { answerEachTopic } from './each-topic.js';
import type { Handler } from './types.js';

export function deleteTopics(d: HandlerDeps): Handler<'deleteTopics'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    const results = await answerEachTopic(ctx, 'delete topic', req.topics, (name) => name, async (name) => {
      if (!d.config.bool('delete.topic.enable')) throw new MqError('TOPIC_DELETION_DISABLED', 'topic deletion is disabled (delete.topic.enable=false)');
      validateTopicName(name);
      refuseInternal(name, 'delete');
      // A name this broker's metadata does not have costs no metadata-log commit (hundreds of them kept a request unanswered for 40 s).
      if (!md.topic(name)) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${shown(name)}" does not exist`);
      const v = (await d.controller.submit({ type: 'deleteTopic', name }, deadline.check())) as { partitions: number; replicationFactor: number; configs: Record<string, string> };
      await applied(d, () => md.topic(name) === undefined, Math.min(5000, deadline.remaining()));
      // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
      await d.replicas.settled();
      return { name, errorCode: 0, numPartitions: v.partitions, replicationFactor: v.replicationFactor, configs: v.configs, warning: '' };
    });
    return { results };
  };
}
