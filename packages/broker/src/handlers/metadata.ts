/**
 * Metadata: the brokers and topics of the metadata log, each partition with
 * its leader, leader epoch, replicas and ISR (STORAGE_ERROR for a partition
 * led here whose log is offline). Internal topics are listed only when asked
 * for; with auto.create.topics.enable a named topic is created.
 */
import type { mq } from '@mq/protocol/wire';
import { MqError, errorNumber } from '@mq/protocol/errors';
import type { TopicRecord } from '../controller/types.js';
import { wireError } from '../errors.js';
import { isInternalTopic, validateTopicName } from '@mq/protocol/topic-name';
import { createTopic } from './create-topics.js';
import { checkMetadataReady, type HandlerDeps } from './deps.js';
import type { Handler } from './types.js';

/** A topic as Metadata answers it. */
export function describeTopic(d: HandlerDeps, t: TopicRecord): mq.TopicMetadata.$Properties {
  const md = d.controller.metadata;
  const self = d.controller.options.brokerId;
  const fenced = (id: number) => md.broker(id)?.fenced !== false;
  return {
    errorCode: 0,
    name: t.name,
    internal: isInternalTopic(t.name),
    topicId: t.topicId,
    partitions: t.partitions.map((p, i) => ({
      errorCode: p.leader < 0 ? errorNumber('LEADER_NOT_AVAILABLE') : p.leader === self && d.replicas.offlineError(t.name, i) ? errorNumber('STORAGE_ERROR') : 0,
      partition: i,
      leader: p.leader,
      leaderEpoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      offlineReplicas: p.replicas.filter(fenced),
      partitionEpoch: p.partitionEpoch,
    })),
  };
}

/**
 * The "controller" a client sends admin requests to. With dedicated
 * controllers the active one is not a broker clients can reach, so (as
 * Kafka's KRaft brokers do) a broker names itself, or a live broker, and
 * forwards admin commands to the controller.
 */
function clientControllerId(d: HandlerDeps): number {
  const md = d.controller.metadata;
  const active = d.controller.controllerId;
  if (active < 0 || md.broker(active)) return active;
  const self = d.controller.options.brokerId;
  if (md.broker(self)) return self;
  return md.brokers().find((b) => !b.fenced)?.id ?? -1;
}

export function metadata(d: HandlerDeps): Handler<'metadata'> {
  const md = d.controller.metadata;
  return async (req, ctx) => {
    const b = ctx.broker;
    // A broker cut off from the controller for longer than its session has resigned its leaderships and
    // its view may be stale (it may still name itself leader): send the client to another broker.
    checkMetadataReady(d);
    if (d.replicas.cutOff) {
      throw new MqError(
        'BROKER_NOT_AVAILABLE',
        `broker ${d.controller.options.brokerId} has not reached the active controller for ${d.controller.leaderlessMs} ms; its metadata may be stale — ask another broker`,
      );
    }
    const names = req.topics ?? [];
    const topics: mq.TopicMetadata.$Properties[] = [];
    if (names.length === 0) {
      // Every topic; internal ones (__consumer_offsets) only when asked for, as Kafka's include_internal.
      for (const t of md.topics()) if (req.includeInternal || !isInternalTopic(t.name)) topics.push(describeTopic(d, t));
    } else {
      for (const name of names) {
        try {
          validateTopicName(name);
          let t = md.topic(name);
          if (!t && b.config.bool('auto.create.topics.enable')) {
            await createTopic(d, name, 0, 0, {}, false).catch((err: { code?: string }) => {
              if (err.code !== 'TOPIC_ALREADY_EXISTS') throw err;
            });
            t = md.topic(name);
          }
          if (!t) throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${name}" does not exist (create it with: mq topic create ${name})`, { retriable: false });
          topics.push(describeTopic(d, t));
        } catch (err) {
          const e = wireError(err);
          topics.push({ name, errorCode: e.errorCode, errorMessage: e.errorMessage, partitions: [] });
        }
      }
    }
    const brokers = md.brokers().map((r) => ({ id: r.id, host: r.host, port: r.port, httpPort: r.httpPort, rack: r.rack, fenced: r.fenced }));
    return { clusterId: b.clusterId, controllerId: clientControllerId(d), brokers, topics };
  };
}
