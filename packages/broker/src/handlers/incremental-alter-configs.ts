/**
 * IncrementalAlterConfigs: sets and removes some of a topic's own configs;
 * each resource's answer lists the topic's effective configs after the change
 * (or what they would be, with validate_only).
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { TopicConfig } from '../config/topic-config.js';
import { wireError } from '../errors.js';
import { refuseInternal, validateTopicName } from '../topics/topic-name.js';
import type { RequestContext } from '../context.js';
import type { Handler, RequestOf } from './types.js';

/**
 * One ConfigResult per resource, each with its own error (logged once). `alter`
 * applies (or only checks) one topic's change and returns its own configs after it.
 */
export async function perConfigResource(
  req: RequestOf<'incrementalAlterConfigs'>,
  ctx: RequestContext,
  alter: (topic: string, set: Record<string, string>, remove: string[], validateOnly: boolean) => Promise<Record<string, string>>,
): Promise<mq.IncrementalAlterConfigsResponse.$Properties> {
  const resources = req.resources ?? [];
  const seen = new Map<string, number>();
  for (const r of resources) seen.set(r.topic ?? '', (seen.get(r.topic ?? '') ?? 0) + 1);
  const results: mq.ConfigResult.$Properties[] = [];
  for (const r of resources) {
    const name = r.topic ?? '';
    try {
      if (seen.get(name)! > 1) throw new MqError('INVALID_REQUEST', `topic "${name}" appears more than once in the request`);
      validateTopicName(name);
      refuseInternal(name, 'alter the configs of');
      const configs = await alter(name, { ...(r.set ?? {}) }, [...new Set(r.delete ?? [])], req.validateOnly ?? false);
      results.push({ resource: name, errorCode: 0, entries: new TopicConfig(configs, ctx.broker.config).entries() });
      if (!req.validateOnly) ctx.logger.info({ topic: name, set: r.set ?? {}, delete: r.delete ?? [] }, 'topic configs altered');
    } catch (err) {
      const e = wireError(err);
      ctx.logger.info({ topic: name, code: (err as MqError).code, err: e.errorMessage }, 'alter configs refused');
      results.push({ resource: name, ...e, entries: [] });
    }
  }
  return { results };
}

export const incrementalAlterConfigs: Handler<'incrementalAlterConfigs'> = (req, ctx) =>
  perConfigResource(req, ctx, (topic, set, remove, validateOnly) => ctx.broker.topics.alterConfigs(topic, set, remove, validateOnly));
