/**
 * Log start offsets and high watermarks of partitions: this broker's own
 * leaderships read at once, the others' asked of their leaders with one
 * ListOffsets (LATEST) per leader.
 */
import { MqError } from '@mq/protocol/errors';
import { LATEST_TIMESTAMP } from '@mq/protocol/wire';
import { onLeader } from './leader-retry.js';
import type { BackendDeps } from './types.js';
import { wireFailure } from './wire-call.js';

export type Watermarks = { low: number; high: number };

/** `topic\0partition` → the leader's watermarks of each partition asked, or why it could not say. */
export async function remoteWatermarks(d: Pick<BackendDeps, 'call'>, leader: number, parts: Array<{ topic: string; partition: number }>, signal: AbortSignal, timeoutMs: number): Promise<Map<string, Watermarks | MqError>> {
  const byTopic = new Map<string, number[]>();
  for (const p of parts) {
    let l = byTopic.get(p.topic);
    if (!l) byTopic.set(p.topic, (l = []));
    l.push(p.partition);
  }
  const res = await d.call(
    leader,
    'listOffsets',
    { replicaId: -1, topics: [...byTopic].map(([name, ps]) => ({ name, partitions: ps.map((partition) => ({ partition, timestamp: LATEST_TIMESTAMP, currentLeaderEpoch: -1 })) })) },
    { timeoutMs, signal },
  );
  const out = new Map<string, Watermarks | MqError>();
  for (const t of res.topics ?? []) {
    for (const p of t.partitions ?? []) {
      const err = wireFailure(p.errorCode, p.errorMessage, 'ListOffsets');
      out.set(`${t.name ?? ''}\u0000${p.partition ?? 0}`, err ?? { low: Number(p.logStartOffset ?? -1), high: Number(p.highWatermark ?? -1) });
    }
  }
  return out;
}

/** Describe on a topic (ListOffsets' rule), for the reads that need no wire request here. */
export function describeCheck(d: Pick<BackendDeps, 'c' | 'requestContext' | 'adminSignal'>, topic: string): void {
  d.c.authorize?.('listOffsets', { topics: [{ name: topic }] }, d.requestContext(d.adminSignal()));
}

/** One partition's watermarks, from its leader (waiting for one as record requests do). */
export async function watermarks(d: BackendDeps, topic: string, partition: number, signal: AbortSignal): Promise<Watermarks> {
  describeCheck(d, topic);
  const me = d.options.brokerId;
  return onLeader(d, topic, partition, signal, async (leader) => {
    if (leader === me) {
      const l = d.c.localLeader(topic, partition);
      if (!l) throw new MqError('NOT_LEADER', `broker ${me} does not lead ${topic}-${partition} yet`);
      return { low: l.logStartOffset, high: l.highWatermark };
    }
    const r = (await remoteWatermarks(d, leader, [{ topic, partition }], signal, 10_000)).get(`${topic}\u0000${partition}`);
    if (!r) throw new MqError('UNKNOWN', `broker ${leader} did not answer for ${topic}-${partition}`);
    if (r instanceof MqError) throw r;
    return r;
  });
}
