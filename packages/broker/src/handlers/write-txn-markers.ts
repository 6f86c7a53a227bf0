/**
 * WriteTxnMarkers (inter-broker): the transaction coordinator asks the leader
 * of each partition of a transaction to append its marker, a control batch
 * (commit or abort) with the producer's id and epoch, acks=all. The log ends
 * the producer's open transaction there (the last stable offset moves; an
 * abort enters the aborted-transactions index). A resent marker (a
 * coordinator that timed out or failed over) is appended again, acks=all: a
 * marker with nothing open changes nothing, and the answer then means the
 * ISR has one. A marker with an epoch older than the partition's is refused
 * (INVALID_PRODUCER_EPOCH). Served on the inter-broker listener only.
 */
import { encodeMarkerBatch } from '@mq/protocol/batch';
import { errorNumber, MqError } from '@mq/protocol/errors';
import type { mq } from '@mq/protocol/wire';
import { toMqError } from '../errors.js';
import { logRefusal, notLeader, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';
import type { RequestContext } from '../context.js';

export interface MarkerResult {
  producerId: number;
  topic: string;
  partition: number;
  error?: MqError;
}

/** Appends every marker of the request to the partitions led here (all started at once); one result per marker and partition. */
export async function appendTxnMarkers(d: HandlerDeps, markers: readonly mq.IWriteTxnMarker[], timeoutMs: number, now: number): Promise<MarkerResult[]> {
  const pending: Array<Promise<MarkerResult>> = [];
  for (const m of markers) {
    const producerId = Number(m.producerId ?? -1);
    const producerEpoch = m.producerEpoch ?? -1;
    for (const t of m.topics ?? []) {
      const topic = t.name ?? '';
      for (const partition of t.partitions ?? []) {
        pending.push(
          (async (): Promise<MarkerResult> => {
            try {
              if (producerId < 0 || producerEpoch < 0) throw new MqError('INVALID_REQUEST', `marker with producer id ${producerId} and epoch ${producerEpoch}`);
              const leader = d.replicas.leaderOf(topic, partition);
              const hosted = d.replicas.hostedPartition(topic, partition);
              if (!leader || !hosted) throw notLeader(d, topic, partition);
              // Always appended with acks=all, also when the marker looks written already (a coordinator resends
              // after a timeout): that earlier marker may be in this leader's log only, and answering without
              // waiting for the ISR would let the coordinator complete a transaction a new leader still has open.
              // A second marker with nothing open changes nothing but the epoch.
              const batch = encodeMarkerBatch({ producerId, producerEpoch, committed: m.committed === true, coordinatorEpoch: m.coordinatorEpoch ?? 0, now });
              await leader.append(batch, { acks: -1, timeoutMs, coordinator: true });
              d.onTxnMarker?.(topic, partition, producerId, m.committed === true);
              return { producerId, topic, partition };
            } catch (err) {
              return { producerId, topic, partition, error: toMqError(err) };
            }
          })(),
        );
      }
    }
  }
  return Promise.all(pending);
}

export function writeTxnMarkers(d: HandlerDeps): Handler<'writeTxnMarkers'> {
  return async (req, ctx: RequestContext) => {
    const timeoutMs = Math.min(Math.max(1, req.timeoutMs || d.config.int('transaction.marker.timeout.ms')), 60_000);
    const results = await appendTxnMarkers(d, req.markers ?? [], timeoutMs, ctx.broker.clock());
    return {
      results: results.map((r) => {
        if (r.error) logRefusal(ctx, 'transaction marker', r.topic, r.partition, r.error);
        return {
          producerId: r.producerId,
          topic: r.topic,
          partition: r.partition,
          errorCode: r.error ? errorNumber(r.error.code) : 0,
          errorMessage: r.error?.message ?? '',
        };
      }),
    };
  };
}
