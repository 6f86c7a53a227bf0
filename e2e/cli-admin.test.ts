/**
 * Issue 19, admin: `mq topic alter-config` (IncrementalAlterConfigs), `mq topic trim` (DeleteRecords) and
 * `mq group reset-offsets --shift-by / --by-duration`, against a real broker process; alter-config and trim
 * also against a three-broker cluster, where the change must reach every replica (a new leader after a
 * failover keeps the trimmed log start and the altered configs).
 */
import { MqClient } from '@mq/client';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';
import { cleanup, runCli, startBroker, uniqueName, waitFor, type BrokerProcess, type CliResult } from './src/harness.js';

function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`mq exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

function json(r: CliResult): Record<string, unknown> {
  return JSON.parse(ok(r).stdout) as Record<string, unknown>;
}

async function topicConfigs(bootstrap: string, topic: string): Promise<Record<string, string>> {
  return json(await runCli(['topic', 'describe', topic, '--format', 'json', '-b', bootstrap])).configs as Record<string, string>;
}

async function values(bootstrap: string, topic: string): Promise<string[]> {
  const r = ok(await runCli(['consume', topic, '--from-beginning', '--exit-at-end', '-f', '%o:%s\\n', '-b', bootstrap]));
  return r.stdout.split('\n').filter(Boolean);
}

afterAll(async () => {
  await cleanup();
});

describe('single broker', () => {
  let broker: BrokerProcess;
  const b = () => ['-b', broker.bootstrap];

  beforeAll(async () => {
    broker = await startBroker();
  });

  it('topic describe shows each partition\'s produce rate from its leader (a hot partition is visible)', async () => {
    const topic = uniqueName('rate');
    ok(await runCli(['topic', 'create', topic, '--partitions', '2', ...b()]));
    const client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'rate' });
    const producer = client.producer({ lingerMs: 5 });
    const value = 'x'.repeat(1000);
    let stop = false;
    // Only partition 1 is written: bounded to 40 s and 40,000 records.
    const load = (async () => {
      for (let i = 0; i < 40_000 && !stop; i++) await producer.send(topic, { value, partition: 1 });
    })();
    const until = Date.now() + 40_000;
    try {
      let parts: Array<{ partition: number; bytesInPerSec?: number }> = [];
      await waitFor(
        async () => {
          parts = json(await runCli(['topic', 'describe', topic, '--format', 'json', ...b()])).partitions as typeof parts;
          return (parts[1]?.bytesInPerSec ?? 0) > 0 || Date.now() > until;
        },
        { timeout: 45_000, interval: 1000, message: 'no produce rate shown for the written partition' },
      );
      expect(parts[1]!.bytesInPerSec).toBeGreaterThan(1000);
      expect(parts[0]!.bytesInPerSec).toBe(0);
      const table = ok(await runCli(['topic', 'describe', topic, ...b()])).stdout;
      expect(table).toMatch(/IN B\/S/);
    } finally {
      stop = true;
      await load;
      await client.close();
    }
  }, 90_000);

  it('topic alter-config sets and deletes configs, takes effect at once, survives a restart, and refuses bad input', async () => {
    const topic = uniqueName('alter');
    ok(await runCli(['topic', 'create', topic, ...b()]));
    const r = ok(await runCli(['topic', 'alter-config', topic, '--set', 'max.message.bytes=2048', '--set', 'retention.ms=3600000', ...b()]));
    expect(r.stdout).toMatch(/altered configs of topic/);
    expect(r.stdout).toMatch(/max\.message\.bytes\s+2048\s+topic/);
    expect(await topicConfigs(broker.bootstrap, topic)).toMatchObject({ 'max.message.bytes': '2048', 'retention.ms': '3600000' });

    // The new max.message.bytes is enforced by the running partition: a 5000-byte record is refused.
    const big = await runCli(['produce', topic, ...b()], { input: `${'x'.repeat(5000)}\n` });
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/over the limit of 2048/);

    // --delete falls back to the broker's default; the other key keeps its value.
    ok(await runCli(['topic', 'alter-config', topic, '--delete', 'max.message.bytes', ...b()]));
    const after = await topicConfigs(broker.bootstrap, topic);
    expect(after['max.message.bytes']).not.toBe('2048');
    expect(after['retention.ms']).toBe('3600000');
    ok(await runCli(['produce', topic, ...b()], { input: `${'x'.repeat(5000)}\n` }));

    // --dry-run validates and answers without changing anything.
    const dry = json(await runCli(['topic', 'alter-config', topic, '--set', 'retention.ms=5000', '--dry-run', '--format', 'json', ...b()]));
    expect(dry).toMatchObject({ dryRun: true, configs: { 'retention.ms': '5000' } });
    expect((await topicConfigs(broker.bootstrap, topic))['retention.ms']).toBe('3600000');

    // Bad input: unknown key and bad value are the broker's INVALID_CONFIG (one line, exit 1); nothing changes.
    const unknown = await runCli(['topic', 'alter-config', topic, '--set', 'retention.forever=1', ...b()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim().split('\n')).toHaveLength(1);
    expect(unknown.stderr).toMatch(/unknown topic config "retention\.forever"/);
    const badValue = await runCli(['topic', 'alter-config', topic, '--set', 'retention.ms=soon', ...b()]);
    expect(badValue.code).toBe(1);
    expect(badValue.stderr).toMatch(/retention\.ms/);
    expect(await runCli(['topic', 'alter-config', topic, ...b()])).toMatchObject({ code: 2, stderr: 'mq: give at least one --set key=value or --delete key\n' });
    expect((await runCli(['topic', 'alter-config', topic, '--set', 'a=1', '--delete', 'a', ...b()])).code).toBe(2);
    const internal = await runCli(['topic', 'alter-config', '__consumer_offsets', '--set', 'retention.ms=1', ...b()]);
    expect(internal.code).toBe(1);
    expect(internal.stderr).toMatch(/internal/);
    expect((await topicConfigs(broker.bootstrap, topic))['retention.ms']).toBe('3600000');

    // Persisted: the change is still there after a restart.
    await broker.restart();
    expect((await topicConfigs(broker.bootstrap, topic))['retention.ms']).toBe('3600000');
  }, 180_000);

  it('topic trim deletes the records below an offset; an offset past the high watermark is refused', async () => {
    const topic = uniqueName('trim');
    ok(await runCli(['topic', 'create', topic, '--partitions', '2', ...b()]));
    ok(await runCli(['produce', topic, '--partition', '0', ...b()], { input: Array.from({ length: 10 }, (_, i) => `v${i}\n`).join('') }));
    const r = json(await runCli(['topic', 'trim', topic, '--partition', '0', '--before-offset', '4', '--format', 'json', ...b()]));
    expect(r).toEqual({ topic, partitions: [{ partition: 0, low: 4 }] });
    expect(await values(broker.bootstrap, topic)).toEqual(['4:v4', '5:v5', '6:v6', '7:v7', '8:v8', '9:v9']);
    const d = json(await runCli(['topic', 'describe', topic, '--format', 'json', ...b()]));
    expect((d.partitions as Array<{ partition: number; low: number; high: number }>)[0]).toMatchObject({ low: 4, high: 10 });

    const past = await runCli(['topic', 'trim', topic, '--partition', '0', '--before-offset', '11', ...b()]);
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/OFFSET_OUT_OF_RANGE|high watermark/);
    expect((await runCli(['topic', 'trim', topic, '--partition', '7', '--before-offset', '1', ...b()])).code).toBe(1);
    expect((await runCli(['topic', 'trim', topic, '--partition', '0', '--before-offset', 'x', ...b()])).code).toBe(2);

    // -1: everything up to the high watermark.
    expect(json(await runCli(['topic', 'trim', topic, '-p', '0', '--before-offset', '-1', '--format', 'json', ...b()]))).toEqual({ topic, partitions: [{ partition: 0, low: 10 }] });
    expect(await values(broker.bootstrap, topic)).toEqual([]);
    await broker.restart();
    const again = json(await runCli(['topic', 'describe', topic, '--format', 'json', ...b()]));
    expect((again.partitions as Array<{ low: number }>)[0]!.low).toBe(10);
  }, 180_000);

  it('group reset-offsets --shift-by moves committed offsets relative to where they are; --by-duration goes back in time', async () => {
    const topic = uniqueName('shift');
    const group = uniqueName('g');
    ok(await runCli(['topic', 'create', topic, ...b()]));
    const now = Date.now();
    const old = now - 3 * 3600_000;
    // Five records three hours old, five from now.
    for (let i = 0; i < 5; i++) ok(await runCli(['produce', topic, '--timestamp', String(old + i), ...b()], { input: `old${i}\n` }));
    ok(await runCli(['produce', topic, ...b()], { input: Array.from({ length: 5 }, (_, i) => `new${i}\n`).join('') }));

    // No committed offset yet: nothing to shift from.
    const none = await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by', '-2', ...b()]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no committed offset/);

    ok(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--to-offset', '8', ...b()]));
    const back = json(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by', '-3', '--format', 'json', ...b()]));
    expect(back.offsets).toEqual([{ topic, partition: 0, previousOffset: 8, offset: 5 }]);
    const fwd = json(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by', '+100', '--format', 'json', ...b()]));
    expect(fwd.offsets).toEqual([{ topic, partition: 0, previousOffset: 5, offset: 10 }]);
    const clamp = json(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by=-100', '--format', 'json', ...b()]));
    expect(clamp.offsets).toEqual([{ topic, partition: 0, previousOffset: 10, offset: 0 }]);

    // The last hour holds only the five new records; the last four hours hold all ten.
    const hour = json(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--by-duration', 'PT1H', '--format', 'json', ...b()]));
    expect(hour.offsets).toEqual([{ topic, partition: 0, previousOffset: 0, offset: 5 }]);
    const four = json(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--by-duration', String(4 * 3600_000), '--format', 'json', ...b()]));
    expect(four.offsets).toEqual([{ topic, partition: 0, previousOffset: 5, offset: 0 }]);

    expect(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--by-duration', 'P1M', ...b()])).toMatchObject({ code: 2 });
    expect(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by', '1.5', ...b()])).toMatchObject({ code: 2 });
    expect(await runCli(['group', 'reset-offsets', group, '--topic', topic, '--shift-by', '1', '--to-latest', ...b()])).toMatchObject({ code: 2 });
    // Thirteen CLI processes: 11 s on a quiet machine, over 60 s on a loaded CI one.
  }, 180_000);
});

describe('three-broker cluster', () => {
  let c: TestCluster;

  beforeAll(async () => {
    c = await startCluster({ brokers: 3, config: { ...FAST_FAILOVER_CONFIG }, proxies: false });
    await c.waitHealthy();
  }, 120_000);
  afterAll(async () => {
    await c?.close();
  });

  it('alter-config reaches every broker and trim reaches the followers: a new leader keeps both', async () => {
    const [first] = c.bootstrap;
    const bs = c.bootstrap.join(',');
    const topic = uniqueName('calter');
    ok(await runCli(['topic', 'create', topic, '--replication-factor', '3', '-b', bs]));
    ok(await runCli(['produce', topic, '--acks', 'all', '-b', bs], { input: Array.from({ length: 10 }, (_, i) => `v${i}\n`).join('') }));

    ok(await runCli(['topic', 'alter-config', topic, '--set', 'max.message.bytes=2048', '--set', 'retention.ms=7200000', '-b', first!]));
    for (const addr of c.bootstrap) {
      await waitFor(async () => (await topicConfigs(addr, topic))['retention.ms'] === '7200000', { timeout: 10_000, message: `broker ${addr} sees the new configs` });
    }
    const big = await runCli(['produce', topic, '-b', bs], { input: `${'x'.repeat(5000)}\n` });
    expect(big.code).toBe(1);

    const trimmed = json(await runCli(['topic', 'trim', topic, '--partition', '0', '--before-offset', '6', '--format', 'json', '-b', bs]));
    expect(trimmed).toEqual({ topic, partitions: [{ partition: 0, low: 6 }] });
    expect(await values(bs, topic)).toEqual(['6:v6', '7:v7', '8:v8', '9:v9']);

    // The followers take the new log start from their fetches: one more record with acks=all has been fetched
    // by every in-sync follower after the trim. After the leader dies, the new leader answers from its own log.
    ok(await runCli(['produce', topic, '--acks', 'all', '-b', bs], { input: 'v10\n' }));
    const leader = await leaderFor(c, topic, 0);
    await c.broker(leader).process.kill();
    const next = await leaderFor(c, topic, 0, [leader]);
    expect(next).not.toBe(leader);
    const alive = c.ids.filter((id) => id !== leader).map((id) => c.broker(id).process.bootstrap).join(',');
    await waitFor(async () => (await values(alive, topic).catch(() => [])).length > 0, { timeout: 20_000, message: 'records readable from the new leader' });
    expect(await values(alive, topic)).toEqual(['6:v6', '7:v7', '8:v8', '9:v9', '10:v10']);
    const stillBig = await runCli(['produce', topic, '-b', alive], { input: `${'x'.repeat(5000)}\n` });
    expect(stillBig.code).toBe(1);
    expect(stillBig.stderr).toMatch(/over the limit of 2048/);
  }, 120_000);
});
