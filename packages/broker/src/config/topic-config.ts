/**
 * Per-topic configuration: the keys a topic may set, the broker key each one
 * defaults to, and the translation into the partition log's options.
 */
import { MqError } from '@mq/protocol/errors';
import { BROKER_CONFIG, type BrokerConfig } from './broker-config.js';
import { validateConfigs, type ConfigDef, type ConfigMap } from './config-def.js';

/** Topic key → the broker key that supplies its default. */
export const TOPIC_CONFIG_DEFAULTS: Readonly<Record<string, string>> = {
  'retention.ms': 'log.retention.ms',
  'retention.bytes': 'log.retention.bytes',
  'segment.bytes': 'log.segment.bytes',
  'segment.ms': 'log.segment.ms',
  'index.interval.bytes': 'log.index.interval.bytes',
  'cleanup.policy': 'log.cleanup.policy',
  'max.message.bytes': 'message.max.bytes',
  'flush.policy': 'log.flush.policy',
  'flush.interval.ms': 'log.flush.interval.ms',
  'flush.interval.bytes': 'log.flush.interval.bytes',
  'min.insync.replicas': 'min.insync.replicas',
  'message.timestamp.type': 'log.message.timestamp.type',
  'unclean.leader.election.enable': 'unclean.leader.election.enable',
  'delete.retention.ms': 'log.cleaner.delete.retention.ms',
};

export const TOPIC_CONFIG: ReadonlyMap<string, ConfigDef> = new Map(
  Object.entries(TOPIC_CONFIG_DEFAULTS).map(([topicKey, brokerKey]) => {
    const def = BROKER_CONFIG.get(brokerKey)!;
    return [topicKey, { ...def, name: topicKey }];
  }),
);

/** Validates a topic's configs (unknown keys and bad values throw INVALID_CONFIG). */
export function validateTopicConfigs(
  input: Readonly<Record<string, unknown>>,
  maxFrameBytes: number,
): Record<string, string> {
  const configs = validateConfigs(TOPIC_CONFIG, input, 'topic');
  const maxMessage = configs['max.message.bytes'];
  if (maxMessage !== undefined && Number(maxMessage) > maxFrameBytes - 1024) {
    throw new MqError(
      'INVALID_CONFIG',
      `max.message.bytes=${maxMessage} does not fit in a frame: the broker's max.frame.bytes is ${maxFrameBytes}`,
    );
  }
  return configs;
}

/** A topic's effective configuration: its own values over the broker's defaults. */
export class TopicConfig {
  constructor(
    readonly own: ConfigMap,
    private readonly broker: BrokerConfig,
  ) {}

  get(name: string): string {
    const own = this.own[name];
    if (own !== undefined) return own;
    const brokerKey = TOPIC_CONFIG_DEFAULTS[name];
    if (brokerKey === undefined) throw new Error(`no topic config ${name}`);
    return this.broker.get(brokerKey);
  }

  int(name: string): number {
    return Number(this.get(name));
  }

  source(name: string): 'topic' | 'broker' | 'default' {
    if (this.own[name] !== undefined) return 'topic';
    return this.broker.source(TOPIC_CONFIG_DEFAULTS[name]!);
  }

  entries(): Array<{ name: string; value: string; source: string }> {
    return Object.keys(TOPIC_CONFIG_DEFAULTS).map((name) => ({ name, value: this.get(name), source: this.source(name) }));
  }

  /** A broker-wide key with no topic-level override (producer.id.expiration.ms). */
  brokerInt(name: string): number {
    return Number(this.broker.get(name));
  }

  get maxMessageBytes(): number {
    return this.int('max.message.bytes');
  }

  get minInsyncReplicas(): number {
    return this.int('min.insync.replicas');
  }

  get logAppendTime(): boolean {
    return this.get('message.timestamp.type') === 'LogAppendTime';
  }
}

export type FlushOption =
  | { policy: 'always' }
  | { policy: 'interval'; intervalMs?: number; intervalBytes?: number }
  | { policy: 'os' };

export interface TopicLogOptions {
  segmentBytes: number;
  segmentMs: number;
  indexIntervalBytes: number;
  maxBatchBytes: number;
  flush: FlushOption;
  retentionBytes: number;
  retentionMs: number;
  deleteRetentionMs: number;
  producerIdExpirationMs: number;
}

/** Whether the topic's cleanup.policy includes compaction ("compact" or "compact,delete"). */
export function isCompacted(config: TopicConfig): boolean {
  return config.get('cleanup.policy').split(',').includes('compact');
}

/** Whether time and size retention delete old segments ("delete" or "compact,delete"). */
function deletesOldSegments(config: TopicConfig): boolean {
  return config.get('cleanup.policy').split(',').includes('delete');
}

/** The log options (see @mq/log-store) a topic's partitions are opened with. */
export function logOptionsFor(config: TopicConfig): TopicLogOptions {
  const policy = config.get('flush.policy') as FlushOption['policy'];
  let flush: FlushOption;
  if (policy === 'interval') {
    const intervalBytes = config.int('flush.interval.bytes');
    flush = { policy, intervalMs: config.int('flush.interval.ms'), ...(intervalBytes > 0 ? { intervalBytes } : {}) };
  } else {
    flush = { policy };
  }
  return {
    segmentBytes: config.int('segment.bytes'),
    segmentMs: config.int('segment.ms'),
    indexIntervalBytes: config.int('index.interval.bytes'),
    maxBatchBytes: config.maxMessageBytes,
    flush,
    // A compact-only topic is a changelog: time and size never delete a key's latest value.
    retentionBytes: deletesOldSegments(config) ? config.int('retention.bytes') : -1,
    retentionMs: deletesOldSegments(config) ? config.int('retention.ms') : -1,
    deleteRetentionMs: config.int('delete.retention.ms'),
    producerIdExpirationMs: config.brokerInt('producer.id.expiration.ms'),
  };
}
