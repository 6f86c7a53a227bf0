/**
 * The OpenAPI 3.1 document served at /openapi.json. Operations are described
 * here by "METHOD pattern"; a route registered without a description (a new
 * route module) still appears, with a minimal entry, so the document always
 * lists every route the router serves.
 */
import type { Route, Router } from './router.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [String(s), { $ref: `#/components/responses/Error${s}` }]));

const topicParam = { name: 'topic', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,249}$' } };
const partitionParam = { name: 'partition', in: 'path', required: true, schema: { type: 'integer', minimum: 0 } };

export const OPERATIONS: Readonly<Record<string, Json>> = {
  'POST /topics': {
    operationId: 'createTopic',
    summary: 'Create a topic',
    requestBody: { required: true, content: { 'application/json': { schema: ref('CreateTopic') } } },
    responses: { '201': json(ref('TopicDetail'), 'The topic was created'), ...errors(400, 409, 503) },
  },
  'GET /topics': {
    operationId: 'listTopics',
    summary: 'List topics (internal ones such as __consumer_offsets only with include_internal=true)',
    parameters: [{ name: 'include_internal', in: 'query', required: false, schema: { type: 'boolean', default: false } }],
    responses: { '200': json({ type: 'array', items: ref('TopicSummary') }, 'Every topic') },
  },
  'GET /topics/{topic}': {
    operationId: 'describeTopic',
    summary: 'Describe a topic: configs, partitions, leaders, replicas, ISR, watermarks',
    parameters: [topicParam],
    responses: { '200': json(ref('TopicDetail'), 'The topic'), ...errors(404) },
  },
  'DELETE /topics/{topic}': {
    operationId: 'deleteTopic',
    summary: 'Delete a topic and its data',
    parameters: [topicParam],
    responses: {
      '200': json(
        { type: 'object', properties: { name: { type: 'string' }, deleted: { const: true }, partition_count: { type: 'integer' } } },
        'The topic was deleted',
      ),
      ...errors(400, 403, 404),
    },
  },
  'POST /topics/{topic}/records': {
    operationId: 'produceRecords',
    summary: 'Produce one record, an array of records, or {records: [...]}',
    description:
      'Values, keys and header values are UTF-8 text unless `encoding` is "base64" (on the request object or on a record). ' +
      'A record with an explicit partition goes there; a keyed record goes to murmur2(key) % partitions (Kafka\'s default ' +
      'partitioner); an unkeyed record goes round-robin. Records of one partition in one request form one batch, in order. ' +
      'A single record answers {partition, offset}; the array forms answer an array in request order. ' +
      'In a cluster any broker takes the request: a partition led elsewhere is produced to on its leader over the ' +
      'inter-broker connection, and acks=all (the default) answers once every in-sync replica has the records.',
    parameters: [
      topicParam,
      { name: 'acks', in: 'query', required: false, schema: { enum: ['1', 'all', '-1'], default: 'all' } },
    ],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              ref('ProduceRecord'),
              { type: 'array', items: ref('ProduceRecord') },
              {
                type: 'object',
                required: ['records'],
                properties: { records: { type: 'array', items: ref('ProduceRecord') }, encoding: ref('Encoding') },
              },
            ],
          },
        },
      },
    },
    responses: {
      '200': json({ oneOf: [ref('RecordOffset'), { type: 'array', items: ref('RecordOffset') }] }, 'Where each record was written'),
      ...errors(400, 404, 413, 503),
    },
  },
  'GET /topics/{topic}/partitions/{partition}/records': {
    operationId: 'readRecords',
    summary: 'Read records of a partition from an offset',
    description: 'Only records below the high watermark. In a cluster any broker answers, reading from the partition leader.',
    parameters: [
      topicParam,
      partitionParam,
      { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'Default: the log start offset' },
      { name: 'max_bytes', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 1048576 } },
      { name: 'max_records', in: 'query', required: false, schema: { type: 'integer', minimum: 1, default: 10000 } },
      {
        name: 'timeout_ms',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 0, default: 0 },
        description: 'Long poll: with no record at the offset yet, wait up to this long for one (at most fetch.max.wait.ms, 30 s by default); 0 answers at once',
      },
      { name: 'encoding', in: 'query', required: false, schema: ref('Encoding') },
    ],
    responses: { '200': json(ref('RecordPage'), 'Records from the offset on'), ...errors(400, 404, 503) },
  },
  'GET /topics/{topic}/partitions/{partition}/watermarks': {
    operationId: 'watermarks',
    summary: 'Low (log start) and high (high watermark) offsets of a partition',
    parameters: [topicParam, partitionParam],
    responses: {
      '200': json({ type: 'object', properties: { low: { type: 'integer' }, high: { type: 'integer' } }, required: ['low', 'high'] }, 'Watermarks'),
      ...errors(404, 503),
    },
  },
  'GET /health': {
    operationId: 'health',
    summary: '200 once the broker serves requests',
    responses: { '200': json({ type: 'object', properties: { status: { const: 'ok' } } }, 'Serving'), ...errors(503) },
  },
  'GET /metrics': {
    operationId: 'metrics',
    summary: 'Prometheus metrics',
    responses: { '200': { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
  },
  'GET /openapi.json': {
    operationId: 'openapi',
    summary: 'This document',
    responses: { '200': json({ type: 'object' }, 'OpenAPI 3.1') },
  },
};

const groupParam = { name: 'group', in: 'path', required: true, schema: { type: 'string', minLength: 1 } };
const instanceParam = { name: 'instance', in: 'path', required: true, schema: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,128}$' } };
const noContent = (description: string) => ({ '204': { description } });

/** HTTP consumer groups (http/routes/consumers.ts), in the Confluent REST proxy's shape. */
export const CONSUMER_OPERATIONS: Readonly<Record<string, Json>> = {
  'POST /consumers/{group}': {
    operationId: 'createConsumerInstance',
    summary: 'Create a consumer instance in a group (a real group member inside the broker)',
    description: 'The body may be left out. Instances not used for http.consumer.instance.timeout.ms are closed and leave the group.',
    parameters: [groupParam],
    requestBody: {
      required: false,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,128}$', description: 'Default: a random id' },
              auto_offset_reset: { enum: ['earliest', 'latest'], default: 'latest' },
              auto_commit: { type: 'boolean', default: false, description: 'Commit what polls returned in the background (otherwise POST .../offsets)' },
            },
          },
        },
      },
    },
    responses: {
      '200': json({ type: 'object', properties: { instance_id: { type: 'string' }, base_uri: { type: 'string' } } }, 'The instance'),
      ...errors(400, 429),
    },
  },
  'POST /consumers/{group}/instances/{instance}/subscription': {
    operationId: 'subscribeConsumerInstance',
    summary: 'Subscribe the instance to topics (replaces an earlier subscription); the group assigns it partitions',
    parameters: [groupParam, instanceParam],
    requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['topics'], properties: { topics: { type: 'array', minItems: 1, items: { type: 'string' } } } } } } },
    responses: { ...noContent('Subscribed'), ...errors(400, 404) },
  },
  'GET /consumers/{group}/instances/{instance}/assignments': {
    operationId: 'consumerInstanceAssignments',
    summary: 'The partitions the group assigned to the instance',
    parameters: [groupParam, instanceParam],
    responses: {
      '200': json({ type: 'object', properties: { partitions: { type: 'array', items: { type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' } } } } } }, 'Assigned partitions'),
      ...errors(404),
    },
  },
  'GET /consumers/{group}/instances/{instance}/records': {
    operationId: 'pollConsumerInstance',
    summary: 'Poll records from the assigned partitions (a long poll)',
    parameters: [
      groupParam,
      instanceParam,
      { name: 'timeout_ms', in: 'query', required: false, schema: { type: 'integer', minimum: 0, default: 1000 }, description: 'Wait up to this long for records (at most fetch.max.wait.ms)' },
      { name: 'max_records', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 10000, default: 500 } },
      { name: 'encoding', in: 'query', required: false, schema: ref('Encoding') },
    ],
    responses: {
      '200': json(
        {
          type: 'array',
          items: {
            type: 'object',
            properties: {
              topic: { type: 'string' },
              partition: { type: 'integer' },
              offset: { type: 'integer' },
              timestamp: { type: 'integer' },
              key: {},
              value: {},
              not_json: { type: 'array', items: { enum: ['key', 'value'] } },
              headers: { type: 'array', items: ref('Header') },
            },
          },
        },
        'Records, in order within each partition',
      ),
      ...errors(400, 404),
    },
  },
  'POST /consumers/{group}/instances/{instance}/offsets': {
    operationId: 'commitConsumerInstance',
    summary: 'Commit offsets: the given ones (offset = the next record to read), or, with no body, everything polls returned',
    parameters: [groupParam, instanceParam],
    requestBody: {
      required: false,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              offsets: {
                type: 'array',
                items: { type: 'object', required: ['topic', 'partition', 'offset'], properties: { topic: { type: 'string' }, partition: { type: 'integer', minimum: 0 }, offset: { type: 'integer', minimum: 0 } } },
              },
            },
          },
        },
      },
    },
    responses: { ...noContent('Committed'), ...errors(400, 404, 503) },
  },
  'DELETE /consumers/{group}/instances/{instance}': {
    operationId: 'deleteConsumerInstance',
    summary: 'Close the instance: it leaves its group (committing only with auto_commit)',
    parameters: [groupParam, instanceParam],
    responses: { ...noContent('Closed'), ...errors(404) },
  },
};

/** Consumer groups (group/broker-groups.ts) and the cluster view (cluster/routes.ts). */
export const GROUP_OPERATIONS: Readonly<Record<string, Json>> = {
  'GET /groups': {
    operationId: 'listGroups',
    summary: 'List the consumer groups of the cluster (every broker is asked for the groups it coordinates)',
    parameters: [{ name: 'state', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } }, style: 'form', explode: true, description: 'Only groups in these states (repeatable)' }],
    responses: {
      '200': json({ type: 'array', items: { type: 'object', required: ['group', 'state'], properties: { group: { type: 'string' }, state: { type: 'string' }, protocol_type: { type: 'string' } } } }, 'The groups'),
      ...errors(400, 503),
    },
  },
  'GET /groups/{group}': {
    operationId: 'describeGroup',
    summary: 'Describe a group coordinated by this broker: members, assignments, committed offsets and lag',
    parameters: [groupParam],
    responses: {
      '200': json(
        {
          type: 'object',
          required: ['group', 'state', 'members', 'offsets', 'total_lag'],
          properties: {
            group: { type: 'string' },
            state: { type: 'string' },
            protocol_type: { type: 'string' },
            protocol: { type: 'string' },
            generation: { type: 'integer' },
            leader: { type: 'string' },
            members: { type: 'array', items: { type: 'object', properties: { member_id: { type: 'string' }, group_instance_id: { type: ['string', 'null'] }, client_id: { type: 'string' }, client_host: { type: 'string' }, assignment: { type: 'array' } } } },
            offsets: {
              type: 'array',
              items: {
                type: 'object',
                properties: {
                  topic: { type: 'string' },
                  partition: { type: 'integer' },
                  committed_offset: { type: 'integer' },
                  log_end_offset: { type: ['integer', 'null'] },
                  lag: { type: ['integer', 'null'] },
                  metadata: { type: 'string' },
                  owner: { type: ['string', 'null'] },
                },
              },
            },
            total_lag: { type: 'integer' },
          },
        },
        'The group',
      ),
      ...errors(400, 404, 503),
    },
  },
  'POST /groups/{group}/offsets': {
    operationId: 'commitGroupOffsets',
    summary: 'Commit offsets for a group from outside it (the group must be empty)',
    parameters: [groupParam],
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            oneOf: [
              ref('GroupOffset'),
              { type: 'object', required: ['offsets'], properties: { offsets: { type: 'array', minItems: 1, items: ref('GroupOffset') } } },
            ],
          },
        },
      },
    },
    responses: {
      '200': json({ type: 'object', properties: { group: { type: 'string' }, committed: { type: 'array', items: { type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' } } } } } }, 'Committed'),
      ...errors(400, 404, 409, 503),
    },
  },
  'DELETE /groups/{group}': {
    operationId: 'deleteGroup',
    summary: 'Delete an empty group and its committed offsets',
    parameters: [groupParam],
    responses: { '200': json({ type: 'object', properties: { group: { type: 'string' }, deleted: { const: true } } }, 'Deleted'), ...errors(400, 404, 409, 503) },
  },
  'POST /tokens': {
    operationId: 'createToken',
    summary: 'A bearer token for the caller (HTTP Basic credentials required; authentication.enabled=true), valid on this broker for http.token.lifetime.ms',
    responses: {
      '200': json({ type: 'object', required: ['token', 'expires_at', 'principal'], properties: { token: { type: 'string' }, expires_at: { type: 'string' }, principal: { type: 'string' } } }, 'The token: send it as Authorization: Bearer <token>'),
      ...errors(401),
    },
  },
  'GET /cluster': {
    operationId: 'describeCluster',
    summary: "This broker's view of the cluster: controller, Raft state, brokers, under-replicated and offline partitions, the replicas it hosts",
    responses: {
      '200': json(
        {
          type: 'object',
          required: ['brokerId', 'controllerId', 'brokers', 'topics', 'partitions', 'underReplicated', 'offline', 'hosted'],
          properties: {
            brokerId: { type: 'integer' },
            controllerId: { type: 'integer' },
            activeController: { type: 'boolean' },
            voters: { type: 'array', items: { type: 'integer' } },
            raft: { type: 'object', properties: { term: { type: 'integer' }, commit: { type: 'integer' }, applied: { type: 'integer' } } },
            brokers: { type: 'array', items: { type: 'object', required: ['id', 'fenced'], properties: { id: { type: 'integer' }, host: { type: 'string' }, port: { type: 'integer' }, httpPort: { type: 'integer' }, kafka: { type: ['string', 'null'], description: 'The Kafka listener\'s advertised host:port (null: none)' }, fenced: { type: 'boolean' } } } },
            topics: { type: 'integer' },
            partitions: { type: 'integer' },
            underReplicated: { type: 'array', items: ref('PartitionReplicas') },
            offline: { type: 'array', items: ref('PartitionReplicas') },
            hosted: { type: 'array', items: { type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' }, role: { type: 'string' }, highWatermark: { type: 'integer' }, sizeBytes: { type: 'integer', description: 'Bytes of this replica\'s log on this broker' } } } },
          },
        },
        'The cluster as this broker sees it',
      ),
    },
  },
};

const SCHEMAS: Json = {
  GroupOffset: {
    type: 'object',
    required: ['topic', 'partition', 'offset'],
    properties: { topic: { type: 'string' }, partition: { type: 'integer', minimum: 0 }, offset: { type: 'integer' }, metadata: { type: 'string' } },
  },
  PartitionReplicas: {
    type: 'object',
    properties: { topic: { type: 'string' }, partition: { type: 'integer' }, replicas: { type: 'array', items: { type: 'integer' } }, isr: { type: 'array', items: { type: 'integer' } } },
  },
  Encoding: {
    enum: ['text', 'base64', 'json'],
    default: 'text',
    description: 'How keys, values and header values are written in JSON: text (a non-string JSON key or value is stored as its JSON text), base64, or json (keys and values are JSON values, stored as JSON text; header values stay text)',
  },
  Error: {
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
  },
  CreateTopic: {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string', pattern: '^[a-zA-Z0-9._-]{1,249}$' },
      partition_count: { type: 'integer', minimum: 1, description: 'Default: the broker\'s num.partitions' },
      replication_factor: { type: 'integer', minimum: 1, description: 'Default: default.replication.factor; at most the number of brokers' },
      configs: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description:
          'retention.ms, retention.bytes, segment.bytes, segment.ms, index.interval.bytes, cleanup.policy, max.message.bytes, ' +
          'flush.policy (always|interval|os), flush.interval.ms, flush.interval.bytes, min.insync.replicas, message.timestamp.type',
      },
    },
  },
  TopicSummary: {
    type: 'object',
    properties: { name: { type: 'string' }, partition_count: { type: 'integer' }, replication_factor: { type: 'integer' } },
  },
  TopicDetail: {
    type: 'object',
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
          properties: {
            partition: { type: 'integer' },
            leader: { type: 'integer' },
            leader_epoch: { type: 'integer' },
            replicas: { type: 'array', items: { type: 'integer' } },
            isr: { type: 'array', items: { type: 'integer' } },
            low: { type: 'integer', description: 'Log start offset on the leader; left out when the leader did not answer in time (cluster)' },
            high: { type: 'integer', description: 'High watermark on the leader; left out like low' },
            offline: { type: 'boolean', description: 'Present (true) when the partition cannot serve: its log failed to open, or it has no leader' },
            error: { type: 'string', description: 'Why it is offline' },
          },
        },
      },
    },
  },
  Header: { type: 'object', required: ['key'], properties: { key: { type: 'string' }, value: { type: ['string', 'null'] } } },
  ProduceRecord: {
    type: 'object',
    required: ['value'],
    properties: {
      key: { description: 'A string (or, with encoding json or text, any JSON value), or null' },
      value: { description: 'A string (or, with encoding json or text, any JSON value), or null for a tombstone' },
      headers: {
        oneOf: [{ type: 'object', additionalProperties: { type: ['string', 'null'] } }, { type: 'array', items: ref('Header') }],
      },
      partition: { type: 'integer', minimum: 0 },
      timestamp: { type: 'integer', minimum: 0, description: 'Create time in ms; default now' },
      encoding: ref('Encoding'),
    },
  },
  RecordOffset: { type: 'object', properties: { partition: { type: 'integer' }, offset: { type: 'integer' } } },
  RecordPage: {
    type: 'object',
    properties: {
      topic: { type: 'string' },
      partition: { type: 'integer' },
      encoding: ref('Encoding'),
      next_offset: { type: 'integer' },
      low: { type: 'integer' },
      high: { type: 'integer' },
      records: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            offset: { type: 'integer' },
            timestamp: { type: 'integer' },
            key: { description: 'Text, base64, or with encoding json the parsed JSON value' },
            value: { description: 'Text, base64, or with encoding json the parsed JSON value' },
            not_json: { type: 'array', items: { enum: ['key', 'value'] }, description: 'encoding json: the fields that are not JSON, shown as text' },
            headers: { type: 'array', items: ref('Header') },
          },
        },
      },
    },
  },
};

const ERROR_TEXT: Record<number, string> = {
  400: 'Invalid request (bad name, config, offset, body)',
  401: 'Authentication required or failed (Authorization: Basic from loopback, or Bearer)',
  403: 'Not allowed by the broker configuration, or by the ACLs (TOPIC_/GROUP_/CLUSTER_AUTHORIZATION_FAILED)',
  404: 'Unknown topic, partition or consumer instance',
  409: 'Already exists',
  413: 'Too large',
  429: 'Too many (HTTP consumer instances over http.consumer.max.instances)',
  503: 'Retriable: not available right now',
};

// ---- scaleout
const partitionError = { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } };
const partitionResults = {
  type: 'array',
  items: { type: 'object', required: ['topic', 'partition'], properties: { topic: { type: 'string' }, partition: { type: 'integer' }, error: partitionError } },
};
const brokerList = { type: 'array', items: { type: 'integer' } };

export const SCALEOUT_OPERATIONS: Readonly<Record<string, Json>> = {
  'GET /reassignments': {
    operationId: 'listReassignments',
    summary: 'Partition reassignments in progress, with each move\'s progress from its partition\'s leader',
    responses: {
      '200': json(
        {
          type: 'object',
          required: ['reassignments'],
          properties: {
            reassignments: {
              type: 'array',
              items: {
                type: 'object',
                required: ['topic', 'partition', 'replicas', 'target_replicas', 'adding_replicas', 'removing_replicas', 'leader', 'isr'],
                properties: {
                  topic: { type: 'string' },
                  partition: { type: 'integer' },
                  replicas: brokerList,
                  target_replicas: brokerList,
                  adding_replicas: brokerList,
                  removing_replicas: brokerList,
                  leader: { type: 'integer' },
                  isr: brokerList,
                  progress: {
                    type: 'object',
                    properties: {
                      leader_log_end_offset: { type: 'integer' },
                      leader_log_bytes: { type: 'integer' },
                      adding: {
                        type: 'array',
                        items: {
                          type: 'object',
                          properties: { broker: { type: 'integer' }, log_end_offset: { type: 'integer' }, offset_lag: { type: 'integer' }, bytes_behind: { type: 'integer' }, in_isr: { type: 'boolean' } },
                        },
                      },
                    },
                  },
                },
              },
            },
          },
        },
        'The moves in progress',
      ),
    },
  },
  'POST /reassignments': {
    operationId: 'alterReassignments',
    summary: 'Start (replicas: broker ids, preferred leader first) or cancel (replicas: null) partition reassignments',
    description:
      'New replicas follow the leader outside the ISR until they have caught up, then join it; the removed ones are dropped ' +
      'and a removed leader hands over to the new set. Each partition is answered on its own (error: INVALID_REPLICA_ASSIGNMENT, ' +
      'INVALID_REPLICATION_FACTOR unless allow_replication_factor_change, REASSIGNMENT_IN_PROGRESS, UNKNOWN_TOPIC_OR_PARTITION, ...).',
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['partitions'],
            properties: {
              partitions: {
                type: 'array',
                items: { type: 'object', required: ['topic', 'partition', 'replicas'], properties: { topic: { type: 'string' }, partition: { type: 'integer' }, replicas: { oneOf: [brokerList, { type: 'null' }] } } },
              },
              allow_replication_factor_change: { type: 'boolean', default: false },
            },
          },
        },
      },
    },
    responses: { '200': json({ type: 'object', required: ['results'], properties: { results: partitionResults } }, 'One result per partition'), ...errors(400, 503) },
  },
  'DELETE /topics/{topic}/partitions/{partition}/reassignment': {
    operationId: 'cancelReassignment',
    summary: 'Cancel a partition\'s reassignment: its original replicas are restored',
    parameters: [topicParam, partitionParam],
    responses: {
      '200': json({ type: 'object', properties: { topic: { type: 'string' }, partition: { type: 'integer' }, cancelled: { const: true } } }, 'Cancelled'),
      ...errors(400, 404, 503),
    },
  },
  'POST /elect-leaders': {
    operationId: 'electLeaders',
    summary: 'Preferred-leader election (every partition, or those named): leadership moves to the first replica where it is alive and in sync',
    requestBody: {
      required: false,
      content: { 'application/json': { schema: { type: 'object', properties: { topics: { type: 'array', items: { type: 'object', required: ['topic'], properties: { topic: { type: 'string' }, partitions: brokerList } } } } } } },
    },
    responses: { '200': json({ type: 'object', required: ['moved', 'results'], properties: { moved: { type: 'integer' }, results: partitionResults } }, 'Leaders moved'), ...errors(400, 503) },
  },
  'POST /brokers/{broker}/decommission': {
    operationId: 'decommissionBroker',
    summary: 'Move every replica off a broker (then it can be stopped); {cancel: true} undoes the mark',
    description: 'Refused (400 INVALID_REPLICATION_FACTOR, nothing changed) when the other live brokers cannot hold a partition\'s replication factor. Call again until remaining_replicas is 0.',
    parameters: [{ name: 'broker', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }],
    requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', properties: { cancel: { type: 'boolean', default: false } } } } } },
    responses: {
      '200': json(
        { type: 'object', required: ['broker', 'remaining_replicas', 'moves'], properties: { broker: { type: 'integer' }, cancelled: { type: 'boolean' }, remaining_replicas: { type: 'integer' }, moves: partitionResults } },
        'Moves started',
      ),
      ...errors(400, 503),
    },
  },
};

export function openApiDocument(router: Router): Json {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of router.list() as Route[]) {
    if (!r.documented) continue;
    const key = `${r.method} ${r.pattern}`;
    const op = OPERATIONS[key] ?? CONSUMER_OPERATIONS[key] ?? GROUP_OPERATIONS[key] ?? SCALEOUT_OPERATIONS[key] ?? {
      summary: `${r.method} ${r.pattern}`,
      responses: { '200': { description: 'OK' } },
    };
    (paths[r.pattern] ??= {})[r.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'mq broker HTTP API',
      version: '0.1.0',
      description:
        'Topics and records over HTTP/JSON. Errors are {error: {code, message, retriable}}: 404 unknown topic or partition, ' +
        '400 invalid input, 409 already exists, 413 too large, 503 retriable. In a cluster every broker serves the whole API: ' +
        'topic changes go through the controller, records to and from each partition\'s leader.',
    },
    paths,
    components: {
      schemas: SCHEMAS,
      responses: Object.fromEntries(
        Object.entries(ERROR_TEXT).map(([s, d]) => [`Error${s}`, json(ref('Error'), d)]),
      ),
    },
  };
}
