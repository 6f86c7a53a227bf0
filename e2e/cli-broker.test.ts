/**
 * `mq broker start` runs in the foreground as a one-node cluster and stops
 * cleanly on SIGTERM or SIGINT (exit code 0, data kept); `mq consume` stops
 * cleanly on Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { CLI_BIN, REPO_ROOT, cleanup, makeTempDir, runCli, startBroker, uniqueName, waitFor } from './src/harness.js';

afterAll(async () => {
  await cleanup();
});

describe('mq broker start', () => {
  it('stops gracefully on SIGTERM (exit 0) and keeps topics and records across the restart', async () => {
    const broker = await startBroker();
    const topic = uniqueName('graceful');
    const b = ['--bootstrap', broker.bootstrap];
    expect((await runCli(['topic', 'create', topic, '--partitions', '2', ...b])).code).toBe(0);
    expect((await runCli(['produce', topic, '--key-separator', '=', ...b], { input: 'a=1\nb=2\nc=3\n' })).code).toBe(0);
    expect(await broker.stop()).toBe(0);
    expect(broker.output.some((l) => l.includes('"msg":"broker listening"'))).toBe(true);
    await broker.restart();
    const r = await runCli(['consume', topic, '--from-beginning', '--max-messages', '3', '--print-key', ...b]);
    expect(r.stdout.trim().split('\n').sort()).toEqual(['a\t1', 'b\t2', 'c\t3']);
  });

  it('is a one-node cluster: mq cluster status shows broker 1 as the active controller (broker,controller)', async () => {
    const broker = await startBroker({ args: ['--kafka-port', '0'] });
    const r = await runCli(['cluster', 'status', '--format', 'json', '--bootstrap', broker.bootstrap, '--data-dir', await makeTempDir('mq-status-')]);
    expect(r.code).toBe(0);
    const status = JSON.parse(r.stdout) as { controllerId: number; brokers: Array<{ id: number; role: string; state: string; controller: boolean; kafka: string | null }> };
    expect(status.controllerId).toBe(1);
    // each broker's Kafka listener address is listed (kcat -b / kafkajs brokers)
    expect(status.brokers).toEqual([expect.objectContaining({ id: 1, role: 'broker,controller', state: 'alive', controller: true, kafka: expect.stringMatching(/^127\.0\.0\.1:\d+$/) })]);
    const text = await runCli(['cluster', 'status', '--bootstrap', broker.bootstrap, '--data-dir', await makeTempDir('mq-status-')]);
    expect(text.stdout).toMatch(/^ID\s+ENDPOINT\s+PID\s+STATE\s+RACK\s+CONTROLLER\s+ROLE\s+KAFKA$/m);
    expect(text.stdout).toContain(status.brokers[0]!.kafka!);
    const view = (await (await fetch(`http://127.0.0.1:${broker.httpPort}/cluster`)).json()) as Record<string, unknown>;
    expect(view).toMatchObject({ brokerId: 1, controllerId: 1, activeController: true, voters: [1] });
    expect(await broker.stop()).toBe(0);
  });

  it('refuses a bad --config-set in one line', async () => {
    const r = await runCli(['broker', 'start', '--port', '0', '--http-port', '0', '--config-set', 'nonsense']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('mq: --config-set "nonsense" is not key=value\n');
  });
});

describe('mq consume', () => {
  it('stops cleanly on SIGINT and reports what it read', async () => {
    const broker = await startBroker();
    const topic = uniqueName('sigint');
    await runCli(['topic', 'create', topic, '--bootstrap', broker.bootstrap]);
    const child = spawn(process.execPath, [CLI_BIN, 'consume', topic, '--bootstrap', broker.bootstrap], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // It starts at the end of the topic: produce until it has printed something.
    await waitFor(
      async () => {
        await runCli(['produce', topic, '--bootstrap', broker.bootstrap], { input: 'hello\n' });
        return stdout.includes('hello');
      },
      { timeout: 15_000, interval: 300 },
    );
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toMatch(/^consumed \d+ records?\n$/);
  });
});
