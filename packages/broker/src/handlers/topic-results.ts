/** Shared by CreateTopics, DeleteTopics and CreatePartitions: one result per topic, each with its own error. */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import type { TopicChangeResult } from '../topics/topic-manager.js';
import type { RequestContext } from '../context.js';

export function topicResult(r: TopicChangeResult): mq.TopicResult.$Properties {
  return {
    name: r.name,
    errorCode: 0,
    numPartitions: r.numPartitions,
    replicationFactor: r.replicationFactor,
    configs: r.configs,
    warning: r.warning ?? '',
  };
}

export async function perTopic<T>(
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
      results.push(topicResult(await run(item)));
    } catch (err) {
      const e = wireError(err);
      ctx.logger.info({ topic: name, code: (err as MqError).code, err: e.errorMessage }, `${what} refused`);
      results.push({ name, ...e });
    }
  }
  return results;
}

