/** DescribeGroups: the core's coordinator; consumer-protocol member metadata and assignments in Kafka's format. */
import { DescribeGroupsApi, type DescribeGroupsRequest, type DescribeGroupsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { assignmentToKafka, CONSUMER_PROTOCOL_TYPE, subscriptionToKafka } from '../consumer-protocol.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const describeGroups: KafkaApi<DescribeGroupsRequest, DescribeGroupsResponse> = {
  api: DescribeGroupsApi,
  needs: ['describeGroups'],
  async handle(req, call) {
    const r = await askCore(call, 'describeGroups', { groupIds: req.groups });
    return {
      groups: (r.groups ?? []).map((g) => {
        const consumer = g.protocolType === CONSUMER_PROTOCOL_TYPE;
        return {
          errorCode: kafkaCode(g.errorCode),
          groupId: g.groupId ?? '',
          groupState: g.state ?? '',
          protocolType: g.protocolType ?? '',
          protocolData: g.protocol ?? '',
          members: (g.members ?? []).map((m) => ({
            memberId: m.memberId ?? '',
            groupInstanceId: m.groupInstanceId ? m.groupInstanceId : null,
            clientId: m.clientId ?? '',
            clientHost: m.clientHost ?? '',
            memberMetadata: consumer ? subscriptionToKafka(m.metadata) : Buffer.from(m.metadata ?? []),
            memberAssignment: consumer ? assignmentToKafka(m.assignment) : Buffer.from(m.assignment ?? []),
          })),
        };
      }),
    };
  },
  refused: (req, code) => ({ groups: req.groups.map((groupId) => ({ groupId, errorCode: code, groupState: 'Dead' })) }),
};
