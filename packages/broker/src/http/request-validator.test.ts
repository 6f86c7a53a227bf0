import { isMqError, type MqError } from '@mq/protocol/errors';
import type { BrokerContext } from '../context.js';
import type { TopicBackend } from './backends/types.js';
import { compileValidator, type RawRequest } from './request-validator.js';
import { ERROR_CODE, type RouteSpec } from './route-spec.js';
import { httpStatusFor, Router } from './router.js';
import { registerRecordRoutes } from './routes/records.js';
import { registerTopicRoutes } from './routes/topics.js';

const spec: RouteSpec = {
  operationId: 'thing',
  summary: 'A route with every kind of input',
  params: { partition: { schema: { type: 'integer', minimum: 0, [ERROR_CODE]: 'UNKNOWN_TOPIC_OR_PARTITION' } } },
  query: {
    max_bytes: { schema: { type: 'integer', minimum: 1, default: 1024, [ERROR_CODE]: 'INVALID_FETCH_SIZE' } },
    flag: { schema: { type: 'boolean', default: false } },
    state: { schema: { type: 'array', items: { type: 'string' } } },
  },
  body: {
    required: true,
    schema: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: { name: { type: 'string', minLength: 1 }, count: { type: 'integer', minimum: 1, [ERROR_CODE]: 'INVALID_PARTITIONS' }, tags: { type: 'array', items: { type: 'string' } } },
    },
  },
  responses: { 200: { description: 'ok' } },
};

const raw = (over: Partial<{ params: Record<string, string>; query: string; body: unknown }> = {}): RawRequest => ({
  params: over.params ?? { partition: '3' },
  query: new URLSearchParams(over.query ?? ''),
  body: 'body' in over ? over.body : { name: 'n' },
});

/** The refusal a request gets: [HTTP status, code, message]. */
function refusal(validate: (r: RawRequest) => unknown, r: RawRequest): [number, string, string] {
  try {
    validate(r);
  } catch (err) {
    if (!isMqError(err)) throw err;
    const e = err as MqError;
    expect(e.retriable).toBe(false);
    return [httpStatusFor(e.code, e.retriable), e.code, e.message];
  }
  throw new Error('the request was accepted');
}

describe('request validator', () => {
  const validate = compileValidator(spec);

  it('reads path and query text as the declared types, fills in defaults, ignores undeclared query parameters', () => {
    expect(validate(raw({ query: 'flag=true&state=Stable&state=Empty&unknown=1&_=123' }))).toEqual({
      params: { partition: 3 },
      query: { max_bytes: 1024, flag: true, state: ['Stable', 'Empty'] },
      body: { name: 'n' },
    });
    // An empty value is as if not given.
    expect(validate(raw({ query: 'max_bytes=' })).query).toEqual({ max_bytes: 1024, flag: false });
  });

  it('refuses a bad body with 400 INVALID_REQUEST naming the field', () => {
    expect(refusal(validate, raw({ body: { name: 5 } }))).toEqual([400, 'INVALID_REQUEST', 'body.name must be string (got 5)']);
    expect(refusal(validate, raw({ body: {} }))).toEqual([400, 'INVALID_REQUEST', 'body.name is required']);
    expect(refusal(validate, raw({ body: { name: 'n', cout: 1 } }))).toEqual([400, 'INVALID_REQUEST', 'the body has an unknown field "cout"']);
    expect(refusal(validate, raw({ body: { name: 'n', tags: ['a', 7] } }))).toEqual([400, 'INVALID_REQUEST', 'body.tags[1] must be string (got 7)']);
    expect(refusal(validate, raw({ body: [1] }))).toEqual([400, 'INVALID_REQUEST', 'the body must be object (got [1])']);
    expect(refusal(validate, raw({ body: undefined }))).toEqual([400, 'INVALID_REQUEST', 'the request needs a JSON body']);
  });

  it("uses a schema's own error code for a value out of its bounds, INVALID_REQUEST for a wrong type", () => {
    expect(refusal(validate, raw({ body: { name: 'n', count: 0 } }))).toEqual([400, 'INVALID_PARTITIONS', 'body.count must be >= 1 (got 0)']);
    expect(refusal(validate, raw({ body: { name: 'n', count: 0.5 } }))).toEqual([400, 'INVALID_REQUEST', 'body.count must be integer (got 0.5)']);
    expect(refusal(validate, raw({ query: 'max_bytes=0' }))).toEqual([400, 'INVALID_FETCH_SIZE', 'query parameter "max_bytes" must be >= 1 (got 0)']);
    expect(refusal(validate, raw({ query: 'max_bytes=lots' }))).toEqual([400, 'INVALID_REQUEST', 'query parameter "max_bytes" must be integer (got "lots")']);
    expect(refusal(validate, raw({ query: 'flag=yes' }))).toEqual([400, 'INVALID_REQUEST', 'query parameter "flag" must be boolean (got "yes")']);
  });

  it('refuses a path parameter that cannot name a resource with its code, whatever failed', () => {
    expect(refusal(validate, raw({ params: { partition: 'x' } }))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'path parameter "partition" must be integer (got "x")']);
    expect(refusal(validate, raw({ params: { partition: '-1' } }))).toEqual([404, 'UNKNOWN_TOPIC_OR_PARTITION', 'path parameter "partition" must be >= 0 (got -1)']);
  });

  it('reads a left-out optional object body as {} with its defaults', () => {
    const optional = compileValidator({
      operationId: 'opt',
      summary: 'optional body',
      body: { required: false, schema: { type: 'object', properties: { cancel: { type: 'boolean', default: false } } } },
      responses: { 204: { description: 'done' } },
    });
    expect(optional(raw({ params: {}, body: undefined })).body).toEqual({ cancel: false });
    expect(optional(raw({ params: {}, body: { cancel: true } })).body).toEqual({ cancel: true });
  });
});

describe('the routes’ own schemas', () => {
  const router = new Router();
  registerTopicRoutes(router, {} as BrokerContext, {} as TopicBackend);
  registerRecordRoutes(router, {} as BrokerContext, {} as TopicBackend);
  const route = (method: string, pattern: string) => router.list().find((r) => r.method === method && r.pattern === pattern)!.validate!;
  const produce = route('POST', '/topics/{topic}/records');
  const create = route('POST', '/topics');
  const read = route('GET', '/topics/{topic}/partitions/{partition}/records');

  it('produce: the three body forms, and the field of a bad record named', () => {
    const at = (body: unknown, query = '') => ({ params: { topic: 't' }, query: new URLSearchParams(query), body });
    expect(produce(at({ value: 'x' })).query).toEqual({ acks: 'all' });
    produce(at([{ value: 'x' }, { key: { a: 1 }, value: null, headers: [{ key: 'h', value: 'v' }] }]));
    produce(at({ records: [{ value: 'x' }], encoding: 'base64' }));
    expect(refusal(produce, at({ nothing: true }))).toEqual([400, 'INVALID_REQUEST', 'body.value is required']);
    expect(refusal(produce, at([{ value: 'a' }, { key: 'k' }]))).toEqual([400, 'INVALID_REQUEST', 'body[1].value is required']);
    expect(refusal(produce, at({ value: 'x', partition: -1 }))).toEqual([400, 'INVALID_REQUEST', 'body.partition must be >= 0 (got -1)']);
    expect(refusal(produce, at({ value: 'x', headers: 'nope' }))).toEqual([400, 'INVALID_REQUEST', 'body.headers must be object or array (got "nope")']);
    expect(refusal(produce, at({ value: 'x', encoding: 'rot13' }))[2]).toBe('body.encoding must be one of "text", "base64", "json" (got "rot13")');
    expect(refusal(produce, at([]))).toEqual([400, 'INVALID_REQUEST', 'the body must NOT have fewer than 1 items (got [])']);
    expect(refusal(produce, at({ value: 'x' }, 'acks=0'))).toEqual([400, 'INVALID_REQUIRED_ACKS', 'query parameter "acks" must be one of "1", "all", "-1" (got "0")']);
    expect(refusal(produce, { params: { topic: 'bad name!' }, query: new URLSearchParams(), body: { value: 'x' } })[1]).toBe('INVALID_TOPIC');
  });

  it('create topic: Kafka’s codes for a bad name, partition count or replication factor', () => {
    const at = (body: unknown) => ({ params: {}, query: new URLSearchParams(), body });
    expect(refusal(create, at({ name: 'bad name' }))[1]).toBe('INVALID_TOPIC');
    expect(refusal(create, at({ name: '..' }))).toEqual([400, 'INVALID_TOPIC', 'body.name must not be ".."']);
    expect(refusal(create, at({ name: 'ok', partition_count: 0 }))[1]).toBe('INVALID_PARTITIONS');
    expect(refusal(create, at({ name: 'ok', replication_factor: -1 }))[1]).toBe('INVALID_REPLICATION_FACTOR');
    expect(refusal(create, at({ name: 'ok', configs: { 'retention.ms': 5 } }))).toEqual([400, 'INVALID_REQUEST', 'body.configs["retention.ms"] must be string (got 5)']);
    expect(refusal(create, at({ name: 'ok', partiton_count: 3 }))).toEqual([400, 'INVALID_REQUEST', 'the body has an unknown field "partiton_count"']);
  });

  it('read: offsets, sizes and encodings', () => {
    const at = (query: string, partition = '0') => ({ params: { topic: 't', partition }, query: new URLSearchParams(query), body: undefined });
    expect(read(at('offset=5&foo=bar'))).toEqual({ params: { topic: 't', partition: 0 }, query: { offset: 5, max_bytes: 1048576, max_records: 10000, timeout_ms: 0, encoding: 'text' }, body: undefined });
    expect(refusal(read, at('offset=-1'))[1]).toBe('OFFSET_OUT_OF_RANGE');
    expect(refusal(read, at('offset=abc'))[1]).toBe('INVALID_REQUEST');
    expect(refusal(read, at('max_bytes=0'))[1]).toBe('INVALID_FETCH_SIZE');
    expect(refusal(read, at('encoding=hex'))[1]).toBe('INVALID_REQUEST');
    expect(refusal(read, at('', 'x'))[0]).toBe(404);
  });
});
