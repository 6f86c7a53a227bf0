/**
 * Issue 22, the steady client's p99 under fuzzing: CreateTopics, DeleteTopics
 * and CreatePartitions naming thousands of topics (the fuzzer repeats an entry
 * up to 5,000 times) were refused entry by entry in one synchronous step, an
 * error and a log line each: the broker's event loop stood still for up to
 * 350 ms, and every other client waited (src/handlers/each-topic.ts).
 */
import { errorNumber } from '@mq/protocol/errors';
import { servedMeanwhile } from '../src/test-support/event-loop.js';
import { createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

const N = 20_000;
const INVALID_REQUEST = errorNumber('INVALID_REQUEST');

describe('admin requests naming many topics', () => {
  let t: TestBroker;
  let c: TestClient;

  beforeAll(async () => {
    t = await startTestBroker({ 'request.max.entries': String(N) });
    c = await TestClient.connect(t.url);
  });

  afterAll(async () => {
    await t.cleanup();
  });

  it(`DeleteTopics naming ${N} absent topics: another connection is served meanwhile, and the refusals are one log line`, async () => {
    const names = Array.from({ length: N }, (_, i) => `absent-${i}`);
    const other = await TestClient.connect(t.url);
    const linesBefore = t.lines.length;
    const { result: r, answeredBefore } = await servedMeanwhile(c.request({ deleteTopics: { topics: names, timeoutMs: 30_000 } }, 60_000), () => other.request({ metadata: { topics: [] } }, 30_000));
    expect(r.deleteTopics!.results.map((x) => x.name)).toEqual(names);
    expect(r.deleteTopics!.results.every((x) => x.errorCode === errorNumber('UNKNOWN_TOPIC_OR_PARTITION'))).toBe(true);
    expect(answeredBefore).toBeGreaterThan(2);
    const refusals = t.lines.slice(linesBefore).filter((l) => l.msg === 'delete topic refused');
    expect(refusals).toHaveLength(1);
    expect(refusals[0]).toMatchObject({ refused: N, codes: { UNKNOWN_TOPIC_OR_PARTITION: N } });
    await other.close();
  }, 90_000);

  it('a topic named twice in DeleteTopics or CreatePartitions is refused, every occurrence, and left as it was', async () => {
    const topic = topicName('twice');
    await createTopic(c, topic, 1);
    const del = await c.request({ deleteTopics: { topics: [topic, topic], timeoutMs: 10_000 } });
    expect(del.deleteTopics!.results.map((x) => x.errorCode)).toEqual([INVALID_REQUEST, INVALID_REQUEST]);
    const cp = await c.request({ createPartitions: { topics: [{ topic, count: 2 }, { topic, count: 3 }], timeoutMs: 10_000 } });
    expect(cp.createPartitions!.results.map((x) => x.errorCode)).toEqual([INVALID_REQUEST, INVALID_REQUEST]);
    const md = await c.request({ metadata: { topics: [topic] } });
    expect(md.metadata!.topics[0]!.errorCode).toBe(0);
    expect(md.metadata!.topics[0]!.partitions).toHaveLength(1);
  });

  it(`CreateTopics naming one topic ${N} times is refused as one INVALID_REQUEST per entry, logged once`, async () => {
    const name = topicName('repeated');
    const linesBefore = t.lines.length;
    const r = await c.request({ createTopics: { topics: Array(N).fill({ name, numPartitions: 1, replicationFactor: 1 }), timeoutMs: 30_000 } }, 60_000);
    expect(r.createTopics!.results).toHaveLength(N);
    expect(r.createTopics!.results.every((x) => x.errorCode === INVALID_REQUEST)).toBe(true);
    expect(t.lines.slice(linesBefore).filter((l) => l.msg === 'create topic refused')).toHaveLength(1);
    const md = await c.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.errorCode).not.toBe(0);
  }, 60_000);
});
