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
import type { Router } from '../router.js';
import type { TopicBackend } from '../backends/types.js';
import { partitionParam } from './topics.js';
import { refuseInternal } from '@mq/protocol/topic-name';
import { bytes, headerBytes, parseEncoding, recordJson, type Encoding } from '../record-encoding.js';

interface JsonRecord {
  key?: unknown;
  value: unknown;
  headers?: Record<string, string | null> | Array<{ key: string; value: string | null }>;
  partition?: number;
  timestamp?: number;
  encoding?: Encoding;
}

function toInput(raw: unknown, i: number, defaultEnc: Encoding): { record: RecordInput; key: Buffer | null; partition?: number } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new MqError('INVALID_REQUEST', `record ${i} must be an object {key, value, headers, partition}`);
  }
  const r = raw as JsonRecord;
  if (!('value' in r)) throw new MqError('INVALID_REQUEST', `record ${i} has no "value" (use null for a tombstone)`);
  const enc = r.encoding === undefined ? defaultEnc : parseEncoding(r.encoding, `record ${i}`);
  const key = bytes(r.key, enc, `record ${i} key`);
  const value = bytes(r.value, enc, `record ${i} value`);
  const headers: Array<{ key: string; value: Buffer | null }> = [];
  if (r.headers !== undefined && r.headers !== null) {
    const list = Array.isArray(r.headers)
      ? r.headers
      : typeof r.headers === 'object'
        ? Object.entries(r.headers).map(([k, v]) => ({ key: k, value: v }))
        : undefined;
    if (!list) throw new MqError('INVALID_REQUEST', `record ${i} headers must be an object or an array of {key, value}`);
    for (const h of list) {
      if (typeof h !== 'object' || h === null || typeof h.key !== 'string') {
        throw new MqError('INVALID_REQUEST', `record ${i} has a header without a string key`);
      }
      headers.push({ key: h.key, value: headerBytes(h.value, enc, `record ${i} header ${h.key}`) });
    }
  }
  let partition: number | undefined;
  if (r.partition !== undefined && r.partition !== null) {
    if (typeof r.partition !== 'number' || !Number.isInteger(r.partition) || r.partition < 0) {
      throw new MqError('INVALID_REQUEST', `record ${i} partition must be a non-negative integer`);
    }
    partition = r.partition;
  }
  if (r.timestamp !== undefined && (typeof r.timestamp !== 'number' || !Number.isSafeInteger(r.timestamp) || r.timestamp < 0)) {
    throw new MqError('INVALID_REQUEST', `record ${i} timestamp must be milliseconds since the epoch`);
  }
  const record: RecordInput = { key, value, headers, ...(r.timestamp !== undefined ? { timestamp: r.timestamp } : {}) };
  return { record, key, ...(partition !== undefined ? { partition } : {}) };
}

export function intParam(q: URLSearchParams, name: string, fallback: number): number {
  const v = q.get(name);
  if (v === null || v === '') return fallback;
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(Number(v))) {
    throw new MqError('INVALID_REQUEST', `query parameter ${name}=${v} is not an integer`);
  }
  return Number(v);
}

export function registerRecordRoutes(router: Router, ctx: BrokerContext, backend: TopicBackend): void {
  const roundRobin = new Map<string, number>();

  router.add('POST', '/topics/{topic}/records', async (req) => {
    const topicName = req.params.topic!;
    refuseInternal(topicName, 'produce to');
    const acksParam = req.query.get('acks');
    const acks = parseAcks(acksParam ?? 'all');
    if (acks === 0) throw new MqError('INVALID_REQUIRED_ACKS', 'acks=0 is not offered over HTTP (use 1 or all)');
    const body = await req.json();
    let items: unknown[];
    let single = false;
    let enc: Encoding = 'text';
    if (Array.isArray(body)) items = body;
    else if (typeof body === 'object' && body !== null && Array.isArray((body as { records?: unknown }).records)) {
      items = (body as { records: unknown[] }).records;
      enc = parseEncoding((body as { encoding?: unknown }).encoding, 'request');
    } else {
      items = [body];
      single = true;
    }
    if (items.length === 0) throw new MqError('INVALID_REQUEST', 'no records to produce');
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
  });

  router.add('GET', '/topics/{topic}/partitions/{partition}/records', async (req) => {
    const topic = req.params.topic!;
    const partition = partitionParam(req.params.partition);
    const asked = req.query.get('offset');
    const offsetParam = asked === null || asked === '' ? undefined : intParam(req.query, 'offset', 0);
    const limit = ctx.config.int('fetch.max.bytes');
    const maxBytes = intParam(req.query, 'max_bytes', 1024 * 1024);
    if (maxBytes < 1 || maxBytes > limit) {
      throw new MqError('INVALID_FETCH_SIZE', `max_bytes must be between 1 and ${limit}, got ${maxBytes}`);
    }
    const maxRecords = intParam(req.query, 'max_records', 10_000);
    if (maxRecords < 1) throw new MqError('INVALID_REQUEST', 'max_records must be at least 1');
    // A long poll, as a consumer's fetch: wait up to timeout_ms (at most fetch.max.wait.ms) for a first record.
    const maxWait = ctx.config.int('fetch.max.wait.ms');
    const timeoutMs = intParam(req.query, 'timeout_ms', 0);
    if (timeoutMs < 0 || timeoutMs > maxWait) throw new MqError('INVALID_REQUEST', `timeout_ms must be between 0 and ${maxWait} (fetch.max.wait.ms), got ${timeoutMs}`);
    const enc = parseEncoding(req.query.get('encoding') ?? undefined, 'query');
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
  });
}
