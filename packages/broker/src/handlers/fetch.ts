/**
 * Fetch, consumers and followers alike: @mq/replication's handleFetch over
 * the partitions led here, records read into the broker's pooled buffers
 * (given back once the response is written), within one response budget.
 */
import type { mq } from '@mq/protocol/wire';
import type { ReadBufferPool } from '@mq/log-store';
import { errorNumber } from '@mq/protocol/errors';
import { handleFetch, type FetchRequest } from '@mq/replication';
import { Slicer } from '../slicer.js';
import { whyNotLed, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

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

/**
 * What ends a connection's long polls: the connection closing or the broker
 * shutting down. One combined signal per connection, made at its first
 * fetch: AbortSignal.any per request cost ~2% of a busy broker's CPU (each
 * also stays registered on both sources until collected).
 */
const fetchSignals = new WeakMap<object, AbortSignal>();
function fetchSignal(connection: { readonly signal: AbortSignal }, shutdown: AbortSignal): AbortSignal {
  let s = fetchSignals.get(connection);
  if (!s) fetchSignals.set(connection, (s = AbortSignal.any([connection.signal, shutdown])));
  return s;
}

/** Fetch for consumers and followers alike: @mq/replication's handleFetch over the partitions led here (one long poll, parallel pooled reads). */
export function fetch(d: HandlerDeps): Handler<'fetch'> {
  return async (req, ctx) => {
    const b = ctx.broker;
    const cfg = b.config;
    const replicaId = req.replicaId ?? -1;
    const request: FetchRequest = {
      replicaId: replicaId > 0 ? replicaId : -1,
      replicaEpoch: Number(req.replicaEpoch ?? -1),
      maxWaitMs: Math.min(req.maxWaitMs ?? 0, cfg.int('fetch.max.wait.ms')),
      minBytes: req.minBytes ?? 0,
      maxBytes: fetchResponseMaxBytes(req.maxBytes, cfg, b.maxFrameBytes),
      // Consumers only: read_committed (1) reads up to the last stable offset and is told the aborted transactions.
      isolationLevel: replicaId > 0 ? 0 : req.isolationLevel === 1 ? 1 : 0,
      partitions: (req.topics ?? []).flatMap((t) =>
        (t.partitions ?? []).map((p) => ({
          topic: t.name ?? '',
          topicId: t.topicId ?? '',
          partition: p.partition ?? 0,
          fetchOffset: Number(p.fetchOffset ?? 0),
          partitionMaxBytes: p.partitionMaxBytes || cfg.int('max.partition.fetch.bytes'),
          currentLeaderEpoch: p.currentLeaderEpoch ?? -1,
          logStartOffset: Number(p.logStartOffset ?? -1),
          lastFetchedEpoch: replicaId > 0 ? (p.lastFetchedEpoch ?? -1) : -1,
        })),
      ),
    };
    const signal = fetchSignal(ctx.connection, b.shutdownSignal);
    const res = await handleFetch(
      request,
      // Records are read into the broker's pooled buffers; the connection gives them back once the response is written.
      {
        timers: d.timers,
        leaders: (t, p) => d.replicas.leaderOf(t, p),
        hosts: (t, p) => d.replicas.hosts(t, p),
        pool: b.readBuffers,
        parked: b.metrics.parkedFetches,
        // A fetch naming thousands of partitions yields between reads (issue 22: fetch reads of 138 ms in one step).
        slicer: new Slicer(undefined, b.sliceClock),
        // Followers' fetches of partitions they are being added to go within the replication throttle, here as on their side.
        ...(replicaId > 0 ? { leaderThrottle: d.replicas.leaderThrottle() } : {}),
      },
      signal,
    );
    // One entry per topic name and the topic id asked about (a leader refuses another incarnation; consumers name none).
    const out = new Map<string, { name: string; topicId: string; partitions: mq.FetchPartitionResponse.$Properties[] }>();
    res.partitions.forEach((p, i) => {
      const asked = request.partitions[i]!.topicId ?? '';
      const k = `${p.topic}\u0000${asked}`;
      let entry = out.get(k);
      if (!entry) out.set(k, (entry = { name: p.topic, topicId: asked, partitions: [] }));
      const list = entry.partitions;
      if (p.records?.length) b.metrics.fetchedBytes(p.topic, p.records.length);
      // Not led here: say why, from the metadata (deleted topic or incarnation, no leader, another leader, an offline replica here).
      const why = p.errorCode === 'NOT_LEADER' || p.errorCode === 'UNKNOWN_TOPIC_OR_PARTITION' ? whyNotLed(d, p.topic, p.partition, asked) : undefined;
      const code = why?.code ?? p.errorCode;
      const message = why?.message ?? p.errorMessage ?? '';
      if (code !== 'NONE' && code !== 'NOT_LEADER' && code !== 'LEADER_NOT_AVAILABLE' && code !== 'OFFSET_OUT_OF_RANGE') {
        ctx.logger.warn({ conn: ctx.connection.id, replicaId: request.replicaId, topic: p.topic, partition: p.partition, code, err: message }, 'fetch refused');
      }
      list.push({
        partition: p.partition,
        errorCode: errorNumber(code),
        errorMessage: message,
        highWatermark: p.highWatermark,
        lastStableOffset: p.lastStableOffset ?? p.highWatermark,
        abortedTransactions: p.abortedTransactions ?? [],
        logStartOffset: p.logStartOffset,
        logEndOffset: p.logEndOffset,
        records: p.records,
        divergingEpoch: p.divergingEpoch ? { epoch: p.divergingEpoch.epoch, endOffset: p.divergingEpoch.endOffset } : null,
        currentLeaderId: p.currentLeaderId,
        currentLeaderEpoch: p.currentLeaderEpoch,
      });
    });
    return { topics: [...out.values()] };
  };
}
