/**
 * DescribeQuorum (Kafka's KIP-595): the metadata quorum as the active
 * controller sees it: leader and term, commit index, and each voter's and
 * learner's Raft address, log end and lag (controller/quorum.ts).
 */
import type { QuorumView } from '../controller/quorum.js';
import { requestDeadline } from '../request-limits.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function describeQuorum(d: HandlerDeps): Handler<'describeQuorum'> {
  return async () => {
    const deadline = requestDeadline(Date.now, 0);
    const v = (await d.controller.submit({ type: 'describeQuorum' }, deadline.check())) as QuorumView;
    return {
      leaderId: v.leaderId,
      leaderEpoch: v.term,
      highWatermark: v.highWatermark,
      members: v.members.map((m) => ({ id: m.id, address: m.address, voter: m.voter, logEnd: m.logEnd, lag: m.lag, recentlyActive: m.recentlyActive })),
    };
  };
}
