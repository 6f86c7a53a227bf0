/** IncrementalAlterConfigs: SET and DELETE of topic configs, through the core (APPEND/SUBTRACT and broker resources are refused). */
import { IncrementalAlterConfigsApi, type IncrementalAlterConfigsRequest, type IncrementalAlterConfigsResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';
import { RESOURCE_TOPIC } from './config-resources.js';

const SET = 0;
const DELETE = 1;

function problem(res: IncrementalAlterConfigsRequest['resources'][number]): string | undefined {
  if (res.resourceType !== RESOURCE_TOPIC) return `config resource type ${res.resourceType} cannot be altered (only topics, type 2)`;
  const op = res.configs.find((c) => c.configOperation !== SET && c.configOperation !== DELETE);
  return op ? `config operation ${op.configOperation} on ${op.name} is not supported (SET 0 and DELETE 1 are)` : undefined;
}

export const incrementalAlterConfigs: KafkaApi<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse> = {
  api: IncrementalAlterConfigsApi,
  needs: ['incrementalAlterConfigs'],
  async handle(req, call) {
    const ok = req.resources.filter((x) => problem(x) === undefined);
    const r = ok.length
      ? await askCore(call, 'incrementalAlterConfigs', {
          resources: ok.map((x) => ({
            topic: x.resourceName,
            set: Object.fromEntries(x.configs.filter((c) => c.configOperation === SET).map((c) => [c.name, c.value ?? ''])),
            delete: x.configs.filter((c) => c.configOperation === DELETE).map((c) => c.name),
          })),
          validateOnly: req.validateOnly,
        })
      : { results: [] };
    const byTopic = new Map((r.results ?? []).map((x) => [x.resource ?? '', x]));
    return {
      responses: req.resources.map((x) => {
        const bad = problem(x);
        if (bad) return { errorCode: kafkaErrorCode('INVALID_REQUEST'), errorMessage: bad, resourceType: x.resourceType, resourceName: x.resourceName };
        const found = byTopic.get(x.resourceName);
        return { errorCode: kafkaCode(found?.errorCode), errorMessage: messageOrNull(found?.errorMessage), resourceType: x.resourceType, resourceName: x.resourceName };
      }),
    };
  },
  refused: (req, code, message) => ({ responses: req.resources.map((x) => ({ errorCode: code, errorMessage: message, resourceType: x.resourceType, resourceName: x.resourceName })) }),
};
