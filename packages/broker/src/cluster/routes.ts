/**
 * The HTTP side of a cluster node: GET /cluster (this broker's view: controller, brokers,
 * partitions it hosts, under-replicated and offline partitions), and the topic backend the
 * topic and record routes use in cluster mode (http/backends/cluster/).
 */
import type { QuotaRecorder } from '../quota/quota-handlers.js';
import type { BrokerContext, RequestContext } from '../context.js';
import type { RequestAuthorizer } from '../http/backends/cluster/index.js';
import type { HandlerMap } from '../handlers/types.js';
import { clusterBackend } from '../http/backends/cluster/index.js';
import type { TopicBackend } from '../http/backends/types.js';
import type { Router } from '../http/router.js';
import { PartitionReplicas } from '../http/schemas.js';
import type { PartitionView } from '../http/routes/system.js';
import type { ClusterNode } from './cluster-node.js';

/** The cluster topic backend of this node: `handlers` is the broker's full handler map (what its WebSocket clients get). */
export function clusterHttpBackend(
  node: ClusterNode,
  handlers: HandlerMap,
  ctx: BrokerContext,
  security?: { authorize: RequestAuthorizer; mayDescribe: (topic: string, ctx: RequestContext) => boolean },
  quotas?: QuotaRecorder,
): TopicBackend {
  return clusterBackend(
    { brokerId: ctx.brokerId, config: ctx.config },
    {
      metadata: node.controller.metadata,
      handlers,
      peers: node.peers,
      broker: () => ctx,
      localLeader: (topic, partition) => node.replicas.leaderOf(topic, partition),
      localOffline: (topic, partition) => node.replicas.offlineError(topic, partition),
      ...(security ? { authorize: security.authorize, mayDescribe: security.mayDescribe } : {}),
      ...(quotas ? { quotas } : {}),
    },
  );
}

export function clusterStatus(node: Pick<ClusterNode, 'controller' | 'replicas' | 'voterIds'>): Record<string, unknown> {
  const st = node.controller.status();
  const md = node.controller.metadata;
  const underReplicated: { topic: string; partition: number; replicas: number[]; isr: number[] }[] = [];
  const offline: { topic: string; partition: number; replicas: number[]; isr: number[] }[] = [];
  let partitions = 0;
  for (const t of md.topics()) {
    t.partitions.forEach((p, partition) => {
      partitions++;
      const item = { topic: t.name, partition, replicas: [...p.replicas], isr: [...p.isr] };
      if (p.leader < 0) offline.push(item);
      else if (p.isr.length < p.replicas.length) underReplicated.push(item);
    });
  }
  return {
    brokerId: node.controller.options.brokerId,
    controllerId: st.controllerId,
    activeController: st.active,
    // The quorum's voters as this controller applied them (membership changes included); a broker-only process: the configured ones.
    voters: st.quorumVoters ?? node.voterIds,
    raft: { term: st.raftTerm, commit: st.raftCommit, applied: st.applied },
    brokers: md.brokers().map((b) => ({
      id: b.id,
      host: b.host,
      port: b.port,
      httpPort: b.httpPort,
      // The Kafka listener's advertised address (null: no Kafka listener).
      kafka: b.kafkaHost !== undefined && b.kafkaPort !== undefined ? `${b.kafkaHost}:${b.kafkaPort}` : null,
      rack: b.rack,
      brokerEpoch: b.brokerEpoch,
      fenced: b.fenced,
      // Decommissioned (mq broker decommission): no replica is placed or moved on it; it may be stopped once it holds none.
      decommissioned: b.decommissioned === true,
      lastSeenMsAgo: st.brokers.find((x) => x.id === b.id)?.lastSeenMsAgo ?? -1,
    })),
    topics: md.topics().length,
    partitions,
    underReplicated,
    offline,
    hosted: node.replicas.list().map((h) => ({
      topic: h.topic,
      partition: h.partition,
      topicId: h.topicId,
      role: h.role,
      leaderEpoch: h.leaderEpoch,
      logStartOffset: h.log.logStartOffset,
      logEndOffset: h.log.logEndOffset,
      // A follower's is what it has learned from its leader.
      highWatermark: node.replicas.highWatermarkOf(h.topic, h.partition) ?? -1,
      sizeBytes: h.log.size,
      isr: h.leader ? [...h.leader.isr] : undefined,
    })),
  };
}

const integers = { type: 'array', items: { type: 'integer' } };

const clusterView = {
  type: 'object',
  required: ['brokerId', 'controllerId', 'brokers', 'topics', 'partitions', 'underReplicated', 'offline', 'hosted'],
  properties: {
    brokerId: { type: 'integer' },
    controllerId: { type: 'integer' },
    activeController: { type: 'boolean' },
    voters: integers,
    raft: { type: 'object', properties: { term: { type: 'integer' }, commit: { type: 'integer' }, applied: { type: 'integer' } } },
    brokers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'fenced'],
        properties: {
          id: { type: 'integer' },
          host: { type: 'string' },
          port: { type: 'integer' },
          httpPort: { type: 'integer' },
          kafka: { type: ['string', 'null'], description: "The Kafka listener's advertised host:port (null: none)" },
          rack: { type: ['string', 'null'] },
          brokerEpoch: { type: 'integer' },
          fenced: { type: 'boolean' },
          decommissioned: { type: 'boolean', description: 'Marked by mq broker decommission: no replica is placed or moved on it' },
          lastSeenMsAgo: { type: 'integer', description: '-1: not known' },
        },
      },
    },
    topics: { type: 'integer' },
    partitions: { type: 'integer' },
    underReplicated: { type: 'array', items: PartitionReplicas },
    offline: { type: 'array', items: PartitionReplicas },
    hosted: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          topic: { type: 'string' },
          partition: { type: 'integer' },
          topicId: { type: 'string' },
          role: { type: 'string' },
          leaderEpoch: { type: 'integer' },
          logStartOffset: { type: 'integer' },
          logEndOffset: { type: 'integer' },
          highWatermark: { type: 'integer' },
          sizeBytes: { type: 'integer', description: "Bytes of this replica's log on this broker" },
          isr: integers,
        },
      },
    },
  },
};

export function registerClusterRoutes(router: Router, node: ClusterNode): void {
  router.add(
    'GET',
    '/cluster',
    {
      operationId: 'describeCluster',
      summary: "This broker's view of the cluster: controller, Raft state, brokers, under-replicated and offline partitions, the replicas it hosts",
      responses: { 200: { description: 'The cluster as this broker sees it', schema: clusterView } },
    },
    async () => ({ status: 200, body: clusterStatus(node) }),
  );
}

/** What /health and /metrics count in cluster mode: the cluster's topics, and the partition replicas this broker hosts. */
export function clusterPartitionView(node: ClusterNode): PartitionView {
  const md = node.controller.metadata;
  return {
    topicCount: () => md.topics().length,
    partitions: () =>
      node.replicas.list().map((h) => {
        const rec = md.topic(h.topic)?.partitions[h.partition];
        const replicaCount = rec?.replicas.length ?? 0;
        return {
          topic: h.topic,
          partition: h.partition,
          highWatermark: node.replicas.highWatermarkOf(h.topic, h.partition) ?? -1,
          logStartOffset: h.log.logStartOffset,
          sizeBytes: h.log.size,
          segments: h.log.segmentCount,
          leader: h.role === 'leader',
          isrSize: rec?.isr.length ?? 0,
          replicaCount,
          minIsr: Math.min(h.config.minInsyncReplicas, replicaCount),
          pendingProduces: h.leader?.pendingProduces ?? 0,
        };
      }),
  };
}
