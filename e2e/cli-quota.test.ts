/**
 * Issue 17, quotas through the real CLI against a real broker process:
 * `mq quota set|list|delete`, bad values refused with the broker's typed
 * error in one line (exit 1) and nothing changed, and a client id over its
 * produce quota slowed down by the broker (the client honours throttle_ms)
 * while `mq produce` under another client id is not.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, type BrokerProcess, type CliResult } from './src/harness.js';

function ok(r: CliResult): CliResult {
  if (r.code !== 0) throw new Error(`mq exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  return r;
}

afterAll(async () => {
  await cleanup();
});

describe('mq quota', () => {
  let broker: BrokerProcess;
  const b = () => ['-b', broker.bootstrap];
  const list = async () => JSON.parse(ok(await runCli(['quota', 'list', '--format', 'json', ...b()])).stdout) as unknown[];

  beforeAll(async () => {
    const dir = await makeTempDir('mq-quota-');
    const config = path.join(dir, 'broker.properties');
    await writeFile(config, 'quota.window.num=2\n');
    broker = await startBroker({ args: ['--config', config] });
  });

  it('sets, lists and deletes quotas; refuses bad values with the typed error and changes nothing', async () => {
    ok(await runCli(['quota', 'set', '--client-id', 'loader', '--producer-byte-rate', '200000', ...b()]));
    ok(await runCli(['quota', 'set', '--default-user', '--consumer-byte-rate', '1048576', '--request-rate', '500', ...b()]));
    expect(await list()).toEqual([
      { entity: { clientId: 'loader' }, values: { producer_byte_rate: 200000 } },
      { entity: { user: '<default>' }, values: { consumer_byte_rate: 1048576, request_rate: 500 } },
    ]);
    const text = ok(await runCli(['quota', 'list', ...b()])).stdout;
    expect(text).toMatch(/loader\s+producer_byte_rate\s+200000/);

    for (const bad of [['--producer-byte-rate', '-5'], ['--request-rate', '1e30']]) {
      const r = await runCli(['quota', 'set', '--client-id', 'loader', ...bad, ...b()]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/quota .* must be a number from 1 to/);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    ok(await runCli(['quota', 'delete', '--default-user', '--key', 'request_rate', ...b()]));
    expect(await list()).toEqual([
      { entity: { clientId: 'loader' }, values: { producer_byte_rate: 200000 } },
      { entity: { user: '<default>' }, values: { consumer_byte_rate: 1048576 } },
    ]);
    ok(await runCli(['quota', 'delete', '--default-user', ...b()]));
    expect(await list()).toEqual([{ entity: { clientId: 'loader' }, values: { producer_byte_rate: 200000 } }]);
  });

  it('a client over its produce quota is slowed to it; another client id is not', async () => {
    const topic = uniqueName('quota');
    ok(await runCli(['topic', 'create', topic, ...b()]));
    const send = async (clientId: string, totalBytes: number) => {
      const client = new MqClient({ bootstrap: broker.bootstrap, clientId });
      const producer = client.producer({ acks: 1, lingerMs: 0 });
      const value = Buffer.alloc(20_000, 1);
      const start = Date.now();
      try {
        for (let sent = 0; sent < totalBytes; sent += value.length) await producer.send(topic, { value });
        await producer.flush();
      } finally {
        await producer.close();
        await client.close();
      }
      return Date.now() - start;
    };
    // 400 kB from "loader" under 200 kB/s with 400 kB of burst: the burst covers it.
    // 1.4 MB: 400 kB of burst, then 1 MB at 200 kB/s takes about 5 s.
    const [loaderMs, otherMs] = await Promise.all([send('loader', 1_400_000), send('other', 1_400_000)]);
    if (process.env.MQ_QUOTA_TEST_VERBOSE) console.log({ loaderMs, otherMs });
    expect(loaderMs).toBeGreaterThan(3500);
    expect(loaderMs).toBeLessThan(12_000);
    expect(otherMs).toBeLessThan(loaderMs / 2);
  }, 30_000);
});
