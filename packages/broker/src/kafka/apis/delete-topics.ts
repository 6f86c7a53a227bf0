/** DeleteTopics: the core's (through the controller). */
import { DeleteTopicsApi, type DeleteTopicsRequest, type DeleteTopicsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const deleteTopics: KafkaApi<DeleteTopicsRequest, DeleteTopicsResponse> = {
  api: DeleteTopicsApi,
  needs: ['deleteTopics'],
  async handle(req, call) {
    const r = await askCore(call, 'deleteTopics', { topics: req.topicNames, timeoutMs: Math.max(0, req.timeoutMs) });
    return { responses: (r.results ?? []).map((x) => ({ name: x.name ?? '', errorCode: kafkaCode(x.errorCode) })) };
  },
  refused: (req, code) => ({ responses: req.topicNames.map((name) => ({ name, errorCode: code })) }),
};
