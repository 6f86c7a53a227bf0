/** CreateTopics: the core's (through the controller). -1 partitions or replication factor: the broker defaults. Manual replica assignments are refused. */
import { CreateTopicsApi, type CreateTopicsRequest, type CreateTopicsResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';

const NO_ASSIGNMENTS = 'manual replica assignments are not supported: give num_partitions and replication_factor';

export const createTopics: KafkaApi<CreateTopicsRequest, CreateTopicsResponse> = {
  api: CreateTopicsApi,
  needs: ['createTopics'],
  async handle(req, call) {
    const asked = req.topics.filter((t) => t.assignments.length === 0);
    const r = asked.length
      ? await askCore(call, 'createTopics', {
          topics: asked.map((t) => ({
            name: t.name,
            numPartitions: t.numPartitions,
            replicationFactor: t.replicationFactor,
            configs: Object.fromEntries(t.configs.filter((c) => c.value !== null).map((c) => [c.name, c.value!])),
          })),
          timeoutMs: Math.max(0, req.timeoutMs),
          validateOnly: req.validateOnly,
        })
      : { results: [] };
    const byName = new Map((r.results ?? []).map((x) => [x.name ?? '', x]));
    return {
      topics: req.topics.map((t) => {
        if (t.assignments.length > 0) return { name: t.name, errorCode: kafkaErrorCode('INVALID_REQUEST'), errorMessage: NO_ASSIGNMENTS };
        const x = byName.get(t.name);
        return { name: t.name, errorCode: kafkaCode(x?.errorCode), errorMessage: messageOrNull(x?.errorMessage) };
      }),
    };
  },
  refused: (req, code, message) => ({ topics: req.topics.map((t) => ({ name: t.name, errorCode: code, errorMessage: message })) }),
};
