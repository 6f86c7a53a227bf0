/** FindCoordinator: the core's answer (the leader of the group's __consumer_offsets partition), at that broker's Kafka address. */
import { FindCoordinatorApi, type FindCoordinatorRequest, type FindCoordinatorResponse } from '@mq/kafka-protocol/messages';
import { kafkaErrorCode } from '@mq/kafka-protocol';
import type { KafkaApi } from '../types.js';
import { kafkaCode, messageOrNull } from '../errors.js';
import { askCore } from './call-core.js';

export const findCoordinator: KafkaApi<FindCoordinatorRequest, FindCoordinatorResponse> = {
  api: FindCoordinatorApi,
  needs: ['findCoordinator'],
  async handle(req, call) {
    const r = await askCore(call, 'findCoordinator', { key: req.key, keyType: req.keyType });
    if (r.errorCode) return { errorCode: kafkaCode(r.errorCode), errorMessage: messageOrNull(r.errorMessage), nodeId: -1, host: '', port: -1 };
    const at = call.door.endpoint(r.nodeId ?? -1);
    if (!at) {
      return { errorCode: kafkaErrorCode('COORDINATOR_NOT_AVAILABLE'), errorMessage: `broker ${r.nodeId} coordinates group "${req.key}" and has no Kafka listener`, nodeId: -1, host: '', port: -1 };
    }
    return { errorCode: 0, errorMessage: null, nodeId: r.nodeId ?? -1, host: at.host, port: at.port };
  },
  refused: (_req, code, message) => ({ errorCode: code, errorMessage: message, nodeId: -1, host: '', port: -1 }),
};
