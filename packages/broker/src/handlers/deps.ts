/**
 * What the partition, topic and metadata handlers take: the controller (the
 * metadata log), the replica manager (the partitions this broker hosts), the
 * broker configuration and the long-poll timers. Plus what several of them
 * share: why a partition is not led here, waiting for a change to be applied
 * here, and the one log line of a refusal.
 */
import { systemTimers, type Timers } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import type { BrokerConfig } from '../config/broker-config.js';
import type { Controller } from '../controller/controller.js';
import { metadataChange } from '../controller/metadata-wait.js';
import type { ReplicaManager } from '../cluster/replica-manager.js';
import type { RequestContext } from '../context.js';
import { refusalLevel, toMqError } from '../errors.js';
import { validateTopicName } from '@mq/protocol/topic-name';
import { shown } from '../request-limits.js';

export interface HandlerDeps {
  controller: Controller;
  replicas: ReplicaManager;
  config: BrokerConfig;
  /** The long-poll timers of fetches. */
  timers: Timers;
  /** Called once a transaction marker is written to a partition led here (the group coordinator applies transactional offset commits). */
  onTxnMarker?: (topic: string, partition: number, producerId: number, committed: boolean) => void;
  /**
   * False while a (re)starting broker has not yet applied the metadata the controller had committed: its view
   * may lack topics created while it was down, so it answers BROKER_NOT_AVAILABLE (retriable: ask another broker)
   * rather than "no such topic". Absent: ready.
   */
  metadataReady?: () => boolean;
}

/** BROKER_NOT_AVAILABLE while this broker's metadata has not caught up since it started (see HandlerDeps.metadataReady). */
export function checkMetadataReady(d: HandlerDeps): void {
  if (d.metadataReady && !d.metadataReady()) {
    throw new MqError('BROKER_NOT_AVAILABLE', `broker ${d.controller.options.brokerId} is starting and has not caught up with the cluster metadata yet; ask another broker`);
  }
}

/** Why this broker does not lead `topic`-`partition`: an offline replica here, no such topic or partition, no leader, or another leader (NOT_LEADER naming it). */
export function notLeader(d: HandlerDeps, topic: string, partition: number): MqError {
  const offline = d.replicas.offlineError(topic, partition);
  if (offline) return offline;
  const t = d.controller.metadata.topic(topic);
  const p = t?.partitions[partition];
  if (!t) {
    validateTopicName(topic);
    if (d.metadataReady && !d.metadataReady()) return new MqError('BROKER_NOT_AVAILABLE', `broker ${d.controller.options.brokerId} is starting and has not caught up with the cluster metadata yet (it does not know topic "${topic}" yet)`);
    return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" does not exist (create it with: mq topic create ${topic})`);
  }
  if (!p) return new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topic}" has no partition ${partition} (it has ${t.partitions.length})`, { retriable: false });
  if (p.leader < 0) return new MqError('LEADER_NOT_AVAILABLE', `${topic}-${partition} has no leader: no in-sync replica is alive`);
  return new MqError('NOT_LEADER', `broker ${d.controller.options.brokerId} is not the leader of ${topic}-${partition} (broker ${p.leader} is); refresh metadata`, { leader: p.leader });
}


/**
 * notLeader's error without throwing (an invalid topic name is its INVALID_TOPIC error). A replica
 * request naming a topic id this broker's metadata does not have under that name (a deleted
 * incarnation, or metadata not caught up here): UNKNOWN_TOPIC_ID.
 */
export function whyNotLed(d: HandlerDeps, topic: string, partition: number, topicId = ''): MqError {
  const current = d.controller.metadata.topic(topic)?.topicId;
  if (topicId !== '' && current !== topicId) {
    // Both strings come from the request and the message repeats per partition: shown short.
    return new MqError('UNKNOWN_TOPIC_ID', `broker ${d.controller.options.brokerId} knows no topic "${shown(topic)}" with topic id ${shown(topicId)} (${current ? `its topic id is ${current}` : 'no such topic'})`);
  }
  try {
    return notLeader(d, topic, partition);
  } catch (err) {
    return toMqError(err);
  }
}

/** Resolves once this broker's metadata satisfies `ready` (a change committed elsewhere has been applied here), or after `timeoutMs`. */
export function applied(d: HandlerDeps, ready: () => boolean, timeoutMs = 5000): Promise<void> {
  if (ready()) return Promise.resolve();
  // Real time, as a request's deadline is (not the long-poll timers).
  return metadataChange(d.controller.metadata, { until: ready, timeoutMs, timers: systemTimers });
}

/** One log line for a refused per-partition or per-topic entry, at the level its error deserves (NOT_LEADER is routine: none). */
export function logRefusal(ctx: RequestContext, what: string, topic: string, partition: number, err: unknown): void {
  const e = toMqError(err);
  const fields = { conn: ctx.connection.id, remote: ctx.connection.remote, topic, partition, code: e.code, err: e.message };
  const level = refusalLevel(e);
  if (level === 'error') ctx.logger.error({ ...fields, stack: (err as Error).stack }, `${what} failed`);
  else if (level === 'debug') ctx.logger.debug(fields, `${what} abandoned`);
  else if (e.code !== 'NOT_LEADER') ctx.logger.warn(fields, `${what} refused`);
}
