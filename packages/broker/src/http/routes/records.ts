/**
 * HTTP records: produce JSON records (one, an array, or `{records: [...]}`)
 * and read them back decoded. Values, keys and header values are UTF-8 text
 * by default (a key or value that is a JSON object, array, number or boolean
 * is stored as its JSON text), base64 with `"encoding": "base64"`, JSON with
 * `"encoding": "json"` (every key and value stored as JSON text; on the request
 * or on one record; `?encoding=base64|json` when reading). Keyed records go where Kafka's
 * default partitioner puts them (murmur2), unkeyed ones round-robin, and an
 * explicit partition wins. Decoding records is for display only: the binary
 * produce and fetch paths never do it.
 */
import { murmur2Partition } from '@mq/client/partitioner';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, decodeBatch, encodeBatchSync, iterateBatches, type RecordInput } from '@mq/protocol/batch';
import { MqError, isMqError } from '@mq/protocol/errors';
import type { BrokerContext } from '../../context.js';
import { parseAcks } from '@mq/protocol/acks';
import { component, ERROR_CODE } from '../route-spec.js';
import type { Router } from '../router.js';
import type { TopicBackend } from '../backends/types.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import { bytes, headerBytes, recordJson, type Encoding } from '../record-encoding.js';
import { Encoding as EncodingSchema, encodingQuery, Header, partitionParam, ReadRecord, topicParam } from '../schemas.js';

interface JsonRecord {
  key?: unknown;
  value: unknown;
  headers?: Record<string, string | null> | Array<{ key: string; value: string | null }>;
  partition?: number;
  timestamp?: number;
  encoding?: Encoding;
}

const ProduceRecord = component('ProduceRecord', {
  type: 'object',
  required: ['value'],
  additionalProperties: false,
  properties: {
    key: { description: 'A string (with encoding text or json, any JSON value), or null' },
    value: { description: 'A string (with encoding text or json, any JSON value), or null for a tombstone' },
    headers: { oneOf: [{ type: 'object', additionalProperties: { type: ['string', 'null'] } }, { type: 'array', items: Header }] },
    partition: { type: 'integer', minimum: 0, description: 'Default: murmur2(key) % partitions for a keyed record, round-robin otherwise' },
    timestamp: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'Create time in ms; default now' },
    encoding: { allOf: [EncodingSchema], description: "Default: the request's encoding" },
  },
});

const produceBody = {
  oneOf: [
    ProduceRecord,
    { type: 'array', minItems: 1, items: ProduceRecord },
    {
      type: 'object',
      required: ['records'],
      additionalProperties: false,
      properties: { records: { type: 'array', minItems: 1, items: ProduceRecord }, encoding: { allOf: [EncodingSchema], description: 'Default: text' } },
    },
  ],
};

const RecordOffset = component('RecordOffset', { type: 'object', required: ['partition', 'offset'], properties: { partition: { type: 'integer' }, offset: { type: 'integer' } } });

const RecordPage = component('RecordPage', {
  type: 'object',
  required: ['topic', 'partition', 'encoding', 'records', 'next_offset', 'low', 'high'],
  properties: {
    topic: { type: 'string' },
    partition: { type: 'integer' },
    encoding: EncodingSchema,
    records: { type: 'array', items: ReadRecord },
    next_offset: { type: 'integer', description: 'Where the next read starts' },
    skipped: {
      type: 'array',
      description: 'Batches no reader can decode, skipped',
      items: { type: 'object', properties: { base_offset: { type: 'integer' }, last_offset: { type: 'integer' }, code: { type: 'string' }, error: { type: 'string' } } },
    },
    low: { type: 'integer' },
    high: { type: 'integer' },
  },
});

function toInput(r: JsonRecord, i: number, defaultEnc: Encoding): { record: RecordInput; key: Buffer | null; partition?: number } {
  const enc = r.encoding ?? defaultEnc;
  const key = bytes(r.key, enc, `record ${i} key`);
  const value = bytes(r.value, enc, `record ${i} value`);
  const list = r.headers === undefined ? [] : Array.isArray(r.headers) ? r.headers : Object.entries(r.headers).map(([k, v]) => ({ key: k, value: v }));
  const headers = list.map((h) => ({ key: h.key, value: headerBytes(h.value, enc, `record ${i} header ${h.key}`) }));
  const record: RecordInput = { key, value, headers, ...(r.timestamp !== undefined ? { timestamp: r.timestamp } : {}) };
  return { record, key, ...(r.partition !== undefined ? { partition: r.partition } : {}) };
}

export function registerRecordRoutes(router: Router, ctx: BrokerContext, backend: TopicBackend): void {
  const roundRobin = new Map<string, number>();

  router.add(
    'POST',
    '/topics/{topic}/records',
    {
      operationId: 'produceRecords',
      summary: 'Produce one record, an array of records, or {records: [...]}',
      description:
        'Values, keys and header values are UTF-8 text unless `encoding` is "base64" or "json" (on the request object or on a record). ' +
        "A record with an explicit partition goes there; a keyed record goes to murmur2(key) % partitions (Kafka's default " +
        'partitioner); an unkeyed record goes round-robin. Records of one partition in one request form one batch, in order. ' +
        'A single record answers {partition, offset}; the array forms answer an array in request order. ' +
        'In a cluster any broker takes the request: a partition led elsewhere is produced to on its leader over the ' +
        'inter-broker connection, and acks=all (the default) answers once every in-sync replica has the records.',
      params: { topic: topicParam },
      query: {
        acks: {
          schema: { type: 'string', enum: ['1', 'all', '-1'], default: 'all', [ERROR_CODE]: 'INVALID_REQUIRED_ACKS' },
          description: 'all (or -1): every in-sync replica has the records; 1: the leader has them. acks=0 is not offered over HTTP (an answer is always sent)',
        },
      },
      body: { required: true, schema: produceBody },
      responses: { 200: { description: 'Where each record was written', schema: { oneOf: [RecordOffset, { type: 'array', items: RecordOffset }] } } },
      errors: [404, 413, 503],
    },
    async (req) => {
      const topicName = req.params.topic!;
      refuseInternal(topicName, 'produce to');
      const acks = parseAcks(req.input.query.acks as string);
      const body = req.input.body as JsonRecord | JsonRecord[] | { records: JsonRecord[]; encoding?: Encoding };
      let items: JsonRecord[];
      let single = false;
      let enc: Encoding = 'text';
      if (Array.isArray(body)) items = body;
      else if ('records' in body) {
        items = body.records;
        enc = body.encoding ?? 'text';
      } else {
        items = [body];
        single = true;
      }
      const topic = await backend.produceTarget(topicName);
      const n = topic.partitionCount;
      const byPartition = new Map<number, { records: RecordInput[]; slots: number[] }>();
      items.forEach((raw, i) => {
        const { record, key, partition } = toInput(raw, i, enc);
        let p: number;
        if (partition !== undefined) {
          if (partition >= n) {
            throw new MqError('UNKNOWN_TOPIC_OR_PARTITION', `topic "${topicName}" has no partition ${partition} (it has ${n})`, { retriable: false });
          }
          p = partition;
        } else if (key !== null) {
          p = murmur2Partition(key, n);
        } else {
          const next = roundRobin.get(topicName) ?? 0;
          roundRobin.set(topicName, (next + 1) % n);
          p = next % n;
        }
        let group = byPartition.get(p);
        if (!group) byPartition.set(p, (group = { records: [], slots: [] }));
        group.records.push(record);
        group.slots.push(i);
      });
      const now = ctx.clock();
      const results: Array<{ partition: number; offset: number }> = new Array(items.length);
      // Encode and size-check every batch before appending any, so a refused request writes nothing.
      const limit = topic.maxMessageBytes;
      const batches = [...byPartition].map(([p, group]) => {
        const batch = encodeBatchSync(group.records, { now });
        if (batch.length > limit) {
          throw new MqError(
            'RECORD_TOO_LARGE',
            `the ${group.records.length} record(s) for partition ${p} make a batch of ${batch.length} bytes, over max.message.bytes=${limit}`,
          );
        }
        return { p, group, batch };
      });
      const appends = batches.map(({ p, group, batch }) => {
        return backend.append(topicName, p, batch, acks, { now, signal: req.signal }).then((r) => {
          group.slots.forEach((slot, j) => (results[slot] = { partition: p, offset: r.baseOffset + j }));
        });
      });
      const settled = await Promise.allSettled(appends);
      const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failed) throw failed.reason;
      return { status: 200, body: single ? results[0] : results };
    },
  );

  router.add(
    'GET',
    '/topics/{topic}/partitions/{partition}/records',
    {
      operationId: 'readRecords',
      summary: 'Read records of a partition from an offset',
      description: 'Only records below the high watermark. In a cluster any broker answers, reading from the partition leader.',
      params: { topic: topicParam, partition: partitionParam },
      query: {
        offset: { schema: { type: 'integer', minimum: 0, [ERROR_CODE]: 'OFFSET_OUT_OF_RANGE' }, description: 'Default: the log start offset' },
        max_bytes: { schema: { type: 'integer', minimum: 1, default: 1024 * 1024, [ERROR_CODE]: 'INVALID_FETCH_SIZE' }, description: 'At most fetch.max.bytes' },
        max_records: { schema: { type: 'integer', minimum: 1, default: 10_000 } },
        timeout_ms: {
          schema: { type: 'integer', minimum: 0, default: 0 },
          description: 'Long poll: with no record at the offset yet, wait up to this long for one (at most fetch.max.wait.ms, 30 s by default); 0 answers at once',
        },
        encoding: encodingQuery,
      },
      responses: { 200: { description: 'Records from the offset on', schema: RecordPage } },
      errors: [404, 503],
    },
    async (req) => {
      const topic = req.params.topic!;
      const q = req.input.query as { offset?: number; max_bytes: number; max_records: number; timeout_ms: number; encoding: Encoding };
      const partition = req.input.params.partition as number;
      const limit = ctx.config.int('fetch.max.bytes');
      const maxBytes = q.max_bytes;
      if (maxBytes > limit) throw new MqError('INVALID_FETCH_SIZE', `max_bytes must be between 1 and ${limit} (fetch.max.bytes), got ${maxBytes}`);
      const maxRecords = q.max_records;
      // A long poll, as a consumer's fetch: wait up to timeout_ms (at most fetch.max.wait.ms) for a first record.
      const maxWait = ctx.config.int('fetch.max.wait.ms');
      const timeoutMs = q.timeout_ms;
      if (timeoutMs > maxWait) throw new MqError('INVALID_REQUEST', `timeout_ms must be between 0 and ${maxWait} (fetch.max.wait.ms), got ${timeoutMs}`);
      const enc = q.encoding;
      const offsetParam = q.offset;
      const read = await backend.read(topic, partition, offsetParam, maxBytes, req.signal, timeoutMs);
      const buf = read.records;
      const offset = read.offset;
      const records: Array<Record<string, unknown>> = [];
      // Batches no reader can decode (stored before produce verified records): skipped, named in the answer, logged once.
      const skipped: Array<Record<string, unknown>> = [];
      const maxDecompressedBytes = Math.max(DEFAULT_MAX_DECOMPRESSED_BYTES, ctx.config.int('message.max.bytes'));
      let next = offset;
      outer: for (const span of iterateBatches(buf)) {
        let batch;
        try {
          batch = await decodeBatch(buf, span.position, { maxDecompressedBytes });
        } catch (err) {
          if (!isMqError(err)) throw err;
          const e = err as MqError;
          const lastOffset = span.header.baseOffset + span.header.lastOffsetDelta;
          skipped.push({ base_offset: span.header.baseOffset, last_offset: lastOffset, code: e.code, error: e.message });
          ctx.logger.warn({ topic, partition, baseOffset: span.header.baseOffset, lastOffset, code: e.code, err: e.message }, 'http read skipped a batch it cannot decode');
          if (records.length < maxRecords) next = Math.max(next, lastOffset + 1);
          continue;
        }
        for (const r of batch.records) {
          if (r.offset < offset) continue;
          if (records.length >= maxRecords) break outer;
          records.push(recordJson(r, enc));
          next = r.offset + 1;
        }
        if (records.length < maxRecords) next = Math.max(next, span.header.baseOffset + span.header.lastOffsetDelta + 1);
      }
      return {
        status: 200,
        body: {
          topic,
          partition,
          encoding: enc,
          records,
          next_offset: next,
          ...(skipped.length > 0 ? { skipped } : {}),
          low: read.low,
          high: read.high,
        },
      };
    },
  );
}
