/**
 * DecommissionBroker: marks a broker decommissioned in the metadata log (no
 * replica is placed or moved on it from then on) and starts moving every
 * replica it holds to the other brokers (controller/balance.ts), as
 * reassignments. Refused with INVALID_REPLICATION_FACTOR, nothing changed,
 * when the other live brokers cannot hold some partition's replication
 * factor. The answer says how many replicas are still on the broker; once
 * none is, it can be stopped. Asking again is harmless (moves already
 * started are not started twice) and picks up partitions that were moving.
 */
import { MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';
import { planDecommission } from '../controller/balance.js';
import type { ReassignmentResult } from '../controller/metadata-state.js';
import { wireError } from '../errors.js';
import { requestDeadline } from '../request-limits.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

/** Reassignments per command (a command is one Raft entry). */
const MOVES_PER_COMMAND = 500;

export function decommissionBroker(d: HandlerDeps): Handler<'decommissionBroker'> {
  const md = d.controller.metadata;
  const remaining = (id: number) => md.topics().reduce((n, t) => n + t.partitions.filter((p) => p.replicas.includes(id)).length, 0);
  return async (req, ctx) => {
    const id = req.brokerId ?? 0;
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    try {
      if (!md.broker(id)) throw new MqError('UNKNOWN_NODE', `broker ${id} is not registered in the cluster`);
      if (req.cancel) {
        await d.controller.submit({ type: 'decommissionBroker', id, decommissioned: false }, deadline.check());
        ctx.logger.info({ broker: id }, `broker ${id} is no longer decommissioned`);
        return { moves: [], remainingReplicas: remaining(id) };
      }
      await d.controller.catchUp(Math.min(5000, deadline.remaining()));
      planDecommission(md, id); // refused here, before anything changes, when the others cannot hold the replicas
      await d.controller.submit({ type: 'decommissionBroker', id, decommissioned: true }, deadline.check());
      const { moves } = planDecommission(md, id);
      const out: { topic: string; partition: number; errorCode: number; errorMessage: string }[] = [];
      for (let i = 0; i < moves.length; i += MOVES_PER_COMMAND) {
        const batch = moves.slice(i, i + MOVES_PER_COMMAND);
        const v = (await d.controller.submit({ type: 'alterReassignments', partitions: batch.map((m) => ({ topic: m.topic, partition: m.partition, replicas: m.to })) }, deadline.check())) as { results: ReassignmentResult[] };
        for (const r of v.results) {
          out.push({ topic: r.topic, partition: r.partition, errorCode: r.code ? errorNumber(r.code as ErrorCode) : 0, errorMessage: r.message ?? '' });
        }
      }
      ctx.logger.info({ broker: id, moves: moves.length }, `decommissioning broker ${id}: moving ${moves.length} replica(s) off it`);
      return { moves: out, remainingReplicas: remaining(id) };
    } catch (err) {
      const e = wireError(err);
      ctx.logger.warn({ broker: id, code: e.errorCode, err: e.errorMessage }, 'decommission refused');
      throw err;
    }
  };
}
