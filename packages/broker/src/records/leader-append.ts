/**
 * The leader's append path shared by the binary Produce API and HTTP:
 * enforce min.insync.replicas for acks=all and append. The log validates the
 * batches (once, as Kafka's LogValidator in appendAsLeader) and stamps
 * log-append time when the topic asks for it. The log call is made before
 * this function returns, so callers that invoke it in arrival order keep
 * per-partition order.
 */
import type { Acks } from '@mq/protocol/acks';
import { MqError } from '@mq/protocol/errors';
import type { Partition } from '../topics/partition.js';
import type { Topic } from '../topics/topic-manager.js';

export interface LeaderAppendResult {
  baseOffset: number;
  lastOffset: number;
  /** Each batch's base offset when the batches do not lie back to back (see @mq/log-store's AppendResult). */
  batchBaseOffsets?: number[];
  /** -1 unless the topic uses LogAppendTime. */
  logAppendTime: number;
  logStartOffset: number;
}

export function leaderAppend(
  topic: Topic,
  partition: Partition,
  batches: Buffer,
  acks: Acks,
): Promise<LeaderAppendResult> {
  try {
    if (acks === -1 && partition.isr.length < topic.config.minInsyncReplicas) {
      throw new MqError(
        'NOT_ENOUGH_REPLICAS',
        `${topic.name}-${partition.index} has ${partition.isr.length} in-sync replicas, min.insync.replicas is ${topic.config.minInsyncReplicas}`,
      );
    }
    return partition.append(batches, { logAppendTime: topic.config.logAppendTime, maxBatchBytes: topic.config.maxMessageBytes }).then((r) => {
      const out: LeaderAppendResult = { baseOffset: r.baseOffset, lastOffset: r.lastOffset, logAppendTime: r.logAppendTime, logStartOffset: partition.logStartOffset };
      if (r.batchBaseOffsets) out.batchBaseOffsets = r.batchBaseOffsets;
      return out;
    });
  } catch (err) {
    return Promise.reject(err);
  }
}
