/**
 * DeleteRecords: moves a partition's log start up to an offset (at most the
 * high watermark; -1 means the high watermark), deleting the records below
 * it. Followers learn the new log start from their fetches.
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { wireError } from '../errors.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import type { RequestContext } from '../context.js';
import { notLeader, type HandlerDeps } from './deps.js';
import type { Handler, RequestOf } from './types.js';

/** The offset DeleteRecords asks for meaning "up to the high watermark". */
export const DELETE_TO_HIGH_WATERMARK = -1;

/** Deletes the records of one partition below `offset`; returns the log start after it. */
export async function deleteRecordsOf(
  partition: { readonly name: string; readonly highWatermark: number; readonly log: { readonly logStartOffset: number; deleteRecordsBefore(offset: number): Promise<void> } },
  offset: number,
): Promise<number> {
  const hw = partition.highWatermark;
  const target = offset === DELETE_TO_HIGH_WATERMARK ? hw : offset;
  if (!Number.isSafeInteger(target) || target < 0 || target > hw) {
    throw new MqError('OFFSET_OUT_OF_RANGE', `cannot delete records of ${partition.name} before offset ${offset}: it must lie in [0, ${hw}] (the high watermark), or be -1 for the high watermark`, {
      retriable: false,
    });
  }
  if (target > partition.log.logStartOffset) await partition.log.deleteRecordsBefore(target);
  return partition.log.logStartOffset;
}

/** One answer per partition named, each with its own error (logged once). */
export async function perDeleteRecordsPartition(
  req: RequestOf<'deleteRecords'>,
  ctx: RequestContext,
  run: (topic: string, partition: number, offset: number) => Promise<number>,
): Promise<mq.DeleteRecordsResponse.$Properties> {
  const topics: mq.DeleteRecordsTopicResponse.$Properties[] = [];
  for (const t of req.topics ?? []) {
    const name = t.name ?? '';
    const partitions: mq.DeleteRecordsPartitionResponse.$Properties[] = [];
    for (const p of t.partitions ?? []) {
      const index = p.partition ?? 0;
      const offset = Number(p.offset ?? 0);
      try {
        const lowWatermark = await run(name, index, offset);
        partitions.push({ partition: index, errorCode: 0, lowWatermark });
        ctx.logger.info({ topic: name, partition: index, offset, lowWatermark }, 'records deleted');
      } catch (err) {
        const e = wireError(err);
        if ((err as MqError).code !== 'NOT_LEADER') ctx.logger.info({ topic: name, partition: index, code: (err as MqError).code, err: e.errorMessage }, 'delete records refused');
        partitions.push({ partition: index, ...e, lowWatermark: -1 });
      }
    }
    topics.push({ name, partitions });
  }
  return { topics };
}

/** DeleteRecords on the partitions this broker leads; followers learn the new log start from their fetches. */
export function deleteRecords(d: HandlerDeps): Handler<'deleteRecords'> {
  return (req, ctx) =>
    perDeleteRecordsPartition(req, ctx, async (topic, index, offset) => {
      refuseInternal(topic, 'delete records of');
      const leader = d.replicas.leaderOf(topic, index);
      const hosted = d.replicas.hostedPartition(topic, index);
      if (!leader || !hosted) throw notLeader(d, topic, index);
      return deleteRecordsOf({ name: `${topic}-${index}`, highWatermark: leader.highWatermark, log: hosted.log }, offset);
    });
}
