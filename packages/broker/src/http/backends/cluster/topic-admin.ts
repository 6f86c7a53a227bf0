/**
 * POST /topics, GET /topics, GET /topics/{t}, DELETE /topics/{t}: creation
 * and deletion through this broker's CreateTopics / DeleteTopics handlers
 * (forwarded to the active controller, answered once applied here), lists
 * and views from the metadata.
 */
import { isInternalTopic, validateTopicName } from '@mq/protocol/topic-name';
import type { CreateTopicInput, TopicSummaryView, TopicView } from '../types.js';
import { topicRecord } from './leader-retry.js';
import { topicView } from './topic-view.js';
import type { BackendDeps } from './types.js';
import { describeCheck } from './watermarks.js';
import { wireFailure } from './wire-call.js';

export async function createTopic(d: BackendDeps, input: CreateTopicInput): Promise<{ topic: TopicView; warning?: string }> {
  const res = await d.call(
    d.options.brokerId,
    'createTopics',
    {
      topics: [{ name: input.name, numPartitions: input.numPartitions ?? 0, replicationFactor: input.replicationFactor ?? 0, configs: input.configs as Record<string, string> }],
      validateOnly: false,
    },
    { timeoutMs: 30_000, signal: d.adminSignal() },
  );
  const r = res.results?.[0];
  const err = wireFailure(r?.errorCode, r?.errorMessage, 'CreateTopics');
  if (err) throw err;
  return { topic: await topicView(d, topicRecord(d.c.metadata, input.name), d.adminSignal()), ...(r?.warning ? { warning: r.warning } : {}) };
}

/** The topics the caller may see. */
export function listTopics(d: BackendDeps): TopicSummaryView[] {
  return d.c.metadata
    .topics()
    .filter((t) => d.c.mayDescribe?.(t.name, d.requestContext(d.adminSignal())) ?? true)
    .map((t) => ({ name: t.name, internal: isInternalTopic(t.name), partitionCount: t.partitions.length, replicationFactor: t.partitions[0]?.replicas.length ?? 0 }));
}

export async function describeTopic(d: BackendDeps, name: string): Promise<TopicView> {
  describeCheck(d, name);
  return topicView(d, topicRecord(d.c.metadata, name), d.adminSignal());
}

export async function deleteTopic(d: BackendDeps, name: string): Promise<{ name: string; partitionCount: number }> {
  validateTopicName(name);
  const res = await d.call(d.options.brokerId, 'deleteTopics', { topics: [name] }, { timeoutMs: 30_000, signal: d.adminSignal() });
  const r = res.results?.[0];
  const err = wireFailure(r?.errorCode, r?.errorMessage, 'DeleteTopics');
  if (err) throw err;
  return { name, partitionCount: r?.numPartitions ?? 0 };
}
