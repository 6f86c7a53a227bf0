/**
 * Fetch: raw batches from several partitions, each from its own offset and
 * up to its own byte limit, the whole response bounded by max_bytes (and the
 * broker's fetch.max.bytes). The first partition with data always returns at
 * least one whole batch so a consumer makes progress; later partitions stop
 * when the budget is spent. With min_bytes/max_wait_ms the request waits
 * (long poll) until enough bytes were appended, the wait ends, the
 * connection closes or the broker shuts down.
 */
import type { mq } from '@mq/protocol/wire';
import type { ReadBufferPool } from '@mq/log-store';
import { MqError } from '@mq/protocol/errors';
import { toMqError, wireError } from '../errors.js';
import type { Partition } from '../topics/partition.js';
import type { RequestContext } from '../context.js';
import type { Handler } from './types.js';

interface Slot {
  topic: string;
  index: number;
  offset: number;
  maxBytes: number;
  leaderEpoch: number;
  partition?: Partition;
  error?: unknown;
}

const EMPTY = Buffer.alloc(0);

/** What one partition's read gave: its bytes, or the error to answer with. */
type ReadOutcome = { records: Buffer } | { error: unknown };

async function readSlot(s: Slot, maxBytes: number, ctx: RequestContext): Promise<ReadOutcome> {
  try {
    const p = s.partition;
    if (s.error) throw s.error;
    if (!p || p.isClosed) {
      // Deleted meanwhile (UNKNOWN_TOPIC_OR_PARTITION) or no longer led here.
      ctx.broker.topics.partition(s.topic, s.index);
      throw new MqError('NOT_LEADER', `${s.topic}-${s.index} is no longer served by this broker`);
    }
    p.checkLeaderEpoch(s.leaderEpoch);
    // No budget left: the partition is checked (errors are still answered) but not read.
    if (maxBytes <= 0) return { records: EMPTY };
    return { records: await p.read(s.offset, maxBytes, ctx.broker.readBuffers) };
  } catch (error) {
    return { error };
  }
}

/**
 * Reads every slot. When the partitions' limits together fit the response
 * budget (the usual case: 1 MiB per partition, 16 MiB per response) the
 * partitions are read at once; otherwise one after another, each with what
 * is left of the budget. Either way only the first data in the response may
 * exceed the budget (a batch larger than the limit), later data that would
 * is left out and fetched next time.
 */
async function readAll(slots: Slot[], maxBytes: number, ctx: RequestContext) {
  let sum = 0;
  for (const s of slots) sum += s.maxBytes;
  const outcomes: ReadOutcome[] = [];
  if (sum <= maxBytes) {
    outcomes.push(...(await Promise.all(slots.map((s) => readSlot(s, Math.max(1, s.maxBytes), ctx)))));
  } else {
    let total = 0;
    for (const s of slots) {
      const budget = maxBytes - total;
      const o = await readSlot(s, budget > 0 || total === 0 ? Math.max(1, Math.min(s.maxBytes, budget)) : 0, ctx);
      if ('records' in o) total += o.records.length;
      outcomes.push(o);
    }
  }
  let total = 0;
  let hasError = false;
  const out = new Map<string, mq.FetchPartitionResponse.$Properties[]>();
  for (let i = 0; i < slots.length; i++) {
    const s = slots[i]!;
    const o = outcomes[i]!;
    const p = s.partition;
    let entry: mq.FetchPartitionResponse.$Properties;
    if ('records' in o) {
      let records = o.records;
      // Only the first data in the response may exceed the budget.
      if (total > 0 && total + records.length > maxBytes) {
        ctx.broker.readBuffers.release(records);
        records = EMPTY;
      }
      total += records.length;
      entry = {
        partition: s.index,
        errorCode: 0,
        highWatermark: p!.highWatermark,
        lastStableOffset: p!.highWatermark,
        logStartOffset: p!.logStartOffset,
        logEndOffset: p!.logEndOffset,
        records,
        currentLeaderId: p!.leaderId,
        currentLeaderEpoch: p!.leaderEpoch,
      };
    } else {
      const err = o.error;
      hasError = true;
      const e = toMqError(err);
      if (e.code === 'UNKNOWN') ctx.logger.error({ err, topic: s.topic, partition: s.index }, 'fetch failed');
      else if (e.code !== 'NOT_LEADER') ctx.logger.warn({ conn: ctx.connection.id, topic: s.topic, partition: s.index, code: e.code, err: e.message }, 'fetch refused');
      entry = {
        partition: s.index,
        ...wireError(err),
        highWatermark: p && !p.isClosed ? p.highWatermark : -1,
        lastStableOffset: -1,
        logStartOffset: p && !p.isClosed ? p.logStartOffset : -1,
        logEndOffset: -1,
        records: EMPTY,
        currentLeaderId: p?.leaderId ?? -1,
        currentLeaderEpoch: p?.leaderEpoch ?? -1,
      };
    }
    let list = out.get(s.topic);
    if (!list) out.set(s.topic, (list = []));
    list.push(entry);
  }
  return { response: { topics: [...out].map(([name, partitions]) => ({ name, partitions })) }, total, hasError };
}

/**
 * Resolves when `needed` more bytes have been appended across `partitions`,
 * after `waitMs`, or when either signal aborts.
 */
function waitForAppends(partitions: Partition[], needed: number, waitMs: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const offs: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      for (const off of offs) off();
      for (const s of signals) s.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, waitMs);
    for (const s of signals) {
      if (s.aborted) return done();
      s.addEventListener('abort', done, { once: true });
    }
    for (const p of new Set(partitions)) {
      offs.push(
        p.onAppend((bytes) => {
          seen += bytes;
          if (seen >= needed || bytes === 0) done();
        }),
      );
    }
  });
}

/** Gives a fetch response's pooled record buffers back to the pool (the response will not be written from them). */
export function releaseFetchRecords(response: mq.FetchResponse.$Properties, pool: ReadBufferPool): void {
  for (const t of response.topics ?? []) for (const p of t.partitions ?? []) if (p.records) pool.release(p.records);
}

/** Room a fetch response frame keeps for everything but the records. */
const FETCH_FRAME_OVERHEAD_BYTES = 64 * 1024;

/**
 * The records budget of one fetch response: the request's max_bytes capped
 * by fetch.max.bytes and what fits in a frame, and never below 1 (a fetch
 * always returns at least one whole batch, even when max.frame.bytes leaves
 * no room beyond the frame overhead). Consumers and followers alike.
 */
export function fetchResponseMaxBytes(requested: number | null | undefined, config: { int(name: string): number }, maxFrameBytes: number): number {
  const brokerMax = Math.max(1, Math.min(config.int('fetch.max.bytes'), maxFrameBytes - FETCH_FRAME_OVERHEAD_BYTES));
  return requested ? Math.max(1, Math.min(requested, brokerMax)) : brokerMax;
}

export const fetch: Handler<'fetch'> = async (req, ctx) => {
  const b = ctx.broker;
  const cfg = b.config;
  const maxBytes = fetchResponseMaxBytes(req.maxBytes, cfg, b.maxFrameBytes);
  const defaultPartitionBytes = cfg.int('max.partition.fetch.bytes');
  const maxWait = Math.min(req.maxWaitMs ?? 0, cfg.int('fetch.max.wait.ms'));
  const minBytes = req.minBytes ?? 0;

  const slots: Slot[] = [];
  for (const t of req.topics ?? []) {
    const topic = t.name ?? '';
    for (const fp of t.partitions ?? []) {
      const slot: Slot = {
        topic,
        index: fp.partition ?? 0,
        offset: fp.fetchOffset ?? 0,
        maxBytes: fp.partitionMaxBytes || defaultPartitionBytes,
        leaderEpoch: fp.currentLeaderEpoch ?? -1,
      };
      try {
        slot.partition = b.topics.partition(topic, slot.index);
      } catch (err) {
        slot.error = err;
      }
      slots.push(slot);
    }
  }

  let result = await readAll(slots, maxBytes, ctx);
  if (result.total >= minBytes || maxWait <= 0 || result.hasError || slots.length === 0) return result.response;
  const partitions = slots.map((s) => s.partition!).filter(Boolean);
  await waitForAppends(partitions, minBytes - result.total, maxWait, [ctx.connection.signal, b.shutdownSignal]);
  if (ctx.connection.signal.aborted) return result.response;
  releaseFetchRecords(result.response, b.readBuffers);
  result = await readAll(slots, maxBytes, ctx);
  return result.response;
};
