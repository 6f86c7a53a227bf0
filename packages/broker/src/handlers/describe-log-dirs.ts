/**
 * DescribeLogDirs: the partition replicas this broker hosts and their size on
 * its disk (Kafka's DescribeLogDirs, one log directory per broker). Each
 * broker answers for itself; the HTTP API's /log-dirs asks every live broker.
 * Read from the replica manager's open logs: no disk walk.
 */
import { statfs } from 'node:fs/promises';
import type { Handler } from './types.js';
import type { HandlerDeps } from './deps.js';

export function describeLogDirs(d: HandlerDeps): Handler<'describeLogDirs'> {
  return async (req, ctx) => {
    const rates = ctx.broker.metrics.partitionBytesIn;
    const topics = new Set(req.topics ?? []);
    const partitions = new Map((req.partitions ?? []).map((t) => [t.topic ?? '', new Set(t.partitions ?? [])]));
    const asked = (topic: string, partition: number) => (topics.size === 0 && partitions.size === 0) || topics.has(topic) || partitions.get(topic)?.has(partition) === true;
    const replicas = [];
    for (const h of d.replicas.list()) {
      if (!asked(h.topic, h.partition)) continue;
      const hw = d.replicas.highWatermarkOf(h.topic, h.partition) ?? h.log.logEndOffset;
      replicas.push({
        topic: h.topic,
        partition: h.partition,
        sizeBytes: h.log.size,
        offsetLag: h.leader ? 0 : Math.max(0, hw - h.log.logEndOffset),
        leader: h.leader !== undefined,
        bytesInPerSec: h.leader !== undefined ? rates.rate(`${h.topic}\0${h.partition}`) : 0,
      });
    }
    // The file system's size and room (Kafka's DescribeLogDirs v4 TotalBytes/UsableBytes): what a disk-aware rebalance plan needs.
    const fs = await statfs(d.replicas.logDirectory).catch(() => undefined);
    const totalBytes = fs ? fs.blocks * fs.bsize : -1;
    const usableBytes = fs ? fs.bavail * fs.bsize : -1;
    return { errorCode: 0, brokerId: d.controller.options.brokerId, logDir: d.replicas.logDirectory, replicas, totalBytes, usableBytes };
  };
}
