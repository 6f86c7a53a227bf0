/**
 * Groups through the CLI and the HTTP API against a real broker: twelve
 * consumers on ten partitions (two idle, and `mq group describe` shows it),
 * list, reset-offsets and delete refused while members are active and
 * working once they are gone, `mq consume --group` resuming where the group
 * left off, and the HTTP routes with their bad inputs.
 */
import { MqClient, type GroupConsumer } from '@mq/client';
import { cleanup, runCli, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { GROUP_BROKER_ARGS, createTopic, produce } from './groups-helpers.js';

describe('consumer groups via the CLI and HTTP', () => {
  let broker: BrokerProcess;
  const cli = (...args: string[]) => runCli([...args, '--bootstrap', broker.bootstrap]);
  beforeAll(async () => {
    broker = await startBroker({ args: GROUP_BROKER_ARGS });
  });
  afterAll(cleanup);

  it('twelve consumers on ten partitions: ten work, two idle; admin commands respect active members', async () => {
    const topic = uniqueName('wide');
    const group = uniqueName('twelve');
    await createTopic(broker.bootstrap, topic, 10);
    await produce(broker.bootstrap, topic, 100);
    const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'twelve' });
    const consumers: GroupConsumer[] = [];
    try {
      for (let i = 0; i < 12; i++) {
        const c = mq.consumer({ groupId: group, autoOffsetReset: 'earliest', sessionTimeoutMs: 6000, heartbeatIntervalMs: 300 });
        c.subscribe([topic]);
        consumers.push(c);
      }
      const stop = new AbortController();
      const loops = consumers.map((c) => c.run({ signal: stop.signal, pollTimeoutMs: 100, eachMessage: () => {} }));
      await waitFor(
        () => consumers.every((c) => c.groupState === 'stable') && consumers.map((c) => c.assignment().length).sort().join() === '0,0,1,1,1,1,1,1,1,1,1,1',
        { timeout: 30_000, message: 'the group never settled' },
      );
      await Promise.all(consumers.map((c) => c.commit()));

      const json = await cli('group', 'describe', group, '--format', 'json');
      expect(json.code).toBe(0);
      const d = JSON.parse(json.stdout);
      expect(d.state).toBe('Stable');
      expect(d.members).toHaveLength(12);
      expect(d.members.filter((m: { assignment: unknown[] }) => m.assignment.length === 0)).toHaveLength(2);
      expect(d.offsets).toHaveLength(10);
      expect(new Set(d.offsets.map((o: { owner: string }) => o.owner)).size).toBe(10);
      expect(d.totalLag).toBe(0);
      const text = await cli('group', 'describe', group);
      expect(text.stdout).toMatch(/Stable, 12 members/);
      expect(text.stdout).toMatch(/2 idle members \(no partitions assigned\)/);
      expect(text.stdout).toMatch(/TOPIC\s+PARTITION\s+COMMITTED\s+LOG-END\s+LAG/);

      const list = await cli('group', 'list', '--format', 'json');
      expect(JSON.parse(list.stdout)).toContainEqual({ groupId: group, state: 'Stable', protocolType: 'consumer' });

      const reset = await cli('group', 'reset-offsets', group, '--topic', topic, '--to-earliest');
      expect(reset.code).not.toBe(0);
      expect(reset.stderr).toMatch(/active member/);
      const del = await cli('group', 'delete', group);
      expect(del.code).not.toBe(0);
      expect(del.stderr).toMatch(/active members/);

      stop.abort();
      await Promise.all(loops);
      await Promise.all(consumers.map((c) => c.close()));

      const dry = await cli('group', 'reset-offsets', group, '--topic', topic, '--to-offset', '3', '--dry-run', '--format', 'json');
      expect(dry.code).toBe(0);
      expect(JSON.parse(dry.stdout).offsets.every((o: { offset: number }) => o.offset === 3)).toBe(true);
      expect((await mq.groups().describeGroup(group)).totalLag).toBe(0);
      const toOffset = await cli('group', 'reset-offsets', group, '--topic', topic, '--to-offset', '3');
      expect(toOffset.code).toBe(0);
      expect(toOffset.stdout).toMatch(/reset group/);
      const after = await mq.groups().describeGroup(group);
      expect(after.offsets.every((o) => o.committedOffset === 3)).toBe(true);
      expect(after.totalLag).toBe(70);
      expect((await cli('group', 'reset-offsets', group, '--topic', topic, '--to-latest')).code).toBe(0);
      expect((await mq.groups().describeGroup(group)).totalLag).toBe(0);
      expect((await cli('group', 'reset-offsets', group, '--topic', topic, '--to-datetime', '2000-01-01T00:00:00Z')).code).toBe(0);
      expect((await mq.groups().describeGroup(group)).totalLag).toBe(100);
      const bad = await cli('group', 'reset-offsets', group, '--topic', topic, '--to-earliest', '--to-latest');
      expect(bad.code).toBe(2);
      const badDate = await cli('group', 'reset-offsets', group, '--topic', topic, '--to-datetime', 'yesterday-ish');
      expect(badDate.code).toBe(2);

      expect((await cli('group', 'delete', group)).code).toBe(0);
      const missing = await cli('group', 'describe', group);
      expect(missing.code).not.toBe(0);
      expect(missing.stderr).toMatch(/does not exist/);
    } finally {
      await mq.close();
    }
    // Fourteen CLI processes one after another plus a twelve-member group settling: about 40 s on a 2-core
    // machine at load 10-20 (the same before and after the group-creation limits: 39.3 s and 40.9 s side by
    // side), more in a full e2e run, so the limit is well above Jest's 60 s default.
  }, 150_000);

  it('mq consume --group resumes where the group left off', async () => {
    const topic = uniqueName('resume');
    const group = uniqueName('cli');
    await createTopic(broker.bootstrap, topic, 1);
    await produce(broker.bootstrap, topic, 30);
    const first = await cli('consume', topic, '--group', group, '--from-beginning', '-n', '10', '--format', 'json');
    expect([first.code, first.stderr]).toEqual([0, '']);
    const second = await cli('consume', topic, '--group', group, '--from-beginning', '-n', '10', '--format', 'json');
    expect([second.code, second.stderr]).toEqual([0, '']);
    const offsets = (out: string) => out.trim().split('\n').map((l) => JSON.parse(l).offset as number);
    expect(offsets(first.stdout)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(offsets(second.stdout)).toEqual([10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    const conflict = await cli('consume', topic, '--group', group, '--partition', '0');
    expect(conflict.code).toBe(2);
  });

  it('HTTP: list, describe with lag, commit, and typed errors for bad commits', async () => {
    const topic = uniqueName('http');
    const group = uniqueName('web');
    await createTopic(broker.bootstrap, topic, 2);
    await produce(broker.bootstrap, topic, 20);
    const api = broker.httpUrl;
    const json = async (r: Response | Promise<Response>): Promise<any> => (await r).json();
    const post = (body: unknown) => fetch(`${api}/groups/${group}/offsets`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const ok = await post({ topic, partition: 0, offset: 4, metadata: 'from http' });
    expect(ok.status).toBe(200);
    const many = await post({ offsets: [{ topic, partition: 1, offset: 2 }] });
    expect(many.status).toBe(200);
    const g = await json(fetch(`${api}/groups/${group}`));
    expect(g.state).toBe('Empty');
    const p0 = g.offsets.find((o: { partition: number }) => o.partition === 0);
    expect(p0).toMatchObject({ committed_offset: 4, metadata: 'from http' });
    expect(p0.lag).toBe(p0.log_end_offset - 4);
    expect(g.total_lag).toBe(20 - 6);
    const groups = await json(fetch(`${api}/groups`));
    expect(groups).toContainEqual({ group, state: 'Empty', protocol_type: '' });

    const noPartition = await post({ topic, partition: 9, offset: 1 });
    expect(noPartition.status).toBe(404);
    expect((await json(noPartition)).error.code).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    const beyond = await post({ topic, partition: 0, offset: 1_000_000 });
    expect(beyond.status).toBe(400);
    expect((await json(beyond)).error.code).toBe('INVALID_COMMIT_OFFSET');
    const garbage = await post({ topic, partition: 'zero', offset: 1 });
    expect(garbage.status).toBe(400);
    expect((await json(garbage)).error.code).toBe('INVALID_REQUEST');
    const unknown = await fetch(`${api}/groups/${uniqueName('nobody')}`);
    expect(unknown.status).toBe(404);
    expect((await json(unknown)).error.code).toBe('GROUP_ID_NOT_FOUND');
    // Nothing of the refused commits was stored.
    const again = await json(fetch(`${api}/groups/${group}`));
    expect(again.offsets.map((o: { committed_offset: number }) => o.committed_offset)).toEqual([4, 2]);
  });
});
