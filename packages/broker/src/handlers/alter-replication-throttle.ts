/**
 * AlterReplicationThrottle: sets (or, -1, reads) the replication throttle of
 * reassignment moves through the controller. Every broker applies it to the
 * follower fetches of the replicas it is adding (cluster/replica-manager.ts,
 * FollowerFetcher.setThrottle), at once and while moves run.
 */
import { MqError } from '@mq/protocol/errors';
import { requestDeadline } from '../request-limits.js';
import type { HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

/** 10 GB/s: more is no throttle at all (0). */
const MAX_THROTTLE = 10 * 1024 ** 3;

export function alterReplicationThrottle(d: HandlerDeps): Handler<'alterReplicationThrottle'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const rate = Number(req.bytesPerSec ?? -1);
    const deadline = requestDeadline(Date.now, req.timeoutMs ?? 0);
    if (rate === -1) return { bytesPerSec: md.replicationThrottle, previousBytesPerSec: md.replicationThrottle };
    if (!Number.isSafeInteger(rate) || rate < 0 || rate > MAX_THROTTLE) {
      throw new MqError('INVALID_REQUEST', `the replication throttle must be a number of bytes per second from 0 (none) to ${MAX_THROTTLE}, or -1 to read it; got ${rate}`);
    }
    const v = (await d.controller.submit({ type: 'setReplicationThrottle', bytesPerSec: rate }, deadline.check())) as { previous: number; bytesPerSec: number };
    ctx.logger.info({ bytesPerSec: rate, previous: v.previous }, 'replication throttle of reassignment moves changed');
    return { bytesPerSec: v.bytesPerSec, previousBytesPerSec: v.previous };
  };
}
