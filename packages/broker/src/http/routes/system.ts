/** HTTP system routes: health, Prometheus metrics, the OpenAPI document. */
import type { BrokerContext } from '../../context.js';
import { openApiDocument } from '../openapi.js';
import type { Router } from '../router.js';

/** One partition replica this broker holds, as /metrics reports it. */
export interface PartitionStats {
  topic: string;
  partition: number;
  highWatermark: number;
  logStartOffset: number;
  sizeBytes: number;
  /** In a cluster: whether this broker leads it, and whether its ISR is short of its replicas (as the metadata says). */
  leader?: boolean;
  underReplicated?: boolean;
}

/** What /health and /metrics count: the cluster's topics and the partition replicas this broker hosts. */
export interface PartitionView {
  topicCount(): number;
  partitions(): PartitionStats[];
}

export interface SystemStats {
  connections(): number;
  view: PartitionView;
}

function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

export function registerSystemRoutes(router: Router, ctx: BrokerContext, stats: SystemStats): void {
  const view = stats.view;
  router.add('GET', '/health', async () => ({
    status: 200,
    body: { status: 'ok', broker_id: ctx.brokerId, cluster_id: ctx.clusterId, topics: view.topicCount() },
  }));

  router.add('GET', '/openapi.json', async () => ({ status: 200, body: openApiDocument(router) }));

  router.add('GET', '/metrics', async () => {
    const lines = [
      '# HELP mq_connections Open client WebSocket connections.',
      '# TYPE mq_connections gauge',
      `mq_connections ${stats.connections()}`,
      '# HELP mq_topics Topics (in a cluster: every topic of the cluster).',
      '# TYPE mq_topics gauge',
      `mq_topics ${view.topicCount()}`,
      '# HELP mq_partition_high_watermark High watermark per partition replica on this broker.',
      '# TYPE mq_partition_high_watermark gauge',
    ];
    const start: string[] = ['# HELP mq_partition_log_start_offset Log start offset per partition replica.', '# TYPE mq_partition_log_start_offset gauge'];
    const size: string[] = ['# HELP mq_partition_size_bytes Bytes on disk per partition replica.', '# TYPE mq_partition_size_bytes gauge'];
    const leader: string[] = ['# HELP mq_partition_leader 1 when this broker leads the partition (cluster mode).', '# TYPE mq_partition_leader gauge'];
    let underReplicated: number | undefined;
    for (const p of view.partitions()) {
      const l = `{topic="${label(p.topic)}",partition="${p.partition}"}`;
      lines.push(`mq_partition_high_watermark${l} ${p.highWatermark}`);
      start.push(`mq_partition_log_start_offset${l} ${p.logStartOffset}`);
      size.push(`mq_partition_size_bytes${l} ${p.sizeBytes}`);
      if (p.leader !== undefined) {
        leader.push(`mq_partition_leader${l} ${p.leader ? 1 : 0}`);
        underReplicated = (underReplicated ?? 0) + (p.leader && p.underReplicated ? 1 : 0);
      }
    }
    const cluster =
      underReplicated === undefined
        ? []
        : [
            ...leader,
            '# HELP mq_under_replicated_partitions Partitions led by this broker whose ISR is smaller than their replica set.',
            '# TYPE mq_under_replicated_partitions gauge',
            `mq_under_replicated_partitions ${underReplicated}`,
          ];
    return { status: 200, text: [...lines, ...start, ...size, ...cluster, ...ctx.metrics.render(), ''].join('\n'), contentType: 'text/plain; version=0.0.4' };
  });
}
