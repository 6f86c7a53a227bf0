/** Heartbeat: the core's coordinator. */
import { HeartbeatApi, type HeartbeatRequest, type HeartbeatResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const heartbeat: KafkaApi<HeartbeatRequest, HeartbeatResponse> = {
  api: HeartbeatApi,
  needs: ['heartbeat'],
  async handle(req, call) {
    const r = await askCore(call, 'heartbeat', { groupId: req.groupId, generationId: req.generationId, memberId: req.memberId, groupInstanceId: req.groupInstanceId ?? '' });
    return { errorCode: kafkaCode(r.errorCode) };
  },
  refused: (_req, code) => ({ errorCode: code }),
};
