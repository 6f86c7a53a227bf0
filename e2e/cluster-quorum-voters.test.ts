/**
 * Controller voters added and removed on a running cluster (issue 14, Kafka's
 * KIP-853), with real processes: 3 dedicated controllers (1, 2, 3) and 2
 * broker-only processes (4, 5). As a script:
 *   - a 4th controller process (6) starts with controller.raft.address and
 *     no place in controller.quorum.voters: it waits, out of the quorum;
 *   - bad input first: adding an existing voter, removing an unknown id;
 *   - `mq controller add-voter --id 6` adds it (learner, caught up, voter);
 *     `mq controller describe` lists 1, 2, 3, 6 as voters with their lag;
 *   - a change while another is pending (adding a controller that never
 *     catches up) is refused with VOTER_CHANGE_IN_PROGRESS; the pending one
 *     times out and its learner is removed again;
 *   - `mq controller remove-voter --id 1` and SIGKILL of controller 2: the
 *     quorum {2, 3, 6} has 3 and 6, elects and commits: a topic is created
 *     afterwards and records go through it;
 *   - controller 3 and then 6 (the added one) restart: each comes back with
 *     the membership of the log (2, 3, 6), not the static one (1, 2, 3);
 *   - removing down to one voter, then the last voter is refused;
 *   - a controller joins while the active controller (6) is not a founding
 *     voter: it learns 6's address from it (DescribeQuorum) and is added.
 */
import { MqClient } from '@mq/client';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, freePort, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
const t0 = Date.now();
function step(what: string): void {
  if (process.env.MQ_E2E_TRACE) process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${what}\n`);
}

const CONFIG: Readonly<Record<string, string>> = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '10000' };

interface Quorum {
  leaderId: number;
  members: Array<{ id: number; voter: boolean; address: string; logEnd: number; lag: number }>;
}

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: controller voters added and removed (KIP-853)', () => {
  it('adds a controller, removes one, survives a kill, restarts with the log membership, refuses bad changes', async () => {
    const raft6 = await freePort();
    const interBroker6 = await freePort();
    cluster = await startCluster({ controllers: 3, brokers: 2, config: CONFIG, extraBootstrap: [`127.0.0.1:${interBroker6}`] });
    const c = cluster;
    await c.waitHealthy();
    step('started');
    const b = ['-b', c.bootstrap.join(',')];
    const cli = (args: string[], timeoutMs = 60_000) => runCli(['controller', ...args, ...b], { timeoutMs });
    const describeQuorum = async (): Promise<Quorum> => {
      const r = await cli(['describe', '--format', 'json']);
      if (r.code !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout) as Quorum;
    };
    const voters = (q: Quorum) => q.members.filter((m) => m.voter).map((m) => m.id).sort((x, y) => x - y);

    // The 4th controller: the same static voters as everyone, its own Raft listener, not yet a member.
    const staticVoters = [1, 2, 3].map((id) => `${id}@127.0.0.1:${c.broker(id).raftPort}`).join(',');
    const bootstrap = [...[1, 2, 3].map((id) => `127.0.0.1:${c.broker(id).interBrokerPort}`), `127.0.0.1:${interBroker6}`].join(',');
    const config6: Record<string, string> = {
      ...CONFIG,
      'process.roles': 'controller',
      'controller.quorum.voters': staticVoters,
      'controller.raft.address': `127.0.0.1:${raft6}`,
      'controller.quorum.bootstrap.servers': bootstrap,
      'inter.broker.port': String(interBroker6),
    };
    const c6: BrokerProcess = await startBroker({
      dataDir: await makeTempDir('mq-cluster-6-'),
      args: ['--broker-id', '6', ...Object.entries(config6).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])],
      startTimeoutMs: 30_000,
    });
    await waitFor(() => c6.output.some((l) => l.includes('is not in the quorum yet')), { timeout: 10_000, message: 'controller 6 says it waits to be added' });
    step('controller 6 running, not a member');

    // Bad input: each one clear line, nothing changed.
    const dup = await cli(['add-voter', '--id', '2', '--address', `127.0.0.1:${c.broker(2).raftPort}`]);
    expect(dup.code).not.toBe(0);
    expect(dup.stderr).toMatch(/^mq: controller 2 is already a voter of the metadata quorum \(voters: 1, 2, 3\)\n$/);
    const unknown = await cli(['remove-voter', '--id', '9']);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/^mq: controller 9 is not in the metadata quorum \(voters: 1, 2, 3\)\n$/);
    const badAddress = await cli(['add-voter', '--id', '6', '--address', 'nowhere']);
    expect(badAddress.code).not.toBe(0);
    expect(badAddress.stderr).toMatch(/^mq: --address "nowhere" is not host:port/);
    expect(voters(await describeQuorum())).toEqual([1, 2, 3]);

    // Add controller 6.
    const added = await cli(['add-voter', '--id', '6', '--address', `127.0.0.1:${raft6}`]);
    expect(added.stderr).toBe('');
    expect(added.stdout).toBe('added controller 6: voters 1, 2, 3, 6\n');
    const q1 = await describeQuorum();
    expect(voters(q1)).toEqual([1, 2, 3, 6]);
    expect(q1.members.find((m) => m.id === 6)!.address).toBe(`127.0.0.1:${raft6}`);
    const text = await cli(['describe']);
    expect(text.stdout).toMatch(/^active controller [1-3] \(term \d+\), metadata log committed to \d+\n/);
    expect(text.stdout).toMatch(new RegExp(`^6\\s+voter\\s+127\\.0\\.0\\.1:${raft6}\\s+\\d+\\s+\\d+\\s+active`, 'm'));
    step('controller 6 added');

    // A change while another is pending: controller 7 never runs, so it stays a learner until the first request times out.
    const nowhere = await freePort();
    const pending = cli(['add-voter', '--id', '7', '--address', `127.0.0.1:${nowhere}`, '--timeout-ms', '8000']);
    await waitFor(async () => (await describeQuorum()).members.some((m) => m.id === 7 && !m.voter), { timeout: 10_000, interval: 200, message: 'controller 7 is a learner' });
    const second = await cli(['remove-voter', '--id', '1']);
    expect(second.code).not.toBe(0);
    expect(second.stderr).toMatch(/^mq: a change of the controller quorum is in progress \(adding controller 7\); retry once it is done\n$/);
    const timedOut = await pending;
    expect(timedOut.code).not.toBe(0);
    expect(timedOut.stderr).toMatch(/controller 7 at 127\.0\.0\.1:\d+ did not catch up with the metadata log within \d+ ms .*It was removed again/);
    const q2 = await describeQuorum();
    expect(q2.members.map((m) => m.id).sort()).toEqual([1, 2, 3, 6]);
    step('pending change refused; the learner that never caught up is gone');

    // Remove an original voter, and kill another.
    const removed = await cli(['remove-voter', '--id', '1']);
    expect(removed.stderr).toBe('');
    expect(removed.stdout).toBe('removed controller 1: voters 2, 3, 6 (stop its process now)\n');
    await c.kill(1);
    await c.kill(2);
    step('controller 1 removed and stopped, controller 2 killed');
    const q3 = await waitFor<Quorum | undefined>(
      async () => {
        const q = await describeQuorum();
        return [3, 6].includes(q.leaderId) ? q : undefined;
      },
      { timeout: 30_000, interval: 300, message: 'controller 3 or 6 active' },
    );
    expect(voters(q3!)).toEqual([2, 3, 6]);

    // The quorum of {2, 3, 6} commits: a topic is created, records go through it.
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 200 } });
    const roundTrip = async (label: string): Promise<void> => {
      const topic = uniqueName(label);
      await client.admin().createTopic(topic, { numPartitions: 2, replicationFactor: 2 });
      const producer = client.producer({ acks: 'all' });
      for (let i = 0; i < 20; i++) await producer.send(topic, { partition: i % 2, value: `v${i}` });
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([0, 1].map((partition) => ({ topic, partition, offset: 0 })));
      const got: string[] = [];
      await waitFor(async () => {
        for (const r of await consumer.poll(200)) got.push(r.value!.toString());
        return got.length >= 20;
      }, { timeout: 20_000, message: `${label}: 20 records read back` });
      expect(got.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`).sort());
      await consumer.close();
    };
    try {
      await roundTrip('after-change');
      step('topic created and used with voters {3, 6} of {2, 3, 6} alive');

      // Restarts come back with the membership of the log, not the static list.
      for (const id of [3, 6]) {
        const proc = id === 6 ? c6 : c.broker(id).process;
        await proc.restart();
        const seen = await waitFor<{ voters: number[]; controllerId: number } | undefined>(
          async () => {
            const res = await fetch(`${proc.httpUrl}/cluster`, { signal: AbortSignal.timeout(3000) });
            const s = (await res.json()) as { voters: number[]; controllerId: number };
            return s.controllerId > 0 ? s : undefined;
          },
          { timeout: 30_000, interval: 200, message: `controller ${id} back with an active controller` },
        );
        expect(seen!.voters).toEqual([2, 3, 6]);
        step(`controller ${id} restarted with voters ${seen!.voters.join(', ')}`);
      }
      await roundTrip('after-restarts');

      // Down to one voter; the last one cannot go.
      for (const [id, left] of [[2, '3, 6'], [3, '6']] as const) {
        const r = await cli(['remove-voter', '--id', String(id)]);
        expect(r.stderr).toBe('');
        expect(r.stdout).toBe(`removed controller ${id}: voters ${left} (stop its process now)\n`);
      }
      const last = await cli(['remove-voter', '--id', '6']);
      expect(last.code).not.toBe(0);
      expect(last.stderr).toMatch(/^mq: refusing to remove controller 6, the last voter: the metadata log would have no quorum \(add another voter first\)\n$/);
      await waitFor(async () => (await describeQuorum()).leaderId === 6, { timeout: 20_000, interval: 200, message: 'controller 6 alone is active' });
      await roundTrip('one-voter');
      step('one voter left, still committing');

      // A controller joins while the active one (6) is not a founding voter: it learns 6's address from it.
      const raft7 = await freePort();
      const config7: Record<string, string> = { ...config6, 'controller.raft.address': `127.0.0.1:${raft7}`, 'inter.broker.port': String(await freePort()) };
      const c7 = await startBroker({
        dataDir: await makeTempDir('mq-cluster-7-'),
        args: ['--broker-id', '7', ...Object.entries(config7).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])],
        startTimeoutMs: 30_000,
      });
      await waitFor(() => c7.output.some((l) => l.includes('learned the Raft address of controller 6')), { timeout: 15_000, message: 'controller 7 learned where 6 is' });
      const added7 = await cli(['add-voter', '--id', '7', '--address', `127.0.0.1:${raft7}`]);
      expect(added7.stderr).toBe('');
      expect(added7.stdout).toBe('added controller 7: voters 6, 7\n');
      await roundTrip('two-voters');
      step('controller 7 added by the non-founding active controller 6');
    } finally {
      await client.close();
    }
  }, 240_000);
});
