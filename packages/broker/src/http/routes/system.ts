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
  segments: number;
  /** Whether this broker leads it. */
  leader: boolean;
  /** As the metadata says. */
  isrSize: number;
  replicaCount: number;
  /** The topic's min.insync.replicas (capped at its replica count, as produce applies it). */
  minIsr: number;
  /** acks=all produces waiting for the ISR (0 unless this broker leads it). */
  pendingProduces: number;
}

/** What /health and /metrics count: the cluster's topics and the partition replicas this broker hosts. */
export interface PartitionView {
  topicCount(): number;
  partitions(): PartitionStats[];
}

export interface SystemStats {
  view: PartitionView;
}

export function registerSystemRoutes(router: Router, ctx: BrokerContext, stats: SystemStats): void {
  const view = stats.view;
  router.add(
    'GET',
    '/health',
    {
      operationId: 'health',
      summary: '200 once the broker serves requests (503 while it starts or stops)',
      auth: 'open',
      responses: {
        200: {
          description: 'Serving',
          schema: {
            type: 'object',
            required: ['status', 'broker_id', 'cluster_id', 'topics'],
            properties: { status: { const: 'ok' }, broker_id: { type: 'integer' }, cluster_id: { type: 'string' }, topics: { type: 'integer' } },
          },
        },
      },
    },
    async () => ({ status: 200, body: { status: 'ok', broker_id: ctx.brokerId, cluster_id: ctx.clusterId, topics: view.topicCount() } }),
  );

  router.add(
    'GET',
    '/openapi.json',
    {
      operationId: 'openapi',
      summary: 'This document, built from the route table: the schemas here are the ones that validate requests',
      responses: { 200: { description: 'OpenAPI 3.1', schema: { type: 'object', required: ['openapi', 'paths'], properties: { openapi: { const: '3.1.0' }, paths: { type: 'object' } } } } },
    },
    async () => ({ status: 200, body: openApiDocument(router.list(), { version: ctx.softwareVersion }) }),
  );

  // Prometheus text exposition of the broker's registry (metrics/broker-metrics.ts, metrics/node-metrics.ts).
  router.add(
    'GET',
    '/metrics',
    {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain', schema: { type: 'string' } } },
    },
    async () => ({ status: 200, text: await ctx.metrics.render(), contentType: ctx.metrics.contentType }),
  );
}
