/**
 * Issue 22: large answers are encoded in slices on the connection
 * (src/server/sliced-response.ts). A DescribeConfigs of 5,000 topics and a
 * DescribeGroups of 20,000 groups (each answered with an entry) decode as
 * they should through a real broker, and another connection's requests are
 * answered while the big answer is being encoded.
 */
import { startTestBroker, TestClient, type TestBroker } from './helpers.js';

describe('large answers through the connection', () => {
  let t: TestBroker;
  let c: TestClient;

  beforeAll(async () => {
    t = await startTestBroker({ 'request.max.entries': '20000' });
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
    let big = false;
    const pending = c.request({ describeGroups: { groupIds: ids } }, 60_000).then((r) => {
      big = true;
      return r;
    });
    // Small requests on another connection meanwhile: each is answered (the broker is not held by the big one).
    let answeredBefore = 0;
    while (!big) {
      await other.request({ metadata: { topics: [] } }, 30_000);
      if (!big) answeredBefore++;
    }
    const r = await pending;
    expect(r.describeGroups!.groups.map((g) => g.groupId)).toEqual(ids);
    expect(answeredBefore).toBeGreaterThan(0);
    await other.close();
  }, 90_000);
});
