/** HTTP system routes: health, Prometheus metrics, the OpenAPI document. */
import type { BrokerContext } from '../../context.js';
import { openApiDocument } from '../openapi.js';
import type { Router } from '../router.js';

export interface SystemStats {
  connections(): number;
}

function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
}

export function registerSystemRoutes(router: Router, ctx: BrokerContext, stats: SystemStats): void {
  router.add('GET', '/health', async () => ({
    status: 200,
    body: { status: 'ok', broker_id: ctx.brokerId, cluster_id: ctx.clusterId, topics: ctx.topics.list().length },
  }));

  router.add('GET', '/openapi.json', async () => ({ status: 200, body: openApiDocument(router) }));

  router.add('GET', '/metrics', async () => {
    const lines = [
      '# HELP mq_connections Open client WebSocket connections.',
      '# TYPE mq_connections gauge',
      `mq_connections ${stats.connections()}`,
      '# HELP mq_topics Topics on this broker.',
      '# TYPE mq_topics gauge',
      `mq_topics ${ctx.topics.list().length}`,
      '# HELP mq_partition_high_watermark High watermark per partition.',
      '# TYPE mq_partition_high_watermark gauge',
    ];
    const start: string[] = ['# HELP mq_partition_log_start_offset Log start offset per partition.', '# TYPE mq_partition_log_start_offset gauge'];
    const size: string[] = ['# HELP mq_partition_size_bytes Bytes on disk per partition.', '# TYPE mq_partition_size_bytes gauge'];
    for (const t of ctx.topics.list()) {
      for (const p of t.partitions) {
        const l = `{topic="${label(t.name)}",partition="${p.index}"}`;
        lines.push(`mq_partition_high_watermark${l} ${p.highWatermark}`);
        start.push(`mq_partition_log_start_offset${l} ${p.logStartOffset}`);
        size.push(`mq_partition_size_bytes${l} ${p.isClosed ? 0 : p.log.size}`);
      }
    }
    return { status: 200, text: [...lines, ...start, ...size, ...ctx.metrics.render(), ''].join('\n'), contentType: 'text/plain; version=0.0.4' };
  });
}
