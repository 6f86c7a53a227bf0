/**
 * JoinGroup: the core's coordinator. Consumer-protocol metadata is
 * translated both ways (kafka/consumer-protocol.ts), so Kafka and mq members
 * share groups. A v0-3 client cannot be asked for a member id first
 * (MEMBER_ID_REQUIRED, v4+): the join is repeated with the id given.
 */
import { JoinGroupApi, type JoinGroupRequest, type JoinGroupResponse } from '@mq/kafka-protocol/messages';
import { errorNumber } from '@mq/protocol/errors';
import type { RequestOf, ResponseOf } from '../../handlers/types.js';
import type { KafkaApi } from '../types.js';
import { CONSUMER_PROTOCOL_TYPE, subscriptionFromKafka, subscriptionToKafka } from '../consumer-protocol.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

/** Groups remembered per connection (their protocol type, for SyncGroup); beyond this the oldest is forgotten. */
const MAX_REMEMBERED_GROUPS = 1000;

export const joinGroup: KafkaApi<JoinGroupRequest, JoinGroupResponse> = {
  api: JoinGroupApi,
  needs: ['joinGroup'],
  async handle(req, call) {
    const consumer = req.protocolType === CONSUMER_PROTOCOL_TYPE;
    const ask: RequestOf<'joinGroup'> = {
      groupId: req.groupId,
      sessionTimeoutMs: req.sessionTimeoutMs,
      // v0 has no rebalance timeout: Kafka uses the session timeout.
      rebalanceTimeoutMs: req.rebalanceTimeoutMs >= 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId ?? '',
      protocolType: req.protocolType,
      protocols: req.protocols.map((p) => ({ name: p.name, metadata: consumer ? subscriptionFromKafka(p.metadata) : p.metadata })),
    };
    let r: ResponseOf<'joinGroup'> = await askCore(call, 'joinGroup', ask);
    if (call.version < 4 && r.errorCode === errorNumber('MEMBER_ID_REQUIRED') && r.memberId) {
      r = await askCore(call, 'joinGroup', { ...ask, memberId: r.memberId });
    }
    call.groupProtocols.delete(req.groupId);
    if (call.groupProtocols.size >= MAX_REMEMBERED_GROUPS) call.groupProtocols.delete(call.groupProtocols.keys().next().value!);
    call.groupProtocols.set(req.groupId, req.protocolType);
    return {
      errorCode: kafkaCode(r.errorCode),
      generationId: r.generationId ?? -1,
      protocolName: r.protocolName ?? '',
      leader: r.leader ?? '',
      memberId: r.memberId ?? '',
      members: (r.members ?? []).map((m) => ({
        memberId: m.memberId ?? '',
        groupInstanceId: m.groupInstanceId ? m.groupInstanceId : null,
        metadata: consumer ? subscriptionToKafka(m.metadata) : Buffer.from(m.metadata ?? []),
      })),
    };
  },
  refused: (req, code) => ({ errorCode: code, memberId: req.memberId, generationId: -1 }),
};
