/**
 * The `mq` CLI against a real broker: topics, produce from stdin, consume as
 * text and JSON Lines, and agreement with the client and the HTTP API.
 */
import { MqClient } from '@mq/client';
import { cleanup, runCli, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
const mq = (args: string[], input?: string) => runCli([...args, '--bootstrap', broker.bootstrap], { input });

beforeAll(async () => {
  broker = await startBroker();
});
afterAll(async () => {
  await cleanup();
});

describe('mq CLI round trip', () => {
  it('creates, lists and describes a topic, for people and for scripts', async () => {
    const topic = uniqueName('cli-topic');
    const created = await mq(['topic', 'create', topic, '--partitions', '3', '--replication-factor', '1', '--config', 'retention.ms=60000']);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    expect(created.stdout).toBe(`created topic "${topic}" with 3 partitions, replication factor 1, configs retention.ms=60000\n`);
    const listed = await mq(['topic', 'list', '--format', 'json']);
    expect(JSON.parse(listed.stdout)).toContainEqual({ name: topic, partitions: 3, replicationFactor: 1 });
    const table = await mq(['topic', 'list']);
    expect(table.stdout).toMatch(/^TOPIC\s+PARTITIONS\s+REPLICATION\n/);
    expect(table.stdout).toMatch(new RegExp(`${topic}\\s+3\\s+1`));
    const described = JSON.parse((await mq(['topic', 'describe', topic, '--format', 'json'])).stdout) as {
      partitions: Array<{ partition: number; leader: number; replicas: number[]; isr: number[]; low: number; high: number }>;
      configs: Record<string, string>;
    };
    expect(described.partitions).toHaveLength(3);
    expect(described.partitions[0]).toMatchObject({ partition: 0, replicas: [described.partitions[0]!.leader], low: 0, high: 0 });
    expect(described.configs['retention.ms']).toBe('60000');
    const text = await mq(['topic', 'describe', topic]);
    expect(text.stdout).toMatch(/PARTITION\s+LEADER\s+REPLICAS\s+ISR\s+LOW\s+HIGH/);
    expect(text.stdout).toContain('configs retention.ms=60000');
  });

  it('produces stdin lines with keys and headers and consumes them as JSON Lines, in order', async () => {
    const topic = uniqueName('cli-rt');
    await mq(['topic', 'create', topic, '--partitions', '2']);
    const lines = Array.from({ length: 50 }, (_, i) => `k${i % 5}:value ${i}`);
    const produced = await mq(['produce', topic, '--key-separator', ':', '--headers', 'src=cli,n=1', '--acks', 'all', '--format', 'json'], lines.join('\n') + '\n');
    expect(produced.code).toBe(0);
    const acks = produced.stdout.trim().split('\n').map((l) => JSON.parse(l) as { partition: number; offset: number });
    expect(acks).toHaveLength(50);
    const consumed = await mq(['consume', topic, '--from-beginning', '--max-messages', '50', '--format', 'json']);
    expect(consumed.code).toBe(0);
    const recs = consumed.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs).toHaveLength(50);
    expect(Object.keys(recs[0]!).sort()).toEqual(['headers', 'key', 'offset', 'partition', 'timestamp', 'topic', 'value']);
    const byKey = new Map<string, string[]>();
    for (const r of recs) {
      expect(r.headers).toEqual({ src: 'cli', n: '1' });
      byKey.set(r.key as string, [...(byKey.get(r.key as string) ?? []), r.value as string]);
    }
    for (const [k, values] of byKey) {
      const sent = lines.filter((l) => l.startsWith(`${k}:`)).map((l) => l.slice(l.indexOf(':') + 1));
      expect(values).toEqual(sent); // per-key (so per-partition) order
    }
    acks.forEach((a, i) => {
      const r = recs.find((x) => x.partition === a.partition && x.offset === a.offset)!;
      expect(r.value).toBe(`value ${i}`);
    });
  });

  it('consumes text from a partition and offset, stopping after --timeout-ms of silence', async () => {
    const topic = uniqueName('cli-text');
    await mq(['topic', 'create', topic]);
    await mq(['produce', topic, '--partition', '0', '--compression', 'gzip'], 'a\nb\nc\n');
    const r = await mq(['consume', topic, '--partition', '0', '--offset', '1', '--timeout-ms', '500', '--print-key']);
    expect(r).toMatchObject({ code: 0, stdout: '\tb\n\tc\n', stderr: 'consumed 2 records\n' });
  });

  it('agrees with the client and the HTTP API', async () => {
    const topic = uniqueName('cli-mix');
    await mq(['topic', 'create', topic]);
    const client = new MqClient({ bootstrap: broker.bootstrap });
    try {
      await client.producer().send(topic, { key: 'from', value: 'client' });
      await fetch(`${broker.httpUrl}/topics/${topic}/records`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: 'http' }),
      });
      await mq(['produce', topic], 'cli\n');
      const r = await mq(['consume', topic, '--from-beginning', '--max-messages', '3']);
      expect(r.stdout).toBe('client\nhttp\ncli\n');
      const c = client.consumer({ autoOffsetReset: 'earliest' });
      c.assign([{ topic, partition: 0 }]);
      const got = [];
      while (got.length < 3) got.push(...(await c.poll(1000)));
      expect(got.map((x) => x.value!.toString())).toEqual(['client', 'http', 'cli']);
      await c.close();
    } finally {
      await client.close();
    }
  });

  it('adds partitions with a warning and deletes topics', async () => {
    const topic = uniqueName('cli-alter');
    await mq(['topic', 'create', topic]);
    const altered = await mq(['topic', 'alter', topic, '--partitions', '3']);
    expect(altered.code).toBe(0);
    expect(altered.stdout).toMatch(new RegExp(`topic "${topic}" now has 3 partitions \\(warning: .*key`));
    const deleted = await mq(['topic', 'delete', topic]);
    expect(deleted).toMatchObject({ code: 0, stdout: `deleted topic "${topic}"\n` });
    expect((await mq(['topic', 'list'])).stdout).not.toContain(topic);
  });

  it('takes the bootstrap from MQ_BOOTSTRAP', async () => {
    const r = await runCli(['topic', 'list', '--format', 'json'], { env: { MQ_BOOTSTRAP: broker.bootstrap } });
    expect(r.code).toBe(0);
    expect(Array.isArray(JSON.parse(r.stdout))).toBe(true);
  });
});
