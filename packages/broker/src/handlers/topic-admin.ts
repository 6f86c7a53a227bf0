/** CreateTopics, DeleteTopics and CreatePartitions: one result per topic, each with its own error. */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import { refuseInternal } from '../topics/topic-name.js';
import type { TopicChangeResult } from '../topics/topic-manager.js';
import type { RequestContext } from '../context.js';
import type { Handler } from './types.js';

function ok(r: TopicChangeResult): mq.TopicResult.$Properties {
  return {
    name: r.name,
    errorCode: 0,
    numPartitions: r.numPartitions,
    replicationFactor: r.replicationFactor,
    configs: r.configs,
    warning: r.warning ?? '',
  };
}

async function perTopic<T>(
  items: readonly T[],
  nameOf: (item: T) => string,
  run: (item: T) => Promise<TopicChangeResult>,
  ctx: RequestContext,
  what: string,
): Promise<mq.TopicResult.$Properties[]> {
  const seen = new Map<string, number>();
  for (const it of items) seen.set(nameOf(it), (seen.get(nameOf(it)) ?? 0) + 1);
  const results: mq.TopicResult.$Properties[] = [];
  for (const item of items) {
    const name = nameOf(item);
    try {
      if (seen.get(name)! > 1) throw new MqError('INVALID_REQUEST', `topic "${name}" appears more than once in the request`);
      results.push(ok(await run(item)));
    } catch (err) {
      const e = wireError(err);
      ctx.logger.info({ topic: name, code: (err as MqError).code, err: e.errorMessage }, `${what} refused`);
      results.push({ name, ...e });
    }
  }
  return results;
}

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

export const deleteTopics: Handler<'deleteTopics'> = async (req, ctx) => ({
  results: await perTopic(req.topics ?? [], (t) => t, (t) => (refuseInternal(t, 'delete'), ctx.broker.topics.delete(t)), ctx, 'delete topic'),
});

export const createPartitions: Handler<'createPartitions'> = async (req, ctx) => ({
  results: await perTopic(
    req.topics ?? [],
    (t) => t.topic ?? '',
    (t) => (refuseInternal(t.topic ?? '', 'add partitions to'), ctx.broker.topics.createPartitions(t.topic ?? '', t.count ?? 0, req.validateOnly ?? false)),
    ctx,
    'create partitions',
  ),
});
