/**
 * AlterRaftVoters (Kafka's KIP-853 AddRaftVoter and RemoveRaftVoter): adds a
 * controller to the metadata quorum, or removes one, through the active
 * controller (here or forwarded), one single-server change at a time
 * (controller/quorum.ts). Refusals: DUPLICATE_VOTER, UNKNOWN_NODE (not a
 * member), INVALID_REQUEST (the last voter, a bad address),
 * VOTER_CHANGE_IN_PROGRESS (retriable: another change is not done yet).
 */
import { MqError } from '@mq/protocol/errors';
import { parseVoterAddress } from '../controller/quorum.js';
import { wireError } from '../errors.js';
import { requestDeadline } from '../request-limits.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

export function alterRaftVoters(d: HandlerDeps): Handler<'alterRaftVoters'> {
  return async (req, ctx) => {
    const id = req.voterId ?? 0;
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    try {
      if (!Number.isSafeInteger(id) || id < 1) throw new MqError('INVALID_REQUEST', `a controller id is an integer >= 1, got ${id}`);
      let cs: { voters: number[]; learners: number[] };
      if (req.remove) {
        cs = (await d.controller.submit({ type: 'removeVoter', id }, deadline.check())) as typeof cs;
        ctx.logger.info({ id, voters: cs.voters }, `controller ${id} removed from the metadata quorum`);
      } else {
        const { host, port } = parseVoterAddress(req.address ?? '');
        cs = (await d.controller.submit({ type: 'addVoter', id, host, port }, deadline.check())) as typeof cs;
        ctx.logger.info({ id, address: req.address, voters: cs.voters }, `controller ${id} added to the metadata quorum`);
      }
      return { voters: cs.voters, learners: cs.learners };
    } catch (err) {
      const e = wireError(err);
      ctx.logger.warn({ id, remove: req.remove ?? false, code: e.errorCode, err: e.errorMessage }, 'controller quorum change refused');
      throw err;
    }
  };
}
