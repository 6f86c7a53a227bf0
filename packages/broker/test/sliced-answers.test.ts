/**
 * Issue 22: large answers are encoded in slices on the connection
 * (src/server/sliced-response.ts). A DescribeConfigs of 5,000 topics and a
 * DescribeGroups of 20,000 groups (each answered with an entry) decode as
 * they should through a real broker, and another connection's requests are
 * answered while the big answer is being encoded.
 */
import { ApiVersionsApi, DescribeGroupsApi } from '@mq/kafka-protocol';
import { servedMeanwhile } from '../src/test-support/event-loop.js';
import { startTestBroker, TestClient, type TestBroker } from './helpers.js';
import { KafkaWire } from './kafka-wire.js';

describe('large answers through the connection', () => {
  let t: TestBroker;
  let c: TestClient;

  beforeAll(async () => {
    t = await startTestBroker({ 'request.max.entries': '20000', 'kafka.listener.port': '0', 'max.frame.bytes': String(16 * 1024 * 1024) });
    c = await TestClient.connect(t.url);
  });

  afterAll(async () => {
    await t.cleanup();
  });

  it('DescribeConfigs naming 5,000 topics: one result each, in order', async () => {
    const names = Array.from({ length: 5000 }, (_, i) => `absent-${i}`);
    const r = await c.request({ describeConfigs: { topics: names } }, 30_000);
    expect(r.describeConfigs!.results.map((x) => x.resource)).toEqual(names);
    expect(r.describeConfigs!.results.every((x) => x.errorCode !== 0)).toBe(true);
  });

  it('DescribeGroups naming 20,000 groups is answered whole while another connection is served', async () => {
    const ids = Array.from({ length: 20_000 }, (_, i) => `group-${i}-${'x'.repeat(200)}`);
    const other = await TestClient.connect(t.url);
    // Small requests on another connection meanwhile: each is answered (the broker is not held by the big one).
    const { result: r, answeredBefore } = await servedMeanwhile(c.request({ describeGroups: { groupIds: ids } }, 60_000), () => other.request({ metadata: { topics: [] } }, 30_000));
    expect(r.describeGroups!.groups.map((g) => g.groupId)).toEqual(ids);
    expect(answeredBefore).toBeGreaterThan(0);
    await other.close();
  }, 90_000);

  it('the Kafka door: DescribeGroups naming 20,000 groups is answered whole while another Kafka connection is served', async () => {
    // Encoded in slices (src/kafka/sliced-answer.ts). This answer is cheap to encode in one step too: the test checks the
    // sliced answer decodes whole through the real connection; that slicing yields is sliced-answer.test.ts's.
    const ids = Array.from({ length: 20_000 }, (_, i) => `group-${i}-${'x'.repeat(200)}`);
    const k = await KafkaWire.connect(t.broker.kafkaPort!);
    const other = await KafkaWire.connect(t.broker.kafkaPort!);
    const { result: r, answeredBefore } = await servedMeanwhile(k.request(DescribeGroupsApi, 5, { groups: ids, includeAuthorizedOperations: false }, 60_000), () =>
      other.request(ApiVersionsApi, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' }),
    );
    expect(r.groups.map((g) => g.groupId)).toEqual(ids);
    expect(answeredBefore).toBeGreaterThan(1);
    k.close();
    other.close();
  }, 90_000);
});
