/**
 * HTTP consumer groups against a real broker process (the Confluent REST proxy's model): two HTTP consumer
 * instances and one @mq/client consumer in one group split a topic's partitions; records are long-polled over
 * HTTP, committed, and the committed offsets are what the group describes; a deleted instance leaves the group;
 * bad requests get typed errors.
 */
import { MqClient } from '@mq/client';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
beforeAll(async () => {
  broker = await startBroker({ args: ['--config-set', 'group.initial.rebalance.delay.ms=0'] });
}, 60_000);
afterAll(async () => {
  await cleanup();
});

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${broker.httpUrl}${path}`, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('HTTP consumer groups', () => {
  it('instances join a group beside an @mq/client member, poll, commit and leave', async () => {
    const topic = uniqueName('http-group');
    const group = uniqueName('http-g');
    const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'http-consumers-test' });
    try {
      await mq.admin().createTopic(topic, { numPartitions: 3 });
      const producer = mq.producer({ acks: 'all' });
      for (let p = 0; p < 3; p++) for (let i = 0; i < 4; i++) await producer.send(topic, { partition: p, key: `p${p}`, value: JSON.stringify({ p, i }) });

      const a = await call('POST', `/consumers/${group}`, { name: 'a', auto_offset_reset: 'earliest' });
      expect(a).toEqual({ status: 200, body: { instance_id: 'a', base_uri: `/consumers/${group}/instances/a` } });
      const b = await call('POST', `/consumers/${group}`, { auto_offset_reset: 'earliest' });
      expect(b.status).toBe(200);
      const bUri: string = b.body.base_uri;
      expect((await call('POST', `/consumers/${group}`, { name: 'a' })).status).toBe(400);
      for (const uri of [a.body.base_uri, bUri]) expect((await call('POST', `${uri}/subscription`, { topics: [topic] })).status).toBe(204);

      // An @mq/client member of the same group.
      const native = mq.consumer({ groupId: group, autoOffsetReset: 'earliest' });
      native.subscribe([topic]);
      const nativeSeen: number[] = [];
      const stop = new AbortController();
      const running = native.run({ eachMessage: async ({ partition }) => void nativeSeen.push(partition), signal: stop.signal });

      // Poll both HTTP instances (long polls) until the three members have split the partitions (one each) and
      // every record has been read by someone (a record may be read twice around a rebalance: at least once).
      const seen = new Set<string>();
      const uris = [a.body.base_uri as string, bUri];
      const owners = async () => (await Promise.all(uris.map((uri) => call('GET', `${uri}/assignments`)))).map((x) => x.body.partitions.map((p: { partition: number }) => p.partition) as number[]);
      let owned: number[] = [];
      await waitFor(
        async () => {
          for (const uri of uris) {
            const r = await call('GET', `${uri}/records?timeout_ms=300&encoding=json`);
            expect(r.status).toBe(200);
            for (const x of r.body as Array<{ partition: number; offset: number; value: unknown }>) {
              expect(x.value).toEqual({ p: x.partition, i: x.offset });
              seen.add(`${x.partition}:${x.offset}`);
            }
          }
          const mine = await owners();
          owned = mine.flat();
          const split = mine.every((ps) => ps.length === 1) && native.assignment().length === 1 && new Set([...owned, ...native.assignment().map((tp) => tp.partition)]).size === 3;
          return split && seen.size + nativeSeen.length >= 12 && owned.every((p) => seen.has(`${p}:3`));
        },
        { timeout: 60_000, message: 'the group split the partitions and read all 12 records' },
      );

      // Commit what each HTTP instance polled; the group's committed offsets say 4 for their partitions.
      for (const uri of [a.body.base_uri, bUri]) expect((await call('POST', `${uri}/offsets`)).status).toBe(204);
      const described = await waitFor(async () => {
        const d = await mq.groups().describeGroup(group);
        const committed = d.offsets.filter((o) => owned.includes(o.partition) && o.committedOffset === 4);
        return committed.length === 2 ? d : undefined;
      }, { timeout: 10_000, message: 'the HTTP instances\' commits in the group' });
      expect(described!.members).toHaveLength(3);

      // Explicit offsets, and typed errors.
      expect((await call('POST', `${a.body.base_uri}/offsets`, { offsets: [{ topic, partition: owned[0], offset: 2 }] })).status).toBe(204);
      expect((await call('POST', `${a.body.base_uri}/offsets`, { offsets: [{ topic, partition: -1, offset: 2 }] })).body.error.code).toBe('INVALID_REQUEST');
      expect((await call('GET', `${a.body.base_uri}/records?timeout_ms=99999999`)).status).toBe(400);
      expect((await call('POST', `${a.body.base_uri}/subscription`, { topics: ['bad name!'] })).body.error.code).toBe('INVALID_TOPIC');
      const missing = await call('GET', `/consumers/${group}/instances/nobody/records`);
      expect([missing.status, missing.body.error.code]).toEqual([404, 'UNKNOWN_MEMBER_ID']);

      // Deleting an instance leaves the group.
      expect((await call('DELETE', bUri)).status).toBe(204);
      expect((await call('GET', `${bUri}/records`)).status).toBe(404);
      await waitFor(async () => (await mq.groups().describeGroup(group)).members.length === 2, { timeout: 30_000, message: 'the deleted instance left the group' });
      stop.abort();
      await running;
      await native.close();
      expect((await call('DELETE', a.body.base_uri)).status).toBe(204);
    } finally {
      await mq.close({ timeoutMs: 2000 });
    }
  }, 120_000);
});
