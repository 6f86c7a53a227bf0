/** CreatePartitions: adds partitions to a topic through the controller (never removes any), with a warning that keyed records may move. */
import { MqError } from '@mq/protocol/errors';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import { requestDeadline, shown } from '../request-limits.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import { applied, type HandlerDeps } from './deps.js';
import { answerEachTopic } from './each-topic.js';
import type { Handler } from './types.js';

export function createPartitions(d: HandlerDeps): Handler<'createPartitions'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    const results = await answerEachTopic(ctx, 'create partitions', req.topics, (t) => t.topic ?? '', async (t, name) => {
      deadline.check();
      refuseInternal(name, 'add partitions to');
      const existing = md.topic(name);
      if (!existing) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${shown(name)}" does not exist (create it with: mq topic create ${shown(name)})`, { retriable: false });
      const count = t.count ?? 0;
      if (count <= existing.partitions.length) throw new MqError('INVALID_PARTITIONS', `topic "${shown(name)}" has ${existing.partitions.length} partitions; the new count ${count} must be larger (partitions can only be added)`);
      const rf = existing.partitions[0]?.replicas.length ?? 1;
      const warning = 'records with a key may now map to a different partition than before (murmur2(key) % partitions changed), so per-key ordering across the change is not kept';
      const command = checkCommand({ type: 'createPartitions', name, count }, md, commandLimitsOf(d.config));
      if (!req.validateOnly) {
        await d.controller.submit(command, deadline.check());
        await applied(d, () => (md.topic(name)?.partitions.length ?? 0) >= count, Math.min(5000, deadline.remaining()));
        // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
        await d.replicas.settled();
      }
      return { name, errorCode: 0, numPartitions: count, replicationFactor: rf, configs: { ...existing.configs }, warning };
    });
    return { results };
  };
}
