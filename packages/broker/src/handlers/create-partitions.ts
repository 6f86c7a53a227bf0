/** CreatePartitions: adds partitions to a topic through the controller (never removes any), with a warning that keyed records may move. */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import { wireError } from '../errors.js';
import { requestDeadline } from '../request-limits.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import { applied, logRefusal, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function createPartitions(d: HandlerDeps): Handler<'createPartitions'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const results: mq.TopicResult.$Properties[] = [];
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    for (const t of req.topics ?? []) {
      const name = t.topic ?? '';
      try {
        deadline.check();
        refuseInternal(name, 'add partitions to');
        const existing = md.topic(name);
        if (!existing) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
        const count = t.count ?? 0;
        if (count <= existing.partitions.length) throw new MqError('INVALID_PARTITIONS', `topic "${name}" has ${existing.partitions.length} partitions; the new count ${count} must be larger (partitions can only be added)`);
        const rf = existing.partitions[0]?.replicas.length ?? 1;
        const warning = 'records with a key may now map to a different partition than before (murmur2(key) % partitions changed), so per-key ordering across the change is not kept';
        const command = checkCommand({ type: 'createPartitions', name, count }, md, commandLimitsOf(d.config));
        if (!req.validateOnly) {
          await d.controller.submit(command, deadline.check());
          await applied(d, () => (md.topic(name)?.partitions.length ?? 0) >= count, Math.min(5000, deadline.remaining()));
          // The partitions this broker hosts are opened (or closed) before the answer: a client's next request finds them.
          await d.replicas.settled();
        }
        results.push({ name, errorCode: 0, numPartitions: count, replicationFactor: rf, configs: { ...existing.configs }, warning });
      } catch (err) {
        logRefusal(ctx, 'create partitions', name, -1, err);
        results.push({ name, ...wireError(err) });
      }
    }
    return { results };
  };
}
