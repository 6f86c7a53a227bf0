/**
 * Issue 22 against a real three-broker cluster: a valid-looking request is
 * answered within its timeout, however many entries it names (DeleteTopics
 * of hundreds of topics that do not exist got no answer for 40 s: one
 * metadata-log commit per name, one after the other).
 */
import { errorCodeFromNumber } from '@mq/protocol/errors';
import { cleanup, uniqueName } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, startCluster, type TestCluster } from './src/cluster-harness.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

let cluster: TestCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: hostile input', () => {
  it('DeleteTopics naming 500 topics that do not exist is answered at once (it went unanswered for 40 s); a CreateTopics or CreatePartitions too long for its timeout is answered by then', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG, proxies: false });
    await cluster.waitHealthy();
    const c = await TestClient.connect(`ws://${cluster.bootstrap[0]}`);
    try {
      const names = Array.from({ length: 500 }, () => uniqueName('ghost'));
      const started = Date.now();
      const r = await c.request({ deleteTopics: { topics: names, timeoutMs: 5000 } }, 10_000);
      const ms = Date.now() - started;
      expect(r.deleteTopics!.results).toHaveLength(500);
      expect(new Set(r.deleteTopics!.results.map((x) => errorCodeFromNumber(x.errorCode)))).toEqual(new Set(['UNKNOWN_TOPIC_OR_PARTITION']));
      expect(ms).toBeLessThan(2000);

      // A request that cannot finish in its timeout is still answered by then: what was not reached is REQUEST_TIMED_OUT.
      const many = Array.from({ length: 300 }, () => ({ name: uniqueName('many'), numPartitions: 1, replicationFactor: 1 }));
      const t0 = Date.now();
      const created = await c.request({ createTopics: { topics: many, timeoutMs: 300 } }, 10_000);
      const took = Date.now() - t0;
      const codes = created.createTopics!.results.map((x) => errorCodeFromNumber(x.errorCode));
      expect(codes).toHaveLength(300);
      expect(codes.at(-1)).toBe('REQUEST_TIMED_OUT');
      expect(new Set(codes)).toEqual(new Set(['NONE', 'REQUEST_TIMED_OUT']));
      expect(took).toBeLessThan(300 + 2000);

      // CreatePartitions keeps its timeout the same way (it had none: each entry waited for its own commit).
      const existing = many.filter((_, i) => codes[i] === 'NONE').map((t) => ({ topic: t.name, count: 2 }));
      expect(existing.length).toBeGreaterThan(1);
      const t1 = Date.now();
      const grown = await c.request({ createPartitions: { topics: existing, timeoutMs: 1 } }, 10_000);
      const grownCodes = grown.createPartitions!.results.map((x) => errorCodeFromNumber(x.errorCode));
      expect(grownCodes).toHaveLength(existing.length);
      expect(grownCodes.at(-1)).toBe('REQUEST_TIMED_OUT');
      expect(Date.now() - t1).toBeLessThan(2000);
    } finally {
      await c.close();
    }
  });
});
