import { createRequire } from 'node:module';
import { errorNumber } from '@mq/protocol/errors';
import { createTopic, httpJson, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

const require = createRequire(import.meta.url);
// kafkajs's Java-compatible murmur2 (its DefaultPartitioner), as the reference.
const kafkaMurmur2 = require('kafkajs/src/producer/partitioners/default/murmur2.js') as (key: Buffer | string) => number;
const kafkaPartition = (key: string, n: number) => (kafkaMurmur2(Buffer.from(key)) & 0x7fffffff) % n;

describe('HTTP API', () => {
  let t: TestBroker;
  let api: string;
  beforeAll(async () => {
    t = await startTestBroker({ 'http.max.body.bytes': String(64 * 1024) });
    api = t.httpUrl;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('answers /health once serving', async () => {
    const r = await httpJson(`${api}/health`);
    expect(r).toEqual({ status: 200, body: { status: 'ok', broker_id: 1, cluster_id: t.broker.clusterId, topics: expect.any(Number) } });
  });

  it('creates, lists, describes and deletes topics', async () => {
    const name = topicName('http');
    const created = await httpJson(`${api}/topics`, { body: { name, partition_count: 3, replication_factor: 1, configs: { 'retention.ms': '60000' } } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name, partition_count: 3, replication_factor: 1 });
    expect(created.body.configs['retention.ms']).toBe('60000');
    expect((await httpJson(`${api}/topics`, { body: { name, partition_count: 1 } })).status).toBe(409);
    const list = await httpJson(`${api}/topics`);
    expect(list.body).toContainEqual({ name, partition_count: 3, replication_factor: 1 });
    const one = await httpJson(`${api}/topics/${name}`);
    expect(one.body.partitions).toHaveLength(3);
    expect(one.body.partitions[0]).toEqual({ partition: 0, leader: 1, leader_epoch: 0, replicas: [1], isr: [1], low: 0, high: 0 });
    expect((await httpJson(`${api}/topics/${name}`, { method: 'DELETE' })).status).toBe(200);
    const gone = await httpJson(`${api}/topics/${name}`);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION', retriable: false });
  });

  it('refuses bad topic requests with 400 and a JSON error', async () => {
    const cases: Array<[unknown, string]> = [
      [{ name: 'bad name', partition_count: 1 }, 'INVALID_TOPIC'],
      [{ name: topicName('x'), partition_count: 0.5 }, 'INVALID_REQUEST'],
      [{ name: topicName('x'), partition_count: -3 }, 'INVALID_PARTITIONS'],
      [{ name: topicName('x'), partition_count: 0 }, 'INVALID_PARTITIONS'],
      [{ name: topicName('x'), replication_factor: 0 }, 'INVALID_REPLICATION_FACTOR'],
      [{ name: topicName('x'), replication_factor: 2 }, 'INVALID_REPLICATION_FACTOR'],
      [{ name: topicName('x'), configs: { 'flush.policy': 'never' } }, 'INVALID_CONFIG'],
      [[1, 2], 'INVALID_REQUEST'],
    ];
    for (const [body, code] of cases) {
      const r = await httpJson(`${api}/topics`, { body });
      expect([r.status, r.body.error.code]).toEqual([400, code]);
    }
    const notJson = await httpJson(`${api}/topics`, { raw: '{"name": ' });
    expect([notJson.status, notJson.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
    expect((await httpJson(`${api}/nope`)).status).toBe(404);
    expect((await httpJson(`${api}/topics`, { method: 'PUT', body: {} })).status).toBe(405);
  });

  it('produces one record, an array and {records}, and reads them back as text and base64', async () => {
    const name = topicName('rec');
    await httpJson(`${api}/topics`, { body: { name, partition_count: 1 } });
    const one = await httpJson(`${api}/topics/${name}/records`, { body: { key: 'k1', value: 'hello', headers: { h: 'v' } } });
    expect(one).toEqual({ status: 200, body: { partition: 0, offset: 0 } });
    const arr = await httpJson(`${api}/topics/${name}/records`, { body: [{ value: 'a' }, { value: null }] });
    expect(arr.body).toEqual([
      { partition: 0, offset: 1 },
      { partition: 0, offset: 2 },
    ]);
    const b64 = await httpJson(`${api}/topics/${name}/records`, {
      body: { encoding: 'base64', records: [{ value: Buffer.from([0, 255, 1]).toString('base64'), headers: [{ key: 'bin', value: 'AAE=' }] }] },
    });
    expect(b64.body).toEqual([{ partition: 0, offset: 3 }]);

    const page = await httpJson(`${api}/topics/${name}/partitions/0/records?offset=0`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ partition: 0, next_offset: 4, low: 0, high: 4, encoding: 'text' });
    expect(page.body.records.map((r: { offset: number; key: string | null; value: string | null }) => [r.offset, r.key, r.value])).toEqual([
      [0, 'k1', 'hello'],
      [1, null, 'a'],
      [2, null, null],
      [3, null, Buffer.from([0, 255, 1]).toString('utf8')],
    ]);
    expect(page.body.records[0].headers).toEqual([{ key: 'h', value: 'v' }]);
    const raw = await httpJson(`${api}/topics/${name}/partitions/0/records?offset=3&encoding=base64`);
    expect(raw.body.records).toEqual([
      { offset: 3, timestamp: expect.any(Number), key: null, value: 'AP8B', headers: [{ key: 'bin', value: 'AAE=' }] },
    ]);
    const mid = await httpJson(`${api}/topics/${name}/partitions/0/records?offset=2&max_records=1`);
    expect(mid.body.records.map((r: { offset: number }) => r.offset)).toEqual([2]);
    expect(mid.body.next_offset).toBe(3);
    expect((await httpJson(`${api}/topics/${name}/partitions/0/watermarks`)).body).toEqual({ low: 0, high: 4 });
  });

  it('puts keyed records where Kafka\'s default partitioner does, and spreads unkeyed ones round-robin', async () => {
    const name = topicName('keys');
    const n = 7;
    await httpJson(`${api}/topics`, { body: { name, partition_count: n } });
    const keys = ['', 'a', 'ab', 'abc', 'abcd', 'user-1', 'user-42', 'order:1234', 'héllo', '🔑', 'the quick brown fox'];
    const r = await httpJson(`${api}/topics/${name}/records`, { body: keys.map((key) => ({ key, value: 'v' })) });
    expect(r.body.map((x: { partition: number }) => x.partition)).toEqual(keys.map((k) => kafkaPartition(k, n)));
    // Known hashes from Kafka's own UtilsTest.testMurmur2, independent of kafkajs.
    const known: Array<[string, number]> = [
      ['21', -973932308],
      ['foobar', -790332482],
      ['a-little-bit-long-string', -985981536],
      ['a-little-bit-longer-string', -1486304829],
      ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
      ['abc', 479470107],
    ];
    const table = await httpJson(`${api}/topics/${name}/records`, { body: known.map(([key]) => ({ key, value: 'k' })) });
    expect(table.body.map((x: { partition: number }) => x.partition)).toEqual(known.map(([, h]) => (h & 0x7fffffff) % n));
    for (const [key, h] of known) expect(kafkaMurmur2(Buffer.from(key))).toBe(h);
    const again = await httpJson(`${api}/topics/${name}/records`, { body: keys.map((key) => ({ key, value: 'again' })) });
    expect(again.body.map((x: { partition: number }) => x.partition)).toEqual(r.body.map((x: { partition: number }) => x.partition));
    const unkeyed = await httpJson(`${api}/topics/${name}/records`, { body: Array.from({ length: n }, () => ({ value: 'u' })) });
    expect(new Set(unkeyed.body.map((x: { partition: number }) => x.partition)).size).toBe(n);
    const explicit = await httpJson(`${api}/topics/${name}/records`, { body: { key: 'a', value: 'v', partition: 6 } });
    expect(explicit.body.partition).toBe(6);
  });

  it('refuses bad records with the right status and writes nothing', async () => {
    const name = topicName('badrec');
    await httpJson(`${api}/topics`, { body: { name, partition_count: 2, configs: { 'max.message.bytes': '2048' } } });
    const cases: Array<[unknown, number, string]> = [
      [{ key: 'k' }, 400, 'INVALID_REQUEST'],
      [{ value: 5, encoding: 'base64' }, 400, 'INVALID_REQUEST'],
      [{ value: 'x', encoding: 'base64' }, 400, 'INVALID_REQUEST'],
      [{ value: 'x', encoding: 'rot13' }, 400, 'INVALID_REQUEST'],
      [{ value: 'x', partition: 2 }, 404, 'UNKNOWN_TOPIC_OR_PARTITION'],
      [{ value: 'x', partition: -1 }, 400, 'INVALID_REQUEST'],
      [{ value: 'x', headers: 'nope' }, 400, 'INVALID_REQUEST'],
      [[{ value: 'ok' }, { value: 'y'.repeat(3000) }], 413, 'RECORD_TOO_LARGE'],
      [[], 400, 'INVALID_REQUEST'],
    ];
    for (const [body, status, code] of cases) {
      const r = await httpJson(`${api}/topics/${name}/records`, { body });
      expect([r.status, r.body.error.code]).toEqual([status, code]);
    }
    const tooBig = await httpJson(`${api}/topics/${name}/records`, { body: { value: 'z'.repeat(70 * 1024) } });
    expect([tooBig.status, tooBig.body.error.code]).toEqual([413, 'MESSAGE_TOO_LARGE']);
    const acks = await httpJson(`${api}/topics/${name}/records?acks=2`, { body: { value: 'x' } });
    expect([acks.status, acks.body.error.code]).toEqual([400, 'INVALID_REQUIRED_ACKS']);
    expect((await httpJson(`${api}/topics/nope-nope/records`, { body: { value: 'x' } })).status).toBe(404);
    for (const p of [0, 1]) expect((await httpJson(`${api}/topics/${name}/partitions/${p}/watermarks`)).body).toEqual({ low: 0, high: 0 });
  });

  it('refuses bad reads: unknown partition, negative and absurd offsets, bad sizes', async () => {
    const name = topicName('badread');
    await httpJson(`${api}/topics`, { body: { name, partition_count: 1 } });
    await httpJson(`${api}/topics/${name}/records`, { body: { value: 'x' } });
    const check = async (q: string, status: number, code: string) => {
      const r = await httpJson(`${api}/topics/${name}/partitions/${q}`);
      expect([q, r.status, r.body.error?.code]).toEqual([q, status, code]);
    };
    await check('5/records', 404, 'UNKNOWN_TOPIC_OR_PARTITION');
    await check('x/records', 404, 'UNKNOWN_TOPIC_OR_PARTITION');
    await check('0/records?offset=-1', 400, 'OFFSET_OUT_OF_RANGE');
    await check('0/records?offset=99999999999', 400, 'OFFSET_OUT_OF_RANGE');
    await check('0/records?offset=abc', 400, 'INVALID_REQUEST');
    await check('0/records?max_bytes=0', 400, 'INVALID_FETCH_SIZE');
    await check('0/records?encoding=hex', 400, 'INVALID_REQUEST');
  });

  it('serves an OpenAPI 3.1 document and Prometheus metrics', async () => {
    const doc = await httpJson(`${api}/openapi.json`);
    expect(doc.body.openapi).toBe('3.1.0');
    expect(Object.keys(doc.body.paths)).toEqual(
      expect.arrayContaining(['/topics', '/topics/{topic}', '/topics/{topic}/records', '/topics/{topic}/partitions/{partition}/records', '/topics/{topic}/partitions/{partition}/watermarks', '/health']),
    );
    const c = await TestClient.connect(t.url);
    const name = topicName('metrics');
    await createTopic(c, name, 1);
    const m = await fetch(`${api}/metrics`).then((r) => r.text());
    expect(m).toMatch(/^mq_connections 1$/m);
    expect(m).toContain(`mq_partition_high_watermark{topic="${name}",partition="0"} 0`);
    expect(m).toMatch(/^mq_requests_total\{api="createTopics"\} [1-9]/m);
    c.sendRaw(Buffer.from([0xff, 0xff]));
    await c.closed;
    const after = await fetch(`${api}/metrics`).then((r) => r.text());
    expect(Number(/^mq_bad_frames_total (\d+)$/m.exec(after)![1])).toBeGreaterThanOrEqual(1);
    expect(Number(/^mq_frame_bytes_out_total (\d+)$/m.exec(after)![1])).toBeGreaterThan(0);
    await c.close();
  });

  it('long-polls a read with timeout_ms: waits for the first record, answers empty when none comes, refuses a wait over fetch.max.wait.ms', async () => {
    const name = topicName('longpoll');
    expect((await httpJson(`${api}/topics`, { body: { name, partition_count: 1 } })).status).toBe(201);
    const read = (query: string) => httpJson(`${api}/topics/${name}/partitions/0/records?${query}`);
    const waiting = read('offset=0&timeout_ms=20000');
    await new Promise((r) => setTimeout(r, 300));
    expect((await httpJson(`${api}/topics/${name}/records`, { body: { value: 'late' } })).status).toBe(200);
    const got = await waiting;
    expect(got.status).toBe(200);
    expect(got.body.records.map((r: { value: string }) => r.value)).toEqual(['late']);
    expect(got.body.next_offset).toBe(1);

    const none = await read('offset=1&timeout_ms=200');
    expect(none.status).toBe(200);
    expect(none.body.records).toEqual([]);
    const atOnce = await read('offset=1');
    expect(atOnce.body.records).toEqual([]);

    const tooLong = await read('offset=1&timeout_ms=999999999');
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.code).toBe('INVALID_REQUEST');
    expect(tooLong.body.error.message).toMatch(/timeout_ms must be between 0 and \d+ \(fetch.max.wait.ms\)/);
  });

  it('stores JSON values: objects as their JSON text in text mode, any JSON value with encoding json, and reads them back parsed', async () => {
    const name = topicName('json');
    expect((await httpJson(`${api}/topics`, { body: { name, partition_count: 1 } })).status).toBe(201);
    const posted = await httpJson(`${api}/topics/${name}/records`, {
      body: [
        { key: 'order-1', value: { id: 1, items: ['a', 'b'] } },
        { key: 'n', value: 42, headers: { source: 'web' } },
        { value: 'plain text' },
        { key: { composite: true }, value: 'quoted', encoding: 'json' },
      ],
    });
    expect(posted.status).toBe(200);
    const asText = await httpJson(`${api}/topics/${name}/partitions/0/records?offset=0`);
    expect(asText.body.records.map((r: { key: unknown; value: unknown }) => [r.key, r.value])).toEqual([
      ['order-1', '{"id":1,"items":["a","b"]}'],
      ['n', '42'],
      [null, 'plain text'],
      ['{"composite":true}', '"quoted"'],
    ]);
    const asJson = await httpJson(`${api}/topics/${name}/partitions/0/records?offset=0&encoding=json`);
    const records = asJson.body.records as Array<{ key: unknown; value: unknown; not_json?: string[]; headers: unknown[] }>;
    expect(records.map((r) => [r.key, r.value, r.not_json])).toEqual([
      ['order-1', { id: 1, items: ['a', 'b'] }, ['key']],
      ['n', 42, ['key']],
      [null, 'plain text', ['value']],
      [{ composite: true }, 'quoted', undefined],
    ]);
    expect(records[1]!.headers).toEqual([{ key: 'source', value: 'web' }]);
    const bad = await httpJson(`${api}/topics/${name}/records`, { body: { value: 'x', encoding: 'yaml' } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_REQUEST']);
  });

  it('shares one view with the binary protocol', async () => {
    const c = await TestClient.connect(t.url);
    const name = topicName('shared');
    await createTopic(c, name, 1);
    await httpJson(`${api}/topics/${name}/records`, { body: { value: 'via http' } });
    const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    expect(f.fetch!.topics[0]!.partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 1 });
    const bad = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 2 }] }] } });
    expect(bad.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    await c.close();
  });
});
