/**
 * POST /topics/{t}/records and the record reads: each partition's batch goes
 * to its leader as a Produce (this broker's handler when it leads, else over
 * the inter-broker connection), so acks=all still waits for the ISR there;
 * reads are a Fetch to the leader and stop at its high watermark.
 */
import { MqError } from '@mq/protocol/errors';
import type { Acks } from '@mq/protocol/acks';
import { TopicConfig } from '../../../config/topic-config.js';
import type { ProduceTarget, ReadResult } from '../types.js';
import { onLeader, topicRecord } from './leader-retry.js';
import type { BackendDeps } from './types.js';
import { watermarks } from './watermarks.js';
import { wireFailure } from './wire-call.js';

/** Where records may go and how large a batch may be (after the caller's produce authorization). */
export async function produceTarget(d: BackendDeps, name: string): Promise<ProduceTarget> {
  d.c.authorize?.('produce', { topics: [{ name }] }, d.requestContext(d.adminSignal()));
  const t = topicRecord(d.c.metadata, name);
  return { partitionCount: t.partitions.length, maxMessageBytes: new TopicConfig(t.configs, d.options.config).maxMessageBytes };
}

export function append(d: BackendDeps, topic: string, partition: number, batch: Buffer, acks: Acks, signal: AbortSignal): Promise<{ baseOffset: number }> {
  const timeoutMs = d.options.produceTimeoutMs;
  return onLeader(d, topic, partition, signal, async (leader) => {
    const res = await d.call(leader, 'produce', { acks, timeoutMs, topics: [{ name: topic, partitions: [{ partition, records: batch }] }] }, { timeoutMs: timeoutMs + 5000, signal });
    const p = res.topics?.[0]?.partitions?.[0];
    if (!p) throw new MqError('UNKNOWN', `broker ${leader} answered the produce to ${topic}-${partition} without that partition`);
    const err = wireFailure(p.errorCode, p.errorMessage, 'Produce');
    if (err) throw err;
    return { baseOffset: Number(p.baseOffset ?? -1) };
  });
}

export async function read(d: BackendDeps, topic: string, partition: number, offset: number | undefined, maxBytes: number, signal: AbortSignal, maxWaitMs: number): Promise<ReadResult> {
  const me = d.options.brokerId;
  const from = offset ?? (await watermarks(d, topic, partition, signal)).low;
  return onLeader(d, topic, partition, signal, async (leader) => {
    const res = await d.call(
      leader,
      'fetch',
      {
        replicaId: -1,
        maxWaitMs,
        minBytes: maxWaitMs > 0 ? 1 : 0,
        maxBytes,
        topics: [{ name: topic, partitions: [{ partition, fetchOffset: from, partitionMaxBytes: maxBytes, currentLeaderEpoch: -1, logStartOffset: -1, lastFetchedEpoch: -1 }] }],
      },
      { timeoutMs: maxWaitMs + 30_000, signal },
    );
    const p = res.topics?.[0]?.partitions?.[0];
    if (!p) throw new MqError('UNKNOWN', `broker ${leader} answered the fetch of ${topic}-${partition} without that partition`);
    const err = wireFailure(p.errorCode, p.errorMessage, 'Fetch');
    if (err) throw err;
    const r = p.records;
    // This broker's own fetch handler answers in pooled read buffers: copy the records out and give the buffer back.
    const records = !r ? Buffer.alloc(0) : leader === me ? Buffer.from(r) : Buffer.isBuffer(r) ? r : Buffer.from(r.buffer, r.byteOffset, r.byteLength);
    if (r && leader === me) d.c.broker().readBuffers.release(r);
    return { records, offset: from, low: Number(p.logStartOffset ?? -1), high: Number(p.highWatermark ?? -1) };
  });
}
