/**
 * AlterConfigs (the whole-config replace kafkajs's admin.alterConfigs sends):
 * a topic's configs become exactly the ones given. Through the core: its
 * DescribeConfigs names the keys set on the topic now, and its
 * IncrementalAlterConfigs sets the given ones and deletes the others (two
 * calls, not one atomic change). Broker resources are refused.
 */
import { AlterConfigsApi, type AlterConfigsRequest, type AlterConfigsResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';
import { RESOURCE_TOPIC } from './config-resources.js';

export const alterConfigs: KafkaApi<AlterConfigsRequest, AlterConfigsResponse> = {
  api: AlterConfigsApi,
  needs: ['describeConfigs', 'incrementalAlterConfigs'],
  async handle(req, call) {
    const topics = req.resources.filter((x) => x.resourceType === RESOURCE_TOPIC);
    const current = topics.length ? await askCore(call, 'describeConfigs', { topics: topics.map((x) => x.resourceName) }) : { results: [] };
    const setNow = new Map((current.results ?? []).map((r) => [r.resource ?? '', (r.entries ?? []).filter((e) => e.source === 'topic').map((e) => e.name ?? '')]));
    const r = topics.length
      ? await askCore(call, 'incrementalAlterConfigs', {
          resources: topics.map((x) => {
            const given = new Set(x.configs.map((c) => c.name));
            return {
              topic: x.resourceName,
              set: Object.fromEntries(x.configs.filter((c) => c.value !== null).map((c) => [c.name, c.value!])),
              delete: [...(setNow.get(x.resourceName) ?? []).filter((name) => !given.has(name)), ...x.configs.filter((c) => c.value === null).map((c) => c.name)],
            };
          }),
          validateOnly: req.validateOnly,
        })
      : { results: [] };
    const byTopic = new Map((r.results ?? []).map((x) => [x.resource ?? '', x]));
    return {
      responses: req.resources.map((x) => {
        if (x.resourceType !== RESOURCE_TOPIC) {
          return { errorCode: kafkaErrorCode('INVALID_REQUEST'), errorMessage: `config resource type ${x.resourceType} cannot be altered (only topics, type 2)`, resourceType: x.resourceType, resourceName: x.resourceName };
        }
        const found = byTopic.get(x.resourceName);
        return { errorCode: kafkaCode(found?.errorCode), errorMessage: messageOrNull(found?.errorMessage), resourceType: x.resourceType, resourceName: x.resourceName };
      }),
    };
  },
  refused: (req, code, message) => ({ responses: req.resources.map((x) => ({ errorCode: code, errorMessage: message, resourceType: x.resourceType, resourceName: x.resourceName })) }),
};
