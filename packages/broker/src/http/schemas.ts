/**
 * JSON Schemas several HTTP routes share, each declared once (component()):
 * validation inlines them, /openapi.json names them under
 * components/schemas. A schema one route uses is declared at that route.
 */
import { MAX_TOPIC_NAME_LENGTH } from '@mq/protocol/topic-name';
import { component, ERROR_CODE, type ParamSpec } from './route-spec.js';

export const ErrorBody = component('Error', {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'retriable'],
      properties: {
        code: { type: 'string', description: 'The protocol error code, e.g. UNKNOWN_TOPIC_OR_PARTITION' },
        message: { type: 'string' },
        retriable: { type: 'boolean' },
      },
    },
  },
});

/** Kafka's topic-name rules (validateTopicName in @mq/protocol). */
export const TopicName = component('TopicName', {
  type: 'string',
  minLength: 1,
  maxLength: MAX_TOPIC_NAME_LENGTH,
  pattern: '^[a-zA-Z0-9._-]+$',
  not: { enum: ['.', '..'] },
  description: "ASCII letters, digits, '.', '_' and '-'; not \".\" or \"..\"",
  [ERROR_CODE]: 'INVALID_TOPIC',
});

export const GroupId = component('GroupId', { type: 'string', minLength: 1, maxLength: 255 });

export const Encoding = component('Encoding', {
  type: 'string',
  enum: ['text', 'base64', 'json'],
  description:
    'How keys, values and header values are written in JSON: text (a non-string JSON key or value is stored as its JSON text), ' +
    'base64, or json (keys and values are JSON values, stored as JSON text; header values stay text)',
});

/** `?encoding=`: text unless asked. */
export const encodingQuery: ParamSpec = { schema: { allOf: [Encoding], default: 'text' } };

export const topicParam: ParamSpec = { schema: TopicName };
/** A partition that cannot exist is as unknown as one that does not: 404, like partition 7 of a 2-partition topic. */
export const partitionParam: ParamSpec = {
  schema: component('PartitionId', { type: 'integer', minimum: 0, maximum: 2147483647, [ERROR_CODE]: 'UNKNOWN_TOPIC_OR_PARTITION' }),
};
export const groupParam: ParamSpec = { schema: GroupId };

export const Header = component('Header', {
  type: 'object',
  required: ['key'],
  properties: { key: { type: 'string' }, value: { type: ['string', 'null'] } },
  additionalProperties: false,
});

const integers = { type: 'array', items: { type: 'integer' } };

export const TopicSummary = component('TopicSummary', {
  type: 'object',
  required: ['name', 'partition_count', 'replication_factor'],
  properties: { name: { type: 'string' }, partition_count: { type: 'integer' }, replication_factor: { type: 'integer' } },
});

export const TopicDetail = component('TopicDetail', {
  type: 'object',
  required: ['name', 'topic_id', 'partition_count', 'replication_factor', 'configs', 'partitions'],
  properties: {
    name: { type: 'string' },
    topic_id: { type: 'string' },
    partition_count: { type: 'integer' },
    replication_factor: { type: 'integer' },
    configs: { type: 'object', additionalProperties: { type: 'string' } },
    warning: { type: 'string' },
    partitions: {
      type: 'array',
      items: {
        type: 'object',
        required: ['partition', 'leader', 'replicas', 'isr'],
        properties: {
          partition: { type: 'integer' },
          leader: { type: 'integer' },
          leader_epoch: { type: 'integer' },
          replicas: integers,
          isr: integers,
          low: { type: 'integer', description: 'Log start offset on the leader; left out when the leader did not answer in time (cluster)' },
          high: { type: 'integer', description: 'High watermark on the leader; left out like low' },
          offline: { type: 'boolean', description: 'Present (true) when the partition cannot serve: its log failed to open, or it has no leader' },
          error: { type: 'string', description: 'Why it is offline' },
        },
      },
    },
  },
});

/** A record as reads and HTTP consumer polls answer it. */
export const ReadRecord = component('ReadRecord', {
  type: 'object',
  required: ['offset', 'timestamp', 'key', 'value', 'headers'],
  properties: {
    offset: { type: 'integer' },
    timestamp: { type: 'integer' },
    key: { description: 'Text, base64, or with encoding json the parsed JSON value; null for no key' },
    value: { description: 'Text, base64, or with encoding json the parsed JSON value; null for a tombstone' },
    not_json: { type: 'array', items: { enum: ['key', 'value'] }, description: 'encoding json: the fields that are not JSON, shown as text' },
    headers: { type: 'array', items: Header },
  },
});

export const PartitionReplicas = component('PartitionReplicas', {
  type: 'object',
  required: ['topic', 'partition', 'replicas', 'isr'],
  properties: { topic: { type: 'string' }, partition: { type: 'integer' }, replicas: integers, isr: integers },
});
