/** CreatePartitions: the core's (through the controller). Manual assignments are refused. */
import { CreatePartitionsApi, type CreatePartitionsRequest, type CreatePartitionsResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';

export const createPartitions: KafkaApi<CreatePartitionsRequest, CreatePartitionsResponse> = {
  api: CreatePartitionsApi,
  needs: ['createPartitions'],
  async handle(req, call) {
    const asked = req.topics.filter((t) => !t.assignments || t.assignments.length === 0);
    const r = asked.length
      ? await askCore(call, 'createPartitions', { topics: asked.map((t) => ({ topic: t.name, count: t.count })), timeoutMs: Math.max(0, req.timeoutMs), validateOnly: req.validateOnly })
      : { results: [] };
    const byName = new Map((r.results ?? []).map((x) => [x.name ?? '', x]));
    return {
      results: req.topics.map((t) => {
        if (t.assignments && t.assignments.length > 0) return { name: t.name, errorCode: kafkaErrorCode('INVALID_REQUEST'), errorMessage: 'manual replica assignments are not supported' };
        const x = byName.get(t.name);
        return { name: t.name, errorCode: kafkaCode(x?.errorCode), errorMessage: messageOrNull(x?.errorMessage) };
      }),
    };
  },
  refused: (req, code, message) => ({ results: req.topics.map((t) => ({ name: t.name, errorCode: code, errorMessage: message })) }),
};
