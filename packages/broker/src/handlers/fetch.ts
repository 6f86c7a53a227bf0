/**
 * What every fetch shares, consumers and followers alike (the handler is the
 * replica manager's, through @mq/replication's handleFetch): the response's
 * records budget, and giving pooled record buffers back.
 */
import type { mq } from '@mq/protocol/wire';
import type { ReadBufferPool } from '@mq/log-store';

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
