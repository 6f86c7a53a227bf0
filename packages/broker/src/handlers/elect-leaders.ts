/**
 * ElectLeaders: preferred-leader election on demand, by the same mechanism
 * as the active controller's automatic one (controller/preferred-leaders.ts,
 * the `electPreferred` command). Partitions named get an answer each
 * (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE, ...); a cluster-wide
 * election lists only the partitions it moved or could not.
 */
import { errorNumber } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { electable, preferredElections } from '../controller/preferred-leaders.js';
import { wireError } from '../errors.js';
import { requestDeadline } from '../request-limits.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function electLeaders(d: HandlerDeps): Handler<'electLeaders'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    const named = (req.topics ?? []).length > 0;
    let only: Map<string, number[] | undefined> | undefined;
    if (named) {
      only = new Map();
      for (const t of req.topics ?? []) {
        const ps = t.partitions ?? [];
        const prev = only.get(t.name ?? '');
        only.set(t.name ?? '', ps.length === 0 || (only.has(t.name ?? '') && prev === undefined) ? undefined : [...new Set([...(prev ?? []), ...ps])]);
      }
    }
    const list = preferredElections(md, only);
    const moves = electable(list);
    let moved = 0;
    const results: mq.IPartitionResult[] = [];
    if (moves.length > 0) {
      try {
        const v = (await d.controller.submit({ type: 'electPreferred', partitions: moves }, deadline.check())) as { moved: number };
        moved = v.moved;
      } catch (err) {
        ctx.logger.warn({ err: (err as Error).message, partitions: moves.length }, 'preferred leader election failed');
        for (const m of moves) results.push({ topic: m.topic, partition: m.partition, ...wireError(err) });
        return { results, moved: 0 };
      }
    }
    for (const e of list) {
      if (e.code === undefined) {
        const p = md.topic(e.topic)?.partitions[e.partition];
        const ok = p !== undefined && p.leader === p.replicas[0];
        results.push({ topic: e.topic, partition: e.partition, errorCode: ok ? 0 : errorNumber('PREFERRED_LEADER_NOT_AVAILABLE'), errorMessage: ok ? '' : `the preferred replica of ${e.topic}-${e.partition} did not take over (its state changed meanwhile)` });
      } else if (named || e.code !== 'ELECTION_NOT_NEEDED') {
        results.push({ topic: e.topic, partition: e.partition, errorCode: errorNumber(e.code), errorMessage: e.message ?? '' });
      }
    }
    return { results, moved };
  };
}
