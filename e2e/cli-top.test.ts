/**
 * `mq top` against a real broker: JSON snapshots name the topics with their partitions, health, records and
 * records per second, and the consumer groups with their lag; the text view is a table; a bad flag is one line.
 */
import { MqClient } from '@mq/client';
import { cleanup, runCli, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';
import type { TopSnapshot } from '../packages/cli/src/commands/top.js';

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker();
}, 60_000);
afterAll(async () => {
  await cleanup();
});

describe('mq top', () => {
  it('shows topics (records, rate, health) and groups (lag), as JSON lines and as a table', async () => {
    const topic = uniqueName('top');
    const group = uniqueName('top-g');
    const mq = new MqClient({ bootstrap: broker.bootstrap });
    try {
      await mq.admin().createTopic(topic, { numPartitions: 2 });
      const producer = mq.producer({ acks: 1 });
      await producer.sendBatch(topic, Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `v${i}` })));
      // A group with committed offsets at the log start: its lag is every record.
      await mq.groups().resetOffsets(group, topic, 'earliest');
      const b = ['-b', broker.bootstrap];
      const r = await runCli(['top', '--iterations', '2', '--interval-ms', '300', '--format', 'json', ...b]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as TopSnapshot);
      expect(lines).toHaveLength(2);
      const row = lines[1]!.topics.find((t) => t.topic === topic)!;
      expect(row).toMatchObject({ partitions: 2, underReplicated: 0, offline: 0, records: 30, appended: 30 });
      expect(lines[0]!.topics.find((t) => t.topic === topic)!.rate).toBeNull();
      expect(row.rate).toBe(0);
      expect(lines[1]!.brokers).toBe(1);
      expect(lines[1]!.topics.some((t) => t.topic.startsWith('__'))).toBe(false);
      expect(lines[1]!.groups.find((x) => x.group === group)).toEqual({ group, state: 'Empty', members: 0, lag: 30 });

      const text = await runCli(['top', '--iterations', '1', ...b]);
      expect(text.code).toBe(0);
      expect(text.stdout).toMatch(/TOPIC\s+PARTITIONS\s+UNDER-REPLICATED\s+OFFLINE\s+RECORDS\s+RECORDS\/S/);
      expect(text.stdout).toMatch(new RegExp(`^${topic}\\s+2\\s+0\\s+0\\s+30\\s+-`, 'm'));

      const bad = await runCli(['top', '--interval-ms', 'soon', ...b]);
      expect(bad.code).toBe(2);
      expect(bad.stderr.trim().split('\n')).toEqual(['mq: --interval-ms must be an integer >= 100, got "soon"']);
    } finally {
      await mq.close({ timeoutMs: 2000 });
    }
  }, 90_000);
});
