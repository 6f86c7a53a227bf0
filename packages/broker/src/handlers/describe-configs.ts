/** DescribeConfigs: every key of each topic (and of the broker) with its value and where it comes from. */
import type { mq } from '@mq/protocol/wire';
import { wireError } from '../errors.js';
import type { Handler } from './types.js';

export const describeConfigs: Handler<'describeConfigs'> = async (req, ctx) => {
  const b = ctx.broker;
  const results: mq.ConfigResult.$Properties[] = [];
  for (const name of req.topics ?? []) {
    try {
      const t = b.topics.require(name);
      results.push({ resource: name, errorCode: 0, entries: t.config.entries() });
    } catch (err) {
      results.push({ resource: name, ...wireError(err), entries: [] });
    }
  }
  if (req.includeBroker) results.push({ resource: '', errorCode: 0, entries: b.config.entries() });
  return { results };
};
