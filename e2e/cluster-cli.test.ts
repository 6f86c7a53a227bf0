/**
 * `mq cluster start` runs a local 3-broker cluster in one command and stops
 * it on Ctrl-C; `mq cluster status` shows the brokers with their process
 * ids, the active controller, and, after a broker is killed, that broker
 * fenced and the partitions it held under-replicated; `mq topic describe`
 * shows leader, replicas and ISR per partition.
 */
import { spawn } from 'node:child_process';
import { CLI_BIN, cleanup, makeTempDir, runCli, uniqueName, waitFor } from './src/harness.js';
import { freePortRange } from './src/cluster-harness.js';

afterAll(async () => {
  await cleanup();
});

interface Status {
  controllerId: number;
  brokers: Array<{ id: number; pid: number | null; state: string; controller: boolean }>;
  underReplicated: Array<{ topic: string; partition: number }>;
  offline: unknown[];
}

describe('mq cluster', () => {
  it('starts a local cluster, reports its health, and stops it on SIGINT', async () => {
    const dir = await makeTempDir('mq-cluster-cli-');
    const base = await freePortRange(12);
    const [port, httpPort, raftPort, interBrokerPort] = [base, base + 3, base + 6, base + 9];
    const child = spawn(process.execPath, [CLI_BIN, 'cluster', 'start', '--brokers', '3', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--raft-port', String(raftPort), '--inter-broker-port', String(interBrokerPort), '--config-set', 'broker.session.timeout.ms=2000'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => out.includes('running'), { timeout: 60_000, message: `cluster start said running (output: ${out})` });
      const b = ['-b', `127.0.0.1:${port}`];
      const topic = uniqueName('cli-cluster');
      const created = await runCli(['topic', 'create', topic, '-p', '3', '-r', '3', ...b]);
      expect(created.stderr).toBe('');
      expect(created.code).toBe(0);

      const status = async (): Promise<Status> => {
        const r = await runCli(['cluster', 'status', '--format', 'json', '-d', dir, ...b]);
        expect(r.code).toBe(0);
        return JSON.parse(r.stdout) as Status;
      };
      const s = (await waitFor(async () => {
        const x = await status();
        return x.underReplicated.length === 0 && x.brokers.length === 3 ? x : undefined;
      }, { timeout: 20_000, message: 'three alive brokers and full ISRs' }))!;
      expect(s.brokers.map((x) => x.state)).toEqual(['alive', 'alive', 'alive']);
      expect(s.brokers.every((x) => typeof x.pid === 'number' && x.pid > 0)).toBe(true);
      expect(s.brokers.filter((x) => x.controller)).toHaveLength(1);
      expect(s.controllerId).toBeGreaterThan(0);

      const describe = await runCli(['topic', 'describe', topic, ...b]);
      expect(describe.code).toBe(0);
      expect(describe.stdout).toMatch(/PARTITION\s+LEADER\s+REPLICAS\s+ISR/);
      expect(describe.stdout.split('\n').filter((l) => /^\d\s+\d\s+\d,\d,\d\s+\d,\d,\d/.test(l))).toHaveLength(3);

      // Kill a broker that is not broker 1 (the bootstrap) and not the controller.
      const victim = s.brokers.find((x) => x.id !== 1 && !x.controller)!;
      process.kill(victim.pid!, 'SIGKILL');
      const after = (await waitFor(async () => {
        const x = await status();
        return x.brokers.find((y) => y.id === victim.id)?.state === 'fenced' && x.underReplicated.length === 3 ? x : undefined;
      }, { timeout: 20_000, message: `broker ${victim.id} fenced, its partitions under-replicated` }))!;
      expect(after.offline).toEqual([]);
      const text = await runCli(['cluster', 'status', '-d', dir, ...b]);
      expect(text.stdout).toMatch(new RegExp(`^${victim.id}\\s+127\\.0\\.0\\.1:\\d+\\s+\\d+\\s+fenced`, 'm'));
      expect(text.stdout).toContain('3 under-replicated, 0 offline');
      expect(out).toContain(`broker ${victim.id} exited`);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
      for (const x of s.brokers) {
        expect(() => process.kill(x.pid!, 0)).toThrow();
      }
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);

  it('mq cluster stop stops a cluster started in another terminal; a directory without a cluster is one line, exit 1', async () => {
    const dir = await makeTempDir('mq-cluster-stop-');
    const base = await freePortRange(8);
    const [port, httpPort, raftPort, interBrokerPort] = [base, base + 2, base + 4, base + 6];
    const child = spawn(process.execPath, [CLI_BIN, 'cluster', 'start', '--brokers', '2', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--raft-port', String(raftPort), '--inter-broker-port', String(interBrokerPort)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await waitFor(() => out.includes('running'), { timeout: 60_000, message: `cluster start said running (output: ${out})` });
      const status = await runCli(['cluster', 'status', '--format', 'json', '-d', dir, '-b', `127.0.0.1:${port}`]);
      const pids = (JSON.parse(status.stdout) as Status).brokers.map((b) => b.pid!);
      expect(pids).toHaveLength(2);

      const stopped = await runCli(['cluster', 'stop', '-d', dir]);
      expect(stopped.stderr).toBe('');
      expect(stopped.stdout).toContain('stopped the cluster');
      expect(stopped.code).toBe(0);
      expect(await exited).toBe(0);
      for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();

      const again = await runCli(['cluster', 'stop', '-d', dir]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain('no process of the cluster');

      const none = await runCli(['cluster', 'stop', '-d', await makeTempDir('mq-cluster-none-')]);
      expect(none.code).toBe(1);
      expect(none.stderr.trim().split('\n')).toHaveLength(1);
      expect(none.stderr).toContain('no cluster started by mq cluster start');
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  }, 120_000);
});
