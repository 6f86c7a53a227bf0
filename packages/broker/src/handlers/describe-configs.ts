/** DescribeConfigs: each topic's effective configuration (topic value or broker default) and, when asked, the broker's. */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { TopicConfig } from '../config/topic-config.js';
import { wireError } from '../errors.js';
import { validateTopicName } from '@mq/protocol/topic-name';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function describeConfigs(d: HandlerDeps): Handler<'describeConfigs'> {
  const md = d.controller.metadata;
  return async (req) => {
    const results: mq.ConfigResult.$Properties[] = [];
    for (const name of req.topics ?? []) {
      try {
        const t = md.topic(name);
        if (!t) {
          validateTopicName(name);
          throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
        }
        results.push({ resource: name, errorCode: 0, entries: new TopicConfig(t.configs, d.config).entries() });
      } catch (err) {
        results.push({ resource: name, ...wireError(err), entries: [] });
      }
    }
    if (req.includeBroker) results.push({ resource: '', errorCode: 0, entries: d.config.entries() });
    return { results };
  };
}
