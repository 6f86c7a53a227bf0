/**
 * The leader's append path shared by the binary Produce API and HTTP: check
 * the batches, enforce min.insync.replicas for acks=all, stamp log-append
 * time when the topic asks for it, and append. The log call is made before
 * this function returns, so callers that invoke it in arrival order keep
 * per-partition order.
 */
import { MqError } from '@mq/protocol/errors';
import type { Partition } from '../topics/partition.js';
import type { Topic } from '../topics/topic-manager.js';
import { checkProducedBatches, stampLogAppendTime } from './produce-batches.js';

export type Acks = 0 | 1 | -1;

export interface LeaderAppendResult {
  baseOffset: number;
  lastOffset: number;
  /** Each batch's base offset when the batches do not lie back to back (see @mq/log-store's AppendResult). */
  batchBaseOffsets?: number[];
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTime: number;
  logStartOffset: number;
  records: number;
}

export function parseAcks(acks: unknown): Acks {
  if (acks === 0 || acks === 1 || acks === -1) return acks;
  throw new MqError('INVALID_REQUIRED_ACKS', `acks must be 0, 1 or -1 (all), got ${String(acks)}`);
}

export function leaderAppend(
  topic: Topic,
  partition: Partition,
  batches: Buffer,
  acks: Acks,
  now: number,
): Promise<LeaderAppendResult> {
  try {
    const checked = checkProducedBatches(batches, topic.config.maxMessageBytes);
    if (acks === -1 && partition.isr.length < topic.config.minInsyncReplicas) {
      throw new MqError(
        'NOT_ENOUGH_REPLICAS',
        `${topic.name}-${partition.index} has ${partition.isr.length} in-sync replicas, min.insync.replicas is ${topic.config.minInsyncReplicas}`,
      );
    }
    const logAppendTime = topic.config.logAppendTime ? now : -1;
    if (logAppendTime >= 0) stampLogAppendTime(batches, checked, now);
    return partition.append(batches).then((r) => {
      const out: LeaderAppendResult = { baseOffset: r.baseOffset, lastOffset: r.lastOffset, logAppendTime, logStartOffset: partition.logStartOffset, records: checked.records };
      if (r.batchBaseOffsets) out.batchBaseOffsets = r.batchBaseOffsets;
      return out;
    });
  } catch (err) {
    return Promise.reject(err);
  }
}
