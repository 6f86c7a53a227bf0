/**
 * AlterPartitionReassignments: starts or cancels partition reassignments
 * through the controller (the metadata log holds the move, so it survives a
 * controller failover or a broker restart). Each partition is answered on its
 * own; the state machine checks every rule (controller/metadata-state.ts).
 */
import { MqError, errorNumber, type ErrorCode } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { checkCommand, commandLimitsOf } from '../controller/command-limits.js';
import type { AlterReassignmentsCommand } from '../controller/commands.js';
import type { ReassignmentResult } from '../controller/metadata-state.js';
import { wireError } from '../errors.js';
import { requestDeadline } from '../request-limits.js';
import { logRefusal, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function alterPartitionReassignments(d: HandlerDeps): Handler<'alterPartitionReassignments'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    const entries: AlterReassignmentsCommand['partitions'] = [];
    const allow = req.allowReplicationFactorChange === true;
    for (const t of req.topics ?? []) {
      for (const p of t.partitions ?? []) {
        entries.push({ topic: t.name ?? '', partition: p.partition ?? 0, replicas: p.cancel ? null : [...(p.replicas ?? [])], ...(allow ? { allowReplicationFactorChange: true } : {}) });
      }
    }
    const all = (err: unknown): mq.IAlterPartitionReassignmentsResponse => ({
      results: entries.map((e) => {
        logRefusal(ctx, 'reassign partition', e.topic, e.partition, err);
        return { topic: e.topic, partition: e.partition, ...wireError(err) };
      }),
    });
    if (entries.length === 0) return { results: [] };
    let command: AlterReassignmentsCommand;
    try {
      command = checkCommand({ type: 'alterReassignments', partitions: entries }, md, commandLimitsOf(d.config));
    } catch (err) {
      return all(err);
    }
    let results: ReassignmentResult[];
    try {
      const v = (await d.controller.submit(command, deadline.check())) as { results: ReassignmentResult[] };
      results = v.results;
    } catch (err) {
      return all(err);
    }
    return {
      results: results.map((r) => {
        if (!r.code) return { topic: r.topic, partition: r.partition, errorCode: 0, errorMessage: '' };
        const e = new MqError(r.code as ErrorCode, r.message ?? r.code);
        logRefusal(ctx, 'reassign partition', r.topic, r.partition, e);
        return { topic: r.topic, partition: r.partition, errorCode: errorNumber(e.code), errorMessage: e.message };
      }),
    };
  };
}
