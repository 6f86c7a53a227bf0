/**
 * ListPartitionReassignments: the reassignments in progress from this
 * broker's metadata, with the move's progress (adding replicas' log ends,
 * offset lag and estimated bytes still to copy) for the partitions this
 * broker leads. The admin client asks each moving partition's leader.
 */
import type { mq } from '@mq/protocol/wire';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function listPartitionReassignments(d: HandlerDeps): Handler<'listPartitionReassignments'> {
  const md = d.controller.metadata;
  return async (req) => {
    const only = new Set(req.topics ?? []);
    const out: mq.IOngoingReassignment[] = [];
    for (const r of md.reassignments()) {
      if (only.size > 0 && !only.has(r.topic)) continue;
      const p = r.record;
      const entry: mq.IOngoingReassignment = {
        topic: r.topic,
        partition: r.partition,
        replicas: [...p.replicas],
        targetReplicas: [...(p.targetReplicas ?? [])],
        addingReplicas: [...(p.adding ?? [])],
        removingReplicas: [...(p.removing ?? [])],
        leader: p.leader,
        isr: [...p.isr],
      };
      const leader = d.replicas.leaderOf(r.topic, r.partition);
      const log = d.replicas.hostedPartition(r.topic, r.partition)?.log;
      if (leader && log) {
        const end = leader.logEndOffset;
        const span = Math.max(1, end - leader.logStartOffset);
        const bytes = log.size;
        const status = leader.replicaStatus();
        entry.progressKnown = true;
        entry.leaderLogEndOffset = end;
        entry.leaderLogBytes = bytes;
        entry.addingProgress = (p.adding ?? []).map((id) => {
          const s = status.find((x) => x.brokerId === id);
          const logEnd = s ? s.logEndOffset : -1;
          const lag = Math.max(0, end - Math.max(logEnd, leader.logStartOffset));
          return { brokerId: id, logEndOffset: logEnd, offsetLag: lag, bytesBehind: Math.round((bytes * Math.min(lag, span)) / span), inIsr: p.isr.includes(id) };
        });
      }
      out.push(entry);
    }
    return { reassignments: out, brokerId: d.controller.options.brokerId };
  };
}
