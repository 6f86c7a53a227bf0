/** DeleteTopics: removes each topic and its files; internal topics are refused. */
import { refuseInternal } from '../topics/topic-name.js';
import { perTopic } from './topic-results.js';
import type { Handler } from './types.js';

export const deleteTopics: Handler<'deleteTopics'> = async (req, ctx) => ({
  results: await perTopic(req.topics ?? [], (t) => t, (t) => (refuseInternal(t, 'delete'), ctx.broker.topics.delete(t)), ctx, 'delete topic'),
});
