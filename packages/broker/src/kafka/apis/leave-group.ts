/** LeaveGroup: one member (v0-2) or several (v3), through the core's coordinator, which answers for the request as a whole. */
import { LeaveGroupApi, type LeaveGroupRequest, type LeaveGroupResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

function membersOf(req: LeaveGroupRequest, version: number): Array<{ memberId: string; groupInstanceId: string | null }> {
  return version >= 3 ? req.members : [{ memberId: req.memberId, groupInstanceId: null }];
}

export const leaveGroup: KafkaApi<LeaveGroupRequest, LeaveGroupResponse> = {
  api: LeaveGroupApi,
  needs: ['leaveGroup'],
  async handle(req, call) {
    const members = membersOf(req, call.version);
    const r = await askCore(call, 'leaveGroup', { groupId: req.groupId, members: members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId ?? '' })) });
    const errorCode = kafkaCode(r.errorCode);
    return { errorCode, members: members.map((m) => ({ ...m, errorCode })) };
  },
  refused: (req, code, _message, version) => ({ errorCode: code, members: membersOf(req, version).map((m) => ({ ...m, errorCode: code })) }),
};
