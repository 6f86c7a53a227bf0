/**
 * Every bad input of issue 3 against a running in-process broker: each gets
 * an error response (or, where no correlation id is readable, the
 * connection is closed with a reason), one log line, and the broker keeps
 * serving everyone else without losing what was written.
 */
import { encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { BODY_API, encodeRequest } from '@mq/protocol/wire';
import { createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

const MAX_FRAME = 64 * 1024;

describe('bad input', () => {
  let t: TestBroker;
  let good: TestClient;
  let topic: string;

  const produce = (c: TestClient, records: Buffer, acks = 1, name = topic) =>
    c.request({ produce: { acks, topics: [{ name, partitions: [{ partition: 0, records }] }] } });
  const partitionError = (r: Awaited<ReturnType<typeof produce>>) => r.produce!.topics[0]!.partitions[0]!.errorCode;
  const warnings = (msg: string) => t.lines.filter((l) => l.level === 40 && l.msg === msg);

  beforeAll(async () => {
    t = await startTestBroker({ 'max.frame.bytes': String(MAX_FRAME), 'message.max.bytes': '16384' });
    good = await TestClient.connect(t.url);
    topic = topicName('bad');
    await createTopic(good, topic, 1);
    const r = await produce(good, encodeBatchSync([{ value: 'kept-0' }, { value: 'kept-1' }]));
    expect(partitionError(r)).toBe(0);
  });

  afterEach(async () => {
    // After every bad input: the broker still answers and nothing written is lost.
    const f = await good.request({ fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    const p = f.fetch!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(p.highWatermark).toBeGreaterThanOrEqual(2);
    expect([...iterateBatches(Buffer.from(p.records))].length).toBeGreaterThanOrEqual(1);
  });

  afterAll(async () => {
    await good.close();
    await t.cleanup();
  });

  it('closes the connection with 1007 and a reason when a frame does not decode', async () => {
    const c = await TestClient.connect(t.url);
    const before = warnings('bad frame: connection closed').length;
    c.sendRaw(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    const closed = await c.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason).toMatch(/does not decode/);
    expect(warnings('bad frame: connection closed').length).toBe(before + 1);
  });

  it('closes with 1003 on a text frame', async () => {
    const c = await TestClient.connect(t.url);
    c.sendRaw('hello', false);
    expect((await c.closed).code).toBe(1003);
  });

  it('closes with 1009 when a frame is over max.frame.bytes', async () => {
    const c = await TestClient.connect(t.url);
    const big = encodeBatchSync([{ value: Buffer.alloc(MAX_FRAME + 10) }]);
    const before = warnings('bad frame: connection closed').length;
    c.fire({ produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 0, records: big }] }] } });
    expect((await c.closed).code).toBe(1009);
    expect(warnings('bad frame: connection closed').length).toBe(before + 1);
  });

  it('answers INVALID_REQUEST to an unknown API and to a frame without a body, on the same connection', async () => {
    const c = await TestClient.connect(t.url);
    const before = warnings('bad request').length;
    // correlation_id = 77, then an unknown field 99 (length-delimited, empty).
    c.sendRaw(Buffer.from([0x08, 77, 0x9a, 0x06, 0x00]));
    const r1 = await new Promise<number>((resolve) => c.ws.once('message', () => resolve(77)));
    expect(r1).toBe(77);
    const frame = c.unmatched.find((f) => f.correlationId === 77)!;
    expect(frame.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    const none = await c.request({});
    expect(none.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    expect(none.errorMessage).toMatch(/no body/);
    expect(warnings('bad request').length).toBe(before + 2);
    // Still usable.
    expect((await c.request({ metadata: {} })).metadata!.topics.length).toBeGreaterThan(0);
    await c.close();
  });

  it('answers UNSUPPORTED_VERSION to an API it does not implement and to a version it does not speak', async () => {
    const c = await TestClient.connect(t.url);
    // The first API the handshake does not advertise must be refused.
    const hs = await c.request({ handshake: {} });
    const advertised = new Set(hs.handshake!.apiVersions.map((v) => v.api));
    const missing = (Object.keys(BODY_API) as Array<keyof typeof BODY_API>).find((b) => !advertised.has(BODY_API[b]));
    expect(missing).toBeDefined();
    const refused = await c.request({ [missing!]: {} });
    expect(refused.errorCode).toBe(errorNumber('UNSUPPORTED_VERSION'));
    expect(refused.errorMessage).toContain(missing);
    const v = await c.request({ apiVersion: 99, metadata: {} });
    expect(v.errorCode).toBe(errorNumber('UNSUPPORTED_VERSION'));
    expect(v.errorMessage).toMatch(/version 99/);
    await c.close();
  });

  it('refuses a batch with a bad CRC and one with a lying length with CORRUPT_MESSAGE', async () => {
    const flipped = encodeBatchSync([{ value: 'flip me' }]);
    flipped[flipped.length - 2]! ^= 0x40;
    expect(partitionError(await produce(good, flipped))).toBe(errorNumber('CORRUPT_MESSAGE'));
    const lying = encodeBatchSync([{ value: 'lie' }]);
    lying.writeInt32BE(lying.readInt32BE(8) + 1000, 8);
    expect(partitionError(await produce(good, lying))).toBe(errorNumber('CORRUPT_MESSAGE'));
    const short = encodeBatchSync([{ value: 'short' }]).subarray(0, 30);
    expect(partitionError(await produce(good, short))).toBe(errorNumber('CORRUPT_MESSAGE'));
    // No batch at all is not damage in transit: INVALID_RECORD (not retriable), as the log's append answers it.
    expect(partitionError(await produce(good, Buffer.alloc(0)))).toBe(errorNumber('INVALID_RECORD'));
    expect(warnings('produce refused').length).toBeGreaterThanOrEqual(4);
  });

  it('refuses a batch over max.message.bytes with RECORD_TOO_LARGE', async () => {
    const big = encodeBatchSync([{ value: Buffer.alloc(20_000, 1) }]);
    expect(partitionError(await produce(good, big))).toBe(errorNumber('RECORD_TOO_LARGE'));
  });

  it('refuses invalid topic names, unknown topics and partitions with their codes', async () => {
    const ok = encodeBatchSync([{ value: 'x' }]);
    expect(partitionError(await produce(good, ok, 1, 'bad name!'))).toBe(errorNumber('INVALID_TOPIC'));
    expect(partitionError(await produce(good, encodeBatchSync([{ value: 'x' }]), 1, 'does-not-exist'))).toBe(
      errorNumber('UNKNOWN_TOPIC_OR_PARTITION'),
    );
    const r = await good.request({
      produce: { acks: 1, topics: [{ name: topic, partitions: [{ partition: 9, records: encodeBatchSync([{ value: 'x' }]) }] }] },
    });
    expect(partitionError(r)).toBe(errorNumber('UNKNOWN_TOPIC_OR_PARTITION'));
  });

  it('refuses negative and absurd fetch offsets with OFFSET_OUT_OF_RANGE', async () => {
    for (const fetchOffset of [-5, 2 ** 53 - 1]) {
      const f = await good.request({ fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset }] }] } });
      expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    }
  });

  it('refuses acks other than 0, 1 and all', async () => {
    expect(partitionError(await produce(good, encodeBatchSync([{ value: 'x' }]), 3))).toBe(errorNumber('INVALID_REQUIRED_ACKS'));
  });

  it('keeps serving other connections while one sends garbage', async () => {
    const bad = await TestClient.connect(t.url);
    const other = await TestClient.connect(t.url);
    bad.sendRaw(Buffer.from('definitely not protobuf \xff\xff\xff\xff\xff'));
    const [closed, md] = await Promise.all([bad.closed, other.request({ metadata: { topics: [topic] } })]);
    expect(closed.code).toBe(1007);
    expect(md.metadata!.topics[0]!.errorCode).toBe(0);
    await other.close();
    // A well-formed frame that is not a request at all decodes as an empty frame.
    const frame = Buffer.from(encodeRequest({ correlationId: 5 }));
    const c = await TestClient.connect(t.url);
    c.sendRaw(frame);
    await new Promise((r) => c.ws.once('message', r));
    expect(c.unmatched[0]!.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    await c.close();
  });
});
