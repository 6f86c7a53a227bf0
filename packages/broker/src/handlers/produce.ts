/**
 * Produce: validates acks, checks each partition's batches (header and CRC,
 * never the records), appends them as leader and answers the base offset of
 * each partition from that same append. acks=0 gets no response. With
 * acks=all and a timeout, a slow append answers REQUEST_TIMED_OUT (the data
 * may still be written, as in Kafka).
 */
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { toMqError, wireError } from '../errors.js';
import { leaderAppend, parseAcks, type Acks, type LeaderAppendResult } from '../records/leader-append.js';
import { NO_RESPONSE, type Handler } from './types.js';
import { refuseInternal } from '../topics/topic-name.js';
import type { RequestContext } from '../context.js';

function asBuffer(u: Uint8Array | null | undefined): Buffer {
  if (!u) return Buffer.alloc(0);
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

const MAX_TIMER_MS = 2 ** 31 - 1;

function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  // Node timers cannot wait longer than 2^31-1 ms (a longer one would fire at once).
  if (ms <= 0 || ms > MAX_TIMER_MS) return p;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new MqError('REQUEST_TIMED_OUT', `${what} was not acknowledged within ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

export const produce: Handler<'produce'> = async (req, ctx) => {
  const b = ctx.broker;
  let acks: Acks | undefined;
  let acksError: unknown;
  try {
    acks = parseAcks(req.acks ?? 1);
  } catch (err) {
    acksError = err;
  }
  const now = b.clock();
  const timeoutMs = req.timeoutMs ?? 0;
  const pending: Array<{ topic: string; partition: number; result: Promise<LeaderAppendResult> }> = [];
  for (const t of req.topics ?? []) {
    const name = t.name ?? '';
    for (const p of t.partitions ?? []) {
      const index = p.partition ?? 0;
      let result: Promise<LeaderAppendResult>;
      try {
        if (acksError) throw acksError;
        if (req.transactionalId) throw new MqError('INVALID_REQUEST', 'transactions are not supported by this broker');
        refuseInternal(name, 'produce to');
        const topic = b.topics.require(name);
        const partition = b.topics.partition(name, index);
        result = leaderAppend(topic, partition, asBuffer(p.records), acks!, now);
        if (acks === -1) result = withTimeout(result, timeoutMs, `produce to ${name}-${index}`);
      } catch (err) {
        result = Promise.reject(err);
      }
      result.catch(() => undefined);
      pending.push({ topic: name, partition: index, result });
    }
  }

  const topics = new Map<string, mq.PartitionProduceResponse.$Properties[]>();
  for (const item of pending) {
    let entry: mq.PartitionProduceResponse.$Properties;
    try {
      const r = await item.result;
      entry = { partition: item.partition, errorCode: 0, baseOffset: r.baseOffset, logAppendTime: r.logAppendTime, logStartOffset: r.logStartOffset };
    } catch (err) {
      logProduceError(ctx, item.topic, item.partition, err);
      entry = { partition: item.partition, ...wireError(err), baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
    }
    let list = topics.get(item.topic);
    if (!list) topics.set(item.topic, (list = []));
    list.push(entry);
  }
  if (acks === 0) return NO_RESPONSE;
  return { topics: [...topics].map(([name, partitions]) => ({ name, partitions })) };
};

function logProduceError(ctx: RequestContext, topic: string, partition: number, err: unknown): void {
  const e = toMqError(err);
  const fields = { conn: ctx.connection.id, remote: ctx.connection.remote, topic, partition, code: e.code, err: e.message };
  if (e.code === 'UNKNOWN' || e.code === 'STORAGE_ERROR') ctx.logger.error({ ...fields, stack: (err as Error).stack }, 'produce failed');
  else ctx.logger.warn(fields, 'produce refused');
}
