/** CreatePartitions: only increases a topic's partition count; the result warns that keyed records may move. */
import { refuseInternal } from '../topics/topic-name.js';
import { perTopic } from './topic-results.js';
import type { Handler } from './types.js';

export const createPartitions: Handler<'createPartitions'> = async (req, ctx) => ({
  results: await perTopic(
    req.topics ?? [],
    (t) => t.topic ?? '',
    (t) => (refuseInternal(t.topic ?? '', 'add partitions to'), ctx.broker.topics.createPartitions(t.topic ?? '', t.count ?? 0, req.validateOnly ?? false)),
    ctx,
    'create partitions',
  ),
});
