/**
 * HTTP consumer groups, in the Confluent REST proxy's shape: create an instance in a group, subscribe it, poll
 * records (long-polled), commit, delete. For languages with no mq client; the instances are real group members
 * (http/consumers/consumer-instances.ts), so they share partitions with every other member of their group.
 */
import { MqError } from '@mq/protocol/errors';
import { validateTopicName } from '@mq/protocol/topic-name';
import type { BrokerContext } from '../../context.js';
import type { ConsumerInstances } from '../consumers/consumer-instances.js';
import { parseEncoding, recordJson } from '../record-encoding.js';
import type { HttpRequest, Router } from '../router.js';
import { intParam } from './records.js';

/** A request whose body may be left out (POST /consumers/{group}, POST .../offsets): none reads as {}. */
async function optionalJson(req: HttpRequest): Promise<unknown> {
  const h = req.raw.headers;
  if ((h['content-length'] === undefined || h['content-length'] === '0') && h['transfer-encoding'] === undefined) return {};
  return req.json();
}

function objectBody(body: unknown, what: string): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new MqError('INVALID_REQUEST', `${what} must be a JSON object`);
  return body as Record<string, unknown>;
}

export function registerConsumerRoutes(router: Router, ctx: BrokerContext, instances: ConsumerInstances): void {
  const base = (group: string, id: string) => `/consumers/${encodeURIComponent(group)}/instances/${encodeURIComponent(id)}`;

  router.add('POST', '/consumers/{group}', async (req) => {
    const group = req.params.group!;
    const b = objectBody(await optionalJson(req), 'the body');
    const reset = b.auto_offset_reset ?? 'latest';
    if (reset !== 'earliest' && reset !== 'latest') throw new MqError('INVALID_REQUEST', `auto_offset_reset must be "earliest" or "latest", got ${JSON.stringify(reset)}`);
    if (b.auto_commit !== undefined && typeof b.auto_commit !== 'boolean') throw new MqError('INVALID_REQUEST', 'auto_commit must be true or false');
    if (b.name !== undefined && typeof b.name !== 'string') throw new MqError('INVALID_REQUEST', 'name must be a string');
    const instance = instances.create(group, { ...(typeof b.name === 'string' ? { name: b.name } : {}), autoOffsetReset: reset, autoCommit: b.auto_commit === true });
    return { status: 200, body: { instance_id: instance.id, base_uri: base(group, instance.id) } };
  });

  router.add('POST', '/consumers/{group}/instances/{instance}/subscription', async (req) => {
    const instance = instances.get(req.params.group!, req.params.instance!);
    const topics = objectBody(await req.json(), 'the body').topics;
    if (!Array.isArray(topics) || topics.length === 0 || !topics.every((t) => typeof t === 'string')) {
      throw new MqError('INVALID_REQUEST', 'topics must be a non-empty array of topic names');
    }
    for (const t of topics as string[]) validateTopicName(t);
    instance.consumer.subscribe(topics as string[]);
    return { status: 204 };
  });

  router.add('GET', '/consumers/{group}/instances/{instance}/assignments', async (req) => {
    const instance = instances.get(req.params.group!, req.params.instance!);
    return { status: 200, body: { partitions: instance.consumer.assignment().map((tp) => ({ topic: tp.topic, partition: tp.partition })) } };
  });

  router.add('GET', '/consumers/{group}/instances/{instance}/records', async (req) => {
    const instance = instances.get(req.params.group!, req.params.instance!);
    const maxWait = ctx.config.int('fetch.max.wait.ms');
    const timeoutMs = intParam(req.query, 'timeout_ms', 1000);
    if (timeoutMs < 0 || timeoutMs > maxWait) throw new MqError('INVALID_REQUEST', `timeout_ms must be between 0 and ${maxWait} (fetch.max.wait.ms), got ${timeoutMs}`);
    const maxRecords = intParam(req.query, 'max_records', 500);
    if (maxRecords < 1 || maxRecords > 10_000) throw new MqError('INVALID_REQUEST', `max_records must be between 1 and 10000, got ${maxRecords}`);
    const enc = parseEncoding(req.query.get('encoding') ?? undefined, 'query');
    const records = await instances.exclusive(instance, () => instance.consumer.poll(timeoutMs, { maxRecords, signal: req.signal }));
    return {
      status: 200,
      body: records.map((r) => ({ topic: r.topic, partition: r.partition, ...recordJson(r, enc) })),
    };
  });

  router.add('POST', '/consumers/{group}/instances/{instance}/offsets', async (req) => {
    const instance = instances.get(req.params.group!, req.params.instance!);
    const list = objectBody(await optionalJson(req), 'the body').offsets;
    let offsets: Array<{ topic: string; partition: number; offset: number }> | undefined;
    if (list !== undefined) {
      if (!Array.isArray(list)) throw new MqError('INVALID_REQUEST', 'offsets must be an array of {topic, partition, offset}');
      offsets = list.map((o: unknown, i) => {
        const x = o as { topic?: unknown; partition?: unknown; offset?: unknown };
        if (typeof x?.topic !== 'string' || !Number.isInteger(x.partition) || (x.partition as number) < 0 || !Number.isSafeInteger(x.offset) || (x.offset as number) < 0) {
          throw new MqError('INVALID_REQUEST', `offsets[${i}] must be {topic, partition, offset} with a non-negative partition and offset (the next record to read)`);
        }
        return { topic: x.topic, partition: x.partition as number, offset: x.offset as number };
      });
    }
    // No offsets: everything the instance's polls returned so far.
    await instances.exclusive(instance, () => instance.consumer.commit(offsets, { signal: req.signal }));
    return { status: 204 };
  });

  router.add('DELETE', '/consumers/{group}/instances/{instance}', async (req) => {
    await instances.remove(req.params.group!, req.params.instance!);
    return { status: 204 };
  });
}
