/**
 * GET /log-dirs: the partition replicas every live broker hosts and their
 * size on its disk, asked of each broker with DescribeLogDirs (the one
 * request path: the backend authorizes the caller for each broker asked,
 * the same cluster DESCRIBE check each time). A broker that does not answer in time is listed with its error,
 * not left out.
 */
import { errorCodeFromNumber, isMqError } from '@mq/protocol/errors';
import type { TopicBackend } from '../backends/types.js';
import type { Router } from '../router.js';
import { TopicName } from '../schemas.js';

const replica = {
  type: 'object',
  required: ['topic', 'partition', 'size_bytes', 'offset_lag', 'leader'],
  properties: {
    topic: { type: 'string' },
    partition: { type: 'integer' },
    size_bytes: { type: 'integer', description: "Bytes of the replica's log on this broker's disk" },
    offset_lag: { type: 'integer', description: "Records between the replica's log end and the high watermark this broker knows (0 on the leader)" },
    leader: { type: 'boolean' },
    bytes_in_per_sec: { type: 'number', description: 'On the leader: record batch bytes produced per second over the last complete 10 s window (0 elsewhere)' },
  },
};

const brokerLogDir = {
  type: 'object',
  required: ['broker'],
  properties: {
    broker: { type: 'integer' },
    log_dir: { type: 'string' },
    total_bytes: { type: 'integer', description: 'Size of the file system holding the log directory (-1: unknown)' },
    usable_bytes: { type: 'integer', description: 'Bytes still free there for the broker (-1: unknown)' },
    replicas: { type: 'array', items: replica },
    error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
  },
};

export function registerLogDirRoutes(router: Router, backend: TopicBackend, liveBrokers: () => number[]): void {
  router.add(
    'GET',
    '/log-dirs',
    {
      operationId: 'describeLogDirs',
      summary: "The partition replicas each live broker hosts and their size on its disk (Kafka's DescribeLogDirs, asked of every live broker)",
      query: { topic: { schema: TopicName, description: 'Only this topic (default: every topic)' } },
      responses: { 200: { description: 'One entry per live broker', schema: { type: 'object', required: ['brokers'], properties: { brokers: { type: 'array', items: brokerLogDir } } } } },
      errors: [503],
    },
    async (req) => {
      const topic = req.input.query.topic as string | undefined;
      const topics = topic ? [topic] : [];
      const brokers = await Promise.all(
        liveBrokers().map(async (id) => {
          try {
            const r = await backend.request(id, 'describeLogDirs', { topics });
            const code = errorCodeFromNumber(r.errorCode ?? 0);
            if (code !== 'NONE') return { broker: id, error: { code, message: r.errorMessage ?? '' } };
            return {
              broker: id,
              log_dir: r.logDir ?? '',
              total_bytes: Number(r.totalBytes ?? -1),
              usable_bytes: Number(r.usableBytes ?? -1),
              replicas: (r.replicas ?? []).map((x) => ({ topic: x.topic ?? '', partition: x.partition ?? 0, size_bytes: Number(x.sizeBytes ?? 0), offset_lag: Number(x.offsetLag ?? 0), leader: x.leader === true, bytes_in_per_sec: x.bytesInPerSec ?? 0 })),
            };
          } catch (err) {
            // The caller's own refusal (authentication, authorization) is the answer; a broker that cannot be asked is listed with why.
            if (isMqError(err) && /AUTHORIZATION_FAILED|AUTHENTICATION_FAILED/.test(err.code)) throw err;
            return { broker: id, error: { code: isMqError(err) ? err.code : 'UNKNOWN', message: (err as Error).message } };
          }
        }),
      );
      return { status: 200, body: { brokers } };
    },
  );
}
