/** DeleteGroups: the core's coordinator. */
import { DeleteGroupsApi, type DeleteGroupsRequest, type DeleteGroupsResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

export const deleteGroups: KafkaApi<DeleteGroupsRequest, DeleteGroupsResponse> = {
  api: DeleteGroupsApi,
  needs: ['deleteGroups'],
  async handle(req, call) {
    const r = await askCore(call, 'deleteGroups', { groupIds: req.groupsNames });
    return { results: (r.results ?? []).map((g) => ({ groupId: g.groupId ?? '', errorCode: kafkaCode(g.errorCode) })) };
  },
  refused: (req, code) => ({ results: req.groupsNames.map((groupId) => ({ groupId, errorCode: code })) }),
};
