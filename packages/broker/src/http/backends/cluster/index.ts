/**
 * The HTTP topic backend of a broker in a cluster. It answers exactly as the
 * wire API does, by calling the wire API (wire-call.ts): topic admin goes
 * through this broker's own handlers (CreateTopics / DeleteTopics, which
 * forward to the active controller; topic-admin.ts); records go to the
 * partition's leader, through this broker's handlers when it leads the
 * partition and otherwise over the inter-broker connection (Produce, Fetch,
 * ListOffsets as any client would send them; records.ts, watermarks.ts). So
 * a client can use any broker's HTTP port, acks=all still waits for the ISR
 * on the leader, and reads stop at the leader's high watermark. When the
 * leader moves mid-request the call waits for the metadata to change and
 * tries the new leader, up to `leaderWaitMs` (leader-retry.ts).
 */
import { systemTimers } from '@mq/protocol/components';
import type { TopicBackend } from '../types.js';
import { parseClusterBackendOptions, type ClusterBackendOptions } from './options.js';
import { append, produceTarget, read } from './records.js';
import { createTopic, deleteTopic, describeTopic, listTopics } from './topic-admin.js';
import type { BackendDeps, ClusterBackendComponents } from './types.js';
import { watermarks } from './watermarks.js';
import { httpRequestContexts, wireCall } from './wire-call.js';

export type { ClusterBackendOptions } from './options.js';
export type { ClusterBackendComponents, PeerRequester, RequestAuthorizer } from './types.js';

export function clusterBackend(options: ClusterBackendOptions, c: ClusterBackendComponents): TopicBackend {
  const o = parseClusterBackendOptions(options);
  const timers = c.timers ?? systemTimers;
  const requestContext = httpRequestContexts(c);
  const adminSignal = () => AbortSignal.timeout(60_000);
  const d: BackendDeps = { options: o, c, timers, call: wireCall(o.brokerId, c, timers, requestContext), requestContext, adminSignal };
  return {
    mode: 'cluster',
    brokerId: o.brokerId,
    request: (id, body, payload) => d.call(id, body, payload, { timeoutMs: 60_000, signal: adminSignal() }),
    createTopic: (input) => createTopic(d, input),
    listTopics: async () => listTopics(d),
    describeTopic: (name) => describeTopic(d, name),
    deleteTopic: (name) => deleteTopic(d, name),
    produceTarget: (name) => produceTarget(d, name),
    append: (topic, partition, batch, acks, { signal }) => append(d, topic, partition, batch, acks, signal),
    read: (topic, partition, offset, maxBytes, signal, maxWaitMs = 0) => read(d, topic, partition, offset, maxBytes, signal, maxWaitMs),
    watermarks: (topic, partition, signal) => watermarks(d, topic, partition, signal),
  };
}
