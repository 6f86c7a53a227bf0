/** DescribeConfigs: topics' effective configs and this broker's, from the core. */
import { DescribeConfigsApi, type DescribeConfigsRequest, type DescribeConfigsResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';
import { configSource, RESOURCE_BROKER, RESOURCE_TOPIC } from './config-resources.js';

export const describeConfigs: KafkaApi<DescribeConfigsRequest, DescribeConfigsResponse> = {
  api: DescribeConfigsApi,
  needs: ['describeConfigs'],
  async handle(req, call) {
    const topics = req.resources.filter((x) => x.resourceType === RESOURCE_TOPIC).map((x) => x.resourceName);
    const broker = req.resources.some((x) => x.resourceType === RESOURCE_BROKER);
    const r = await askCore(call, 'describeConfigs', { topics, includeBroker: broker });
    const byTopic = new Map((r.results ?? []).filter((x) => x.resource).map((x) => [x.resource ?? '', x]));
    const brokerResult = (r.results ?? []).find((x) => !x.resource);
    return {
      results: req.resources.map((res) => {
        const found = res.resourceType === RESOURCE_TOPIC ? byTopic.get(res.resourceName) : res.resourceType === RESOURCE_BROKER ? brokerResult : undefined;
        if (!found) {
          return { errorCode: kafkaErrorCode('INVALID_REQUEST'), errorMessage: `config resource type ${res.resourceType} is not supported (topics: 2, brokers: 4)`, resourceType: res.resourceType, resourceName: res.resourceName };
        }
        const keys = res.configurationKeys ? new Set(res.configurationKeys) : undefined;
        return {
          errorCode: kafkaCode(found.errorCode),
          errorMessage: messageOrNull(found.errorMessage),
          resourceType: res.resourceType,
          resourceName: res.resourceName,
          configs: (found.entries ?? [])
            .filter((e) => !keys || keys.has(e.name ?? ''))
            .map((e) => ({
              name: e.name ?? '',
              value: e.value ?? null,
              readOnly: res.resourceType === RESOURCE_BROKER,
              isDefault: e.source === 'default',
              configSource: configSource(e.source, res.resourceType),
              isSensitive: false,
              synonyms: [],
            })),
        };
      }),
    };
  },
  refused: (req, code, message) => ({ results: req.resources.map((x) => ({ errorCode: code, errorMessage: message, resourceType: x.resourceType, resourceName: x.resourceName })) }),
};
