/**
 * Issue 22, int64 extremes: offsets, timestamps and producer ids are
 * JavaScript numbers, exact only below 2^53. A request carrying 2^63-1,
 * -2^63 or 2^53+1 gets a typed error on its own connection (it was rounded
 * silently: 2^53+1 became 2^53), and the connection stays open.
 */
import { errorNumber } from '@mq/protocol/errors';
import { coordinatorReady, createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

/** An int64 as protobufjs's writer takes it (low and high 32 bits): values a number cannot carry. */
const EXTREMES: Record<string, number> = {
  '2^63-1': { low: -1, high: 0x7fffffff } as unknown as number,
  '-2^63': { low: 0, high: -0x80000000 } as unknown as number,
  '2^53+1': { low: 1, high: 0x200000 } as unknown as number,
};

describe('int64 extremes', () => {
  let t: TestBroker;
  let c: TestClient;
  let topic: string;

  beforeAll(async () => {
    t = await startTestBroker();
    c = await TestClient.connect(t.url);
    await coordinatorReady(c);
    topic = topicName('int64');
    await createTopic(c, topic, 1);
  });

  afterAll(async () => {
    await c.close();
    await t.cleanup();
  });

  const requests = (v: number) => ({
    offsetCommit: { offsetCommit: { groupId: 'g-int64', generationId: -1, topics: [{ name: topic, partitions: [{ partition: 0, committedOffset: v }] }] } },
    fetch: { fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: v }] }] } },
    listOffsets: { listOffsets: { topics: [{ name: topic, partitions: [{ partition: 0, timestamp: v }] }] } },
    initProducerId: { initProducerId: { producerId: v, producerEpoch: 0 } },
  });

  for (const [label, value] of Object.entries(EXTREMES)) {
    for (const [api, frame] of Object.entries(requests(value))) {
      it(`${api} with ${label}: INVALID_REQUEST naming the value, and the connection keeps serving`, async () => {
        const r = await c.request(frame);
        expect(r.errorCode).toBe(errorNumber('INVALID_REQUEST'));
        expect(r.errorMessage).toMatch(/int64 value -?\d+ is beyond what a JavaScript number holds exactly/);
        const md = await c.request({ metadata: { topics: [topic] } });
        expect(md.metadata!.topics[0]!.errorCode).toBe(0);
      });
    }
  }

  it('the largest exact value, 2^53-1, is served as asked (typed per API, not refused at the door)', async () => {
    const f = await c.request({ fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: Number.MAX_SAFE_INTEGER }] }] } });
    expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    const oc = await c.request(requests(Number.MAX_SAFE_INTEGER).offsetCommit);
    expect(oc.offsetCommit!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('INVALID_COMMIT_OFFSET'));
  });
});
