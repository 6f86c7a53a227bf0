/**
 * A topic as GET /topics/{t} shows it: per partition the leader, leader
 * epoch, replicas and ISR from the metadata, offline when it has no leader
 * or this broker's replica cannot serve, and the watermarks (this broker's
 * own leaderships at once, the others from their leaders, best effort and
 * bounded by describeTimeoutMs).
 */
import { MqError } from '@mq/protocol/errors';
import { isInternalTopic } from '@mq/protocol/topic-name';
import { TopicConfig } from '../../../config/topic-config.js';
import type { TopicRecord } from '../../../controller/types.js';
import type { PartitionView, TopicView } from '../types.js';
import type { BackendDeps } from './types.js';
import { remoteWatermarks } from './watermarks.js';

export async function topicView(d: Pick<BackendDeps, 'c' | 'options' | 'call'>, t: TopicRecord, signal: AbortSignal): Promise<TopicView> {
  const me = d.options.brokerId;
  const c = d.c;
  const partitions: PartitionView[] = t.partitions.map((p, i) => ({
    partition: i,
    leader: p.leader,
    leaderEpoch: p.leaderEpoch,
    replicas: [...p.replicas],
    isr: [...p.isr],
    ...(p.leader < 0 ? { offline: true, error: `${t.name}-${i} has no leader: no in-sync replica is alive` } : {}),
    ...(p.leader === me && c.localOffline?.(t.name, i) ? { offline: true, error: c.localOffline(t.name, i)!.message } : {}),
  }));
  const remote = new Map<number, Array<{ topic: string; partition: number }>>();
  for (const p of partitions) {
    if (p.leader < 0) continue;
    const local = p.leader === me ? c.localLeader(t.name, p.partition) : undefined;
    if (local) {
      p.low = local.logStartOffset;
      p.high = local.highWatermark;
    } else if (p.leader !== me) {
      let l = remote.get(p.leader);
      if (!l) remote.set(p.leader, (l = []));
      l.push({ topic: t.name, partition: p.partition });
    }
  }
  await Promise.all(
    [...remote].map(async ([leader, parts]) => {
      const marks = await remoteWatermarks(d, leader, parts, signal, d.options.describeTimeoutMs).catch(() => undefined);
      for (const { partition } of parts) {
        const m = marks?.get(`${t.name}\u0000${partition}`);
        if (m && !(m instanceof MqError)) Object.assign(partitions[partition]!, { low: m.low, high: m.high });
      }
    }),
  );
  return {
    name: t.name,
    topicId: t.topicId,
    internal: isInternalTopic(t.name),
    partitionCount: t.partitions.length,
    replicationFactor: t.partitions[0]?.replicas.length ?? 0,
    configs: Object.fromEntries(new TopicConfig(t.configs, d.options.config).entries().map((e) => [e.name, e.value])),
    partitions,
  };
}
