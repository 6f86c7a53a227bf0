/**
 * `mq cluster start` with TLS (issue 17): three brokers whose client and HTTP listeners speak TLS only and require a
 * client certificate (tls.client.auth=required, authentication and ACLs on, the certificate's CN the principal),
 * started through the CLI binary with the client's --tls-ca/--tls-cert/--tls-key, which its own readiness check
 * uses (GET /cluster over https:// as User:admin). It comes up without waiting out its 60 s readiness timeout and
 * serves: `mq cluster status` (which reads each broker's GET /cluster over https:// too: the Kafka addresses),
 * topic create, produce and consume through the CLI over wss://. Before, the readiness check dialled http:// and
 * gave up after 60 s ("not all are registered"), and `mq cluster status` showed no Kafka listener.
 */
import { spawn } from 'node:child_process';
import { CLI_BIN, cleanup, makeTempDir, runCli, uniqueName, waitFor } from './src/harness.js';
import { freePortRange } from './src/cluster-harness.js';
import { makePki, mtlsBrokerConfig } from './src/pki.js';

afterAll(async () => {
  await cleanup();
});

interface Status {
  brokers: Array<{ id: number; state: string; kafka: string | null }>;
  underReplicated: unknown[];
}

describe('mq cluster start with TLS', () => {
  it('comes up over https:// readiness checks and serves TLS clients', async () => {
    const pki = await makePki();
    const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    const admin = pki.issue('admin', 'admin');
    const dir = await makeTempDir('mq-cluster-cli-tls-');
    const base = await freePortRange(15);
    const [port, httpPort, raftPort, interBrokerPort, kafkaPort] = [base, base + 3, base + 6, base + 9, base + 12];
    const tlsFlags = ['--tls-ca', pki.ca, '--tls-cert', admin.cert, '--tls-key', admin.key];
    const config = ['broker.session.timeout.ms=2000', ...mtlsBrokerConfig(pki, server)].flatMap((c) => ['--config-set', c]);
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [CLI_BIN, 'cluster', 'start', '--brokers', '3', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--raft-port', String(raftPort), '--inter-broker-port', String(interBrokerPort), '--kafka-port', String(kafkaPort), ...tlsFlags, ...config],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      // Ready well before the 60 s the readiness check waits when it cannot reach the brokers.
      await waitFor(() => out.includes('running'), { timeout: 50_000, message: `cluster start said running (output: ${out})` });
      expect(Date.now() - started).toBeLessThan(50_000);
      expect(out).not.toContain('mq: the brokers are running but');

      const b = ['-b', `127.0.0.1:${port}`, ...tlsFlags];
      const status = async (): Promise<Status> => {
        const r = await runCli(['cluster', 'status', '--format', 'json', '-d', dir, ...b]);
        expect(r.stderr).toBe('');
        return JSON.parse(r.stdout) as Status;
      };
      const s = (await waitFor(async () => {
        const x = await status();
        return x.brokers.length === 3 ? x : undefined;
      }, { timeout: 20_000, message: 'three brokers in mq cluster status' }))!;
      expect(s.brokers.map((x) => x.state)).toEqual(['alive', 'alive', 'alive']);
      // Read from the brokers' GET /cluster, over https:// with the client certificate.
      expect(s.brokers.map((x) => x.kafka)).toEqual([0, 1, 2].map((i) => `127.0.0.1:${kafkaPort + i}`));

      const topic = uniqueName('cli-cluster-tls');
      const created = await runCli(['topic', 'create', topic, '-p', '3', '-r', '3', ...b]);
      expect([created.code, created.stderr]).toEqual([0, '']);
      const produced = await runCli(['produce', topic, ...b], { input: 'one\ntwo\nthree\n' });
      expect(produced.code).toBe(0);
      expect(produced.stderr).toContain('produced 3 records');
      const consumed = await runCli(['consume', topic, '--from-beginning', '--exit-at-end', ...b]);
      expect(consumed.code).toBe(0);
      expect(consumed.stdout.trim().split('\n').sort()).toEqual(['one', 'three', 'two']);

      child.kill('SIGINT');
      expect(await exited).toBe(0);
    } finally {
      // SIGINT stops the brokers with the supervisor (SIGKILL would leave them running).
      if (child.exitCode === null) {
        child.kill('SIGINT');
        await Promise.race([exited, new Promise((r) => setTimeout(r, 20_000))]);
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    }
  }, 150_000);
});
