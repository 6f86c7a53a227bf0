/** SyncGroup: the core's coordinator; consumer-protocol assignments translated both ways (kafka/consumer-protocol.ts). */
import { SyncGroupApi, type SyncGroupRequest, type SyncGroupResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi, KafkaCall } from '../types.js';
import { assignmentFromKafka, assignmentToKafka, CONSUMER_PROTOCOL_TYPE } from '../consumer-protocol.js';
import { kafkaCode } from '../errors.js';
import { askCore } from './call-core.js';

/** The group's protocol type: from this connection's JoinGroup, else from the coordinator. */
async function protocolTypeOf(groupId: string, call: KafkaCall): Promise<string> {
  const known = call.groupProtocols.get(groupId);
  if (known !== undefined) return known;
  const d = await askCore(call, 'describeGroups', { groupIds: [groupId] });
  return d.groups?.[0]?.protocolType ?? '';
}

export const syncGroup: KafkaApi<SyncGroupRequest, SyncGroupResponse> = {
  api: SyncGroupApi,
  needs: ['syncGroup', 'describeGroups'],
  async handle(req, call) {
    const consumer = (await protocolTypeOf(req.groupId, call)) === CONSUMER_PROTOCOL_TYPE;
    const r = await askCore(call, 'syncGroup', {
      groupId: req.groupId,
      generationId: req.generationId,
      memberId: req.memberId,
      groupInstanceId: req.groupInstanceId ?? '',
      assignments: req.assignments.map((a) => ({ memberId: a.memberId, assignment: consumer ? assignmentFromKafka(a.assignment) : a.assignment })),
    });
    const assignment = r.assignment ?? new Uint8Array(0);
    return { errorCode: kafkaCode(r.errorCode), assignment: consumer ? assignmentToKafka(assignment) : Buffer.from(assignment) };
  },
  refused: (_req, code) => ({ errorCode: code }),
};
