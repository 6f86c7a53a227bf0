/** ListGroups: the groups this broker coordinates (as Kafka: an admin client asks every broker). */
import { ListGroupsApi, type ListGroupsRequest, type ListGroupsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const listGroups: KafkaApi<ListGroupsRequest, ListGroupsResponse> = {
  api: ListGroupsApi,
  needs: ['listGroups'],
  async handle(_req, call) {
    const r = await askCore(call, 'listGroups', {});
    return { errorCode: kafkaCode(r.errorCode), groups: (r.groups ?? []).map((g) => ({ groupId: g.groupId ?? '', protocolType: g.protocolType ?? '' })) };
  },
  refused: (_req, code) => ({ errorCode: code, groups: [] }),
};
