/**
 * `mq cluster start --brokers 3 --controllers 3` runs three broker-only
 * processes and a dedicated quorum of three controller processes; `mq
 * cluster status` lists all six with their role and pid, the one active
 * controller among the controllers, and a topic placed on brokers only;
 * Ctrl-C stops every process. Bad counts are usage errors.
 */
import { spawn } from 'node:child_process';
import { CLI_BIN, cleanup, makeTempDir, runCli, uniqueName, waitFor } from './src/harness.js';
import { freePortRange } from './src/cluster-harness.js';

afterAll(async () => {
  await cleanup();
});

interface Proc {
  id: number;
  role: string;
  pid: number | null;
  state: string;
  controller: boolean;
}

interface Status {
  controllerId: number;
  brokers: Proc[];
  controllers: Proc[];
  underReplicated: unknown[];
}

describe('mq cluster --controllers', () => {
  it('refuses bad counts', async () => {
    const r = await runCli(['cluster', 'start', '--controllers', '0', '-d', await makeTempDir('mq-cli-bad-')]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/^mq: --controllers must be between 1 and 9, got 0\n$/);
  });

  it('starts dedicated controllers and broker-only processes, reports roles and pids, and stops them on SIGINT', async () => {
    const dir = await makeTempDir('mq-cluster-cli-dedicated-');
    const base = await freePortRange(24);
    const [port, httpPort, raftPort, interBrokerPort] = [base, base + 6, base + 12, base + 18];
    const child = spawn(
      process.execPath,
      [CLI_BIN, 'cluster', 'start', '--brokers', '3', '--controllers', '3', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--raft-port', String(raftPort), '--inter-broker-port', String(interBrokerPort), '--config-set', 'controller.fsync=false'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => out.includes('running'), { timeout: 60_000, message: `cluster start said running (output: ${out})` });
      expect(out).toContain('cluster of 3 brokers and 3 dedicated controllers running');
      expect(out).toMatch(/^4\s+controller\s+\d+\s+127\.0\.0\.1:\d+\s+\d+\s+\d+\s+/m);
      const b = ['-b', `127.0.0.1:${port}`];
      const topic = uniqueName('cli-dedicated');
      const created = await runCli(['topic', 'create', topic, '-p', '3', '-r', '3', ...b]);
      expect(created.stderr).toBe('');

      const s = (await waitFor(
        async () => {
          const r = await runCli(['cluster', 'status', '--format', 'json', '-d', dir, ...b]);
          const x = JSON.parse(r.stdout) as Status;
          return x.underReplicated.length === 0 && x.brokers.length === 3 && x.controllers.some((c) => c.controller) ? x : undefined;
        },
        { timeout: 20_000, message: 'three brokers, three controllers, one active' },
      ))!;
      expect(s.brokers.map((x) => [x.id, x.role, x.state])).toEqual([
        [1, 'broker', 'alive'],
        [2, 'broker', 'alive'],
        [3, 'broker', 'alive'],
      ]);
      expect(s.controllers.map((x) => [x.id, x.role, x.state])).toEqual([
        [4, 'controller', 'alive'],
        [5, 'controller', 'alive'],
        [6, 'controller', 'alive'],
      ]);
      const all = [...s.brokers, ...s.controllers];
      expect(all.every((x) => typeof x.pid === 'number' && x.pid > 0)).toBe(true);
      expect(all.filter((x) => x.controller).map((x) => x.id)).toEqual([s.controllerId]);
      expect(s.controllerId).toBeGreaterThanOrEqual(4);

      const describe = await runCli(['topic', 'describe', topic, ...b]);
      const rows = describe.stdout.split('\n').filter((l) => /^\d\s+\d\s+[\d,]+\s+[\d,]+/.test(l));
      expect(rows).toHaveLength(3);
      for (const row of rows) expect(row.split(/\s+/)[2]!.split(',').map(Number).sort()).toEqual([1, 2, 3]);

      const text = await runCli(['cluster', 'status', '-d', dir, ...b]);
      expect(text.stdout).toMatch(/^ID\s+ENDPOINT\s+PID\s+STATE\s+RACK\s+CONTROLLER\s+ROLE\s+KAFKA$/m);
      expect(text.stdout).toMatch(new RegExp(`^${s.controllerId}\\s+127\\.0\\.0\\.1:\\d+\\s+\\d+\\s+alive\\s+-\\s+active\\s+controller\\s+-$`, 'm'));
      expect(text.stdout).toContain(`controller: controller ${s.controllerId};`);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      for (const x of all) expect(() => process.kill(x.pid!, 0)).toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
