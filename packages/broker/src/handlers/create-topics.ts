/** CreateTopics: validates names (Kafka rules), counts, replication factor and configs; each topic answered on its own, `validate_only` supported. */
import { refuseInternal } from '../topics/topic-name.js';
import { perTopic } from './topic-results.js';
import type { Handler } from './types.js';

export const createTopics: Handler<'createTopics'> = async (req, ctx) => ({
  results: await perTopic(
    req.topics ?? [],
    (t) => t.name ?? '',
    (t) => {
      refuseInternal(t.name ?? '', 'create');
      return ctx.broker.topics.create(
        {
          name: t.name ?? '',
          numPartitions: t.numPartitions ?? 0,
          replicationFactor: t.replicationFactor ?? 0,
          configs: t.configs ?? {},
        },
        req.validateOnly ?? false,
      );
    },
    ctx,
    'create topic',
  ),
});
