/**
 * IncrementalAlterConfigs: sets and removes some of a topic's own configs;
 * each resource's answer lists the topic's effective configs after the change
 * (or what they would be, with validate_only).
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { TopicConfig } from '../config/topic-config.js';
import { wireError } from '../errors.js';
import { refuseInternal, validateTopicName } from '@mq/protocol/topic-name';
import type { RequestContext } from '../context.js';
import { alterTopicConfigs, sameTopicConfigs } from '../config/alter-topic-configs.js';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import { requestDeadline } from '../request-limits.js';
import { applied, type HandlerDeps } from './deps.js';
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

/**
 * Through the controller: an alterTopicConfigs command in the metadata log,
 * which every broker hosting the topic applies to its partition logs;
 * answered once applied here.
 */
export function incrementalAlterConfigs(d: HandlerDeps): Handler<'incrementalAlterConfigs'> {
  const md = d.controller.metadata;
  return (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    return perConfigResource(req, ctx, async (name, set, remove, validateOnly) => {
      const t = md.topic(name);
      if (!t) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
      const configs = alterTopicConfigs(t.configs, set, remove, d.config.int('max.frame.bytes'));
      const checkedSet = Object.fromEntries(Object.keys(set).map((k) => [k, configs[k]!]));
      const command = checkCommand({ type: 'alterTopicConfigs', name, topicId: t.topicId, set: checkedSet, delete: remove }, md, commandLimitsOf(d.config));
      if (validateOnly) return configs;
      const v = (await d.controller.submit(command, deadline.check())) as { configs: Record<string, string> };
      const done = () => {
        const now = md.topic(name);
        return !now || now.topicId !== t.topicId || sameTopicConfigs(now.configs, v.configs);
      };
      await applied(d, done, Math.min(5000, deadline.remaining()));
      // This broker's partitions of the topic take the new options before the answer.
      await d.replicas.settled();
      return v.configs;
    });
  };
}
