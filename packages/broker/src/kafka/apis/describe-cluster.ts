/** DescribeCluster: the cluster id, controller and brokers (at their Kafka addresses), from the core's Metadata. */
import { DescribeClusterApi, type DescribeClusterRequest, type DescribeClusterResponse } from '@mq/kafka-protocol/messages';
import type { KafkaApi } from '../types.js';
import { askCore } from './call-core.js';
import { kafkaBrokers } from './metadata.js';

export const describeCluster: KafkaApi<DescribeClusterRequest, DescribeClusterResponse> = {
  api: DescribeClusterApi,
  needs: ['metadata'],
  async handle(_req, call) {
    const r = await askCore(call, 'metadata', { topics: [], includeInternal: false });
    return {
      errorCode: 0,
      clusterId: r.clusterId ?? '',
      controllerId: r.controllerId ?? -1,
      brokers: kafkaBrokers(call.door, r.brokers ?? []).map((b) => ({ brokerId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
    };
  },
  refused: (_req, code, message) => ({ errorCode: code, errorMessage: message }),
};
