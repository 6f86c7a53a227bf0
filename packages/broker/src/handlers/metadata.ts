/**
 * Metadata: brokers, and topics with their partitions' leader, leader epoch,
 * replicas and ISR. An empty topic list means every topic.
 */
import type { mq } from '@mq/protocol/wire';
import { errorNumber } from '@mq/protocol/errors';
import type { BrokerContext } from '../context.js';
import { wireError } from '../errors.js';
import type { Topic } from '../topics/topic-manager.js';
import { validateTopicName } from '../topics/topic-name.js';
import type { Handler } from './types.js';

export function describeTopic(topic: Topic): mq.TopicMetadata.$Properties {
  return {
    errorCode: 0,
    name: topic.name,
    internal: topic.internal,
    topicId: topic.topicId,
    partitions: topic.partitions.map((p) => ({
      errorCode: p.offline ? errorNumber('STORAGE_ERROR') : 0,
      partition: p.index,
      leader: p.leaderId,
      leaderEpoch: p.leaderEpoch,
      replicas: [...p.replicas],
      isr: [...p.isr],
      offlineReplicas: [],
      partitionEpoch: 0,
    })),
  };
}

export function brokerList(b: BrokerContext): mq.BrokerInfo.$Properties[] {
  return [{ id: b.brokerId, host: b.advertisedHost, port: b.port, httpPort: b.httpPort, rack: '', fenced: false }];
}

export const metadata: Handler<'metadata'> = async (req, ctx) => {
  const b = ctx.broker;
  const names = req.topics ?? [];
  const topics: mq.TopicMetadata.$Properties[] = [];
  if (names.length === 0) {
    for (const t of b.topics.list()) if (!t.internal || req.includeInternal) topics.push(describeTopic(t));
  } else {
    for (const name of names) {
      try {
        validateTopicName(name);
        let t = b.topics.get(name);
        if (!t && b.config.bool('auto.create.topics.enable')) {
          await b.topics.create({ name }).catch((err: { code?: string }) => {
            if (err.code !== 'TOPIC_ALREADY_EXISTS') throw err;
          });
          t = b.topics.get(name);
        }
        topics.push(describeTopic(t ?? b.topics.require(name)));
      } catch (err) {
        const e = wireError(err);
        topics.push({ name, errorCode: e.errorCode, errorMessage: e.errorMessage, partitions: [] });
      }
    }
  }
  return { clusterId: b.clusterId, controllerId: b.brokerId, brokers: brokerList(b), topics };
};
