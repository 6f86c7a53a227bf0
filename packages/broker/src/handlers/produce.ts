/**
 * Produce: validates acks, checks each partition's batches (header and CRC,
 * never the records), appends them as leader and answers the base offset of
 * each partition from that same append. acks=0 gets no response. With
 * acks=all and a timeout, a slow append answers REQUEST_TIMED_OUT (the data
 * may still be written, as in Kafka).
 */
import { durationProblem, MAX_TIMER_MS, refuse } from '../request-limits.js';
import type { mq } from '@mq/protocol/wire';
import { MqError } from '@mq/protocol/errors';
import { refusalLevel, toMqError, wireError } from '../errors.js';
import { parseAcks, type Acks } from '@mq/protocol/acks';
import { NO_RESPONSE, type Handler } from './types.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import type { RequestContext } from '../context.js';
import { logRefusal, notLeader, type HandlerDeps } from './deps.js';

function asBuffer(u: Uint8Array | null | undefined): Buffer {
  if (!u) return Buffer.alloc(0);
  return Buffer.isBuffer(u) ? u : Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

/** What one partition's append answers in a produce response. */
export interface PartitionAppended {
  baseOffset: number;
  /** Each batch's base offset, set only when the batches do not lie back to back (see @mq/log-store's AppendResult). */
  batchBaseOffsets?: number[];
  logAppendTime: number;
  logStartOffset: number;
}

/** The first Produce version whose answer can name each batch's base offset (batch_base_offsets). */
export const PRODUCE_PER_BATCH_OFFSETS_VERSION = 1;

/**
 * Appends one partition's batches as its leader (its PartitionLeader). It throws or rejects with a typed error
 * to refuse; it must hand the batches to the log before it returns, so that
 * requests on one connection keep their order.
 */
export type ProduceAppend = (
  topic: string,
  partition: number,
  batches: Buffer,
  acks: Acks,
  request: { now: number; timeoutMs: number; transactionalId: string },
  ctx: RequestContext,
) => Promise<PartitionAppended>;

/**
 * The produce handler around an append strategy: validates acks and the
 * request once, appends every partition (all started before any is awaited),
 * answers each partition's base offset from its own append or its error, and
 * sends no response for acks=0.
 */
export function produceHandler(
  append: ProduceAppend,
  options: { defaultTimeoutMs: number; logRefusal?: (ctx: RequestContext, topic: string, partition: number, err: unknown) => void },
): Handler<'produce'> {
  const logRefusal = options.logRefusal ?? logProduceError;
  return (req, ctx) => {
    let acks: Acks | undefined;
    let acksError: unknown;
    try {
      acks = parseAcks(req.acks ?? 1);
      refuse(req.timeoutMs ? durationProblem('produce timeout', req.timeoutMs, 1, MAX_TIMER_MS) : undefined);
    } catch (err) {
      acksError = err;
    }
    const request = { now: ctx.broker.clock(), timeoutMs: req.timeoutMs || options.defaultTimeoutMs, transactionalId: req.transactionalId ?? '' };
    const start = (name: string, index: number, records: Uint8Array | null | undefined): Promise<PartitionAppended> => {
      try {
        if (acksError) throw acksError;
        refuseInternal(name, 'produce to');
        return append(name, index, asBuffer(records), acks!, request, ctx);
      } catch (err) {
        return Promise.reject(err);
      }
    };
    const reqTopics = req.topics ?? [];
    const only = reqTopics.length === 1 ? reqTopics[0]! : undefined;
    if (only && only.partitions?.length === 1) {
      // One partition (every one-at-a-time send, and most requests of a
      // single-partition producer): one reaction on its append, no async frame, map or lists.
      const name = only.name ?? '';
      const p = only.partitions[0]!;
      const index = p.partition ?? 0;
      const answer = (entry: mq.PartitionProduceResponse.$Properties) => (acks === 0 ? NO_RESPONSE : { topics: [{ name, partitions: [entry] }] });
      return start(name, index, p.records).then(
        (r) => {
          ctx.broker.metrics.producedBytes(name, p.records?.length ?? 0, index);
          return answer(appendedEntry(ctx, name, index, r, logRefusal));
        },
        (err: unknown) => {
          logRefusal(ctx, name, index, err);
          return answer(refusedEntry(index, err));
        },
      );
    }
    const pending: Pending[] = [];
    for (const t of reqTopics) {
      const name = t.name ?? '';
      for (const p of t.partitions ?? []) {
        const index = p.partition ?? 0;
        const result = start(name, index, p.records);
        result.catch(() => undefined);
        pending.push({ topic: name, partition: index, result, bytes: p.records?.length ?? 0 });
      }
    }
    if (req.partialAnswers && ctx.answerPart && acks !== 0) return answerInParts(pending, ctx, ctx.answerPart, logRefusal);
    return answerAll(pending, acks, ctx, logRefusal);
  };
}

/**
 * A written partition's answer. Batches that do not lie back to back (an
 * idempotent retry that gained batches) are answered one base offset each; a
 * v0 request cannot carry that list and would resolve its later batches at
 * offsets holding other records, so it is refused instead (its records are
 * written, as after a timeout).
 */
function appendedEntry(
  ctx: RequestContext,
  topic: string,
  partition: number,
  r: PartitionAppended,
  logRefusal: (ctx: RequestContext, topic: string, partition: number, err: unknown) => void,
): mq.PartitionProduceResponse.$Properties {
  const entry: mq.PartitionProduceResponse.$Properties = { partition, errorCode: 0, baseOffset: r.baseOffset, logAppendTime: r.logAppendTime, logStartOffset: r.logStartOffset };
  if (r.batchBaseOffsets) {
    if (ctx.apiVersion < PRODUCE_PER_BATCH_OFFSETS_VERSION) {
      const err = new MqError(
        'UNSUPPORTED_VERSION',
        `the ${r.batchBaseOffsets.length} batches of this produce to ${topic}-${partition} were written at offsets that are not back to back (a retry that repeated batches already written); ` +
          `produce v${ctx.apiVersion} can answer only one base offset, so none is given: upgrade the client to produce v${PRODUCE_PER_BATCH_OFFSETS_VERSION}`,
      );
      logRefusal(ctx, topic, partition, err);
      return refusedEntry(partition, err);
    }
    entry.batchBaseOffsets = r.batchBaseOffsets;
  }
  return entry;
}

function refusedEntry(partition: number, err: unknown): mq.PartitionProduceResponse.$Properties {
  return { partition, ...wireError(err), baseOffset: -1, logAppendTime: -1, logStartOffset: -1 };
}

type Pending = { topic: string; partition: number; result: Promise<PartitionAppended>; bytes: number };
type LogRefusal = (ctx: RequestContext, topic: string, partition: number, err: unknown) => void;

/** A partition's answer once its append settles (never rejects): its offsets, or its refusal, logged once. */
function settledEntry(item: Pending, ctx: RequestContext, logRefusal: LogRefusal): Promise<mq.PartitionProduceResponse.$Properties> {
  return item.result.then(
    (appended) => {
      ctx.broker.metrics.producedBytes(item.topic, item.bytes, item.partition);
      return appendedEntry(ctx, item.topic, item.partition, appended, logRefusal);
    },
    (err: unknown) => {
      logRefusal(ctx, item.topic, item.partition, err);
      return refusedEntry(item.partition, err);
    },
  );
}

/** The produce answer of these partitions' entries, grouped by topic. */
function produceAnswer(items: ReadonlyArray<{ topic: string; entry: mq.PartitionProduceResponse.$Properties }>): mq.ProduceResponse.$Properties {
  const topics = new Map<string, mq.PartitionProduceResponse.$Properties[]>();
  for (const { topic, entry } of items) {
    let list = topics.get(topic);
    if (!list) topics.set(topic, (list = []));
    list.push(entry);
  }
  return { topics: [...topics].map(([name, partitions]) => ({ name, partitions })) };
}

/** Waits for every partition's append (all started already) and answers each, in request order. */
async function answerAll(pending: Pending[], acks: Acks | undefined, ctx: RequestContext, logRefusal: LogRefusal): Promise<mq.ProduceResponse.$Properties | typeof NO_RESPONSE> {
  const entries = await Promise.all(pending.map((item) => settledEntry(item, ctx, logRefusal)));
  if (acks === 0) return NO_RESPONSE;
  return produceAnswer(pending.map((item, i) => ({ topic: item.topic, entry: entries[i]! })));
}

/**
 * Answers each partition as its append completes (a produce with
 * partial_answers, on a door that can send parts): partitions completing in
 * the same turn share one part; the last part, the handler's result, holds
 * what completed after the last part was sent. So a partition waiting for a
 * slow follower (acks=all) holds back only itself.
 */
function answerInParts(pending: Pending[], ctx: RequestContext, answerPart: (part: unknown) => void, logRefusal: LogRefusal): Promise<mq.ProduceResponse.$Properties> {
  return new Promise((resolve) => {
    let left = pending.length;
    let ready: Array<{ topic: string; entry: mq.PartitionProduceResponse.$Properties }> = [];
    let flushQueued = false;
    const flush = () => {
      flushQueued = false;
      if (left === 0 || ready.length === 0) return; // the last part carries them
      const part = produceAnswer(ready);
      ready = [];
      answerPart(part);
    };
    for (const item of pending) {
      void settledEntry(item, ctx, logRefusal).then((entry) => {
        ready.push({ topic: item.topic, entry });
        if (--left === 0) {
          resolve(produceAnswer(ready));
          return;
        }
        if (!flushQueued) {
          flushQueued = true;
          queueMicrotask(flush);
        }
      });
    }
  });
}

function logProduceError(ctx: RequestContext, topic: string, partition: number, err: unknown): void {
  const e = toMqError(err);
  const fields = { conn: ctx.connection.id, remote: ctx.connection.remote, topic, partition, code: e.code, err: e.message };
  const level = refusalLevel(e);
  if (level === 'error') ctx.logger.error({ ...fields, stack: (err as Error).stack }, 'produce failed');
  else if (level === 'debug') ctx.logger.debug(fields, 'produce abandoned');
  else ctx.logger.warn(fields, 'produce refused');
}

/** Produce to the partitions this broker leads, through their PartitionLeader (acks, min.insync.replicas, the HW). */
export function produce(d: HandlerDeps): Handler<'produce'> {
  return produceHandler(
    (name, index, batches, acks, request, ctx) => {
      const leader = d.replicas.leaderOf(name, index);
      const hosted = d.replicas.hostedPartition(name, index);
      if (!leader || !hosted) throw notLeader(d, name, index);
      // append() hands the batches to the log, which validates them (once) and stamps log-append time, before it returns: arrival order is kept.
      const options = {
        acks,
        timeoutMs: request.timeoutMs,
        signal: ctx.connection.signal,
        logAppendTime: hosted.config.logAppendTime,
        maxBatchBytes: hosted.config.maxMessageBytes,
        transactional: !!request.transactionalId,
      };
      // The leader's result is a PartitionAppended (with the last offset besides): no copy of it per request.
      return leader.append(batches, options);
    },
    { defaultTimeoutMs: 30_000, logRefusal: (ctx, topic, partition, err) => logRefusal(ctx, 'produce', topic, partition, err) },
  );
}
