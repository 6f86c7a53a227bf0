/**
 * Brokers find controllers added after they started through the metadata,
 * not only through controller.quorum.bootstrap.servers (issue 14, KIP-853
 * gap; Kafka's controller registrations, KIP-919). Real processes, as a
 * script:
 *   - 3 dedicated controllers (1, 2, 3) and a broker-only process (4) whose
 *     bootstrap servers list 1, 2 and 3 only; a topic with records;
 *   - controllers 5 and 6 start (controller.raft.address) and are added with
 *     `mq controller add-voter`; each registers its inter-broker listener in
 *     the metadata log;
 *   - 1, 2 and 3 are removed from the quorum one at a time and SIGKILLed:
 *     every address broker 4 was configured with is gone;
 *   - broker 4 still follows the metadata log (it names 5 or 6 as the active
 *     controller), a new topic is created through it, records are produced
 *     with acks=all and read back, and the records from before are intact.
 */
import { MqClient } from '@mq/client';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, freePort, startCluster, type TestCluster } from './src/cluster-harness.js';
import { readTopic } from './src/txn-copier.js';

let cluster: TestCluster | undefined;
const clients: MqClient[] = [];
const CONFIG: Readonly<Record<string, string>> = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '10000' };

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await cluster?.close();
  await cleanup();
});

interface Quorum {
  leaderId: number;
  members: Array<{ id: number; voter: boolean }>;
}

describe('cluster: brokers find new controllers through the metadata', () => {
  it('keeps following the metadata log after every bootstrap controller is replaced', async () => {
    cluster = await startCluster({ controllers: 3, brokers: 1, config: CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const broker = c.broker(4);
    const cli = (args: string[], timeoutMs = 60_000) => runCli(['controller', ...args, '-b', broker.process.bootstrap], { timeoutMs });
    const describeQuorum = async (): Promise<Quorum> => {
      const r = await cli(['describe', '--format', 'json']);
      if (r.code !== 0) throw new Error(r.stderr);
      return JSON.parse(r.stdout) as Quorum;
    };
    const voters = (q: Quorum) => q.members.filter((m) => m.voter).map((m) => m.id).sort((x, y) => x - y);

    const client = new MqClient({ bootstrap: [broker.process.bootstrap], requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 200 } });
    clients.push(client);
    const before = uniqueName('before');
    await client.admin().createTopic(before, { numPartitions: 2, replicationFactor: 1 });
    const producer = client.producer({ acks: 'all' });
    for (let i = 0; i < 40; i++) await producer.send(before, { partition: i % 2, value: `b${i}` });

    // Two new controllers, configured with the founding voters and the old bootstrap servers (to reach the quorum to join).
    const staticVoters = [1, 2, 3].map((id) => `${id}@127.0.0.1:${c.broker(id).raftPort}`).join(',');
    const oldBootstrap = [1, 2, 3].map((id) => `127.0.0.1:${c.broker(id).interBrokerPort}`).join(',');
    const added: BrokerProcess[] = [];
    for (const id of [5, 6]) {
      const raft = await freePort();
      const config: Record<string, string> = {
        ...CONFIG,
        'process.roles': 'controller',
        'controller.quorum.voters': staticVoters,
        'controller.raft.address': `127.0.0.1:${raft}`,
        'controller.quorum.bootstrap.servers': oldBootstrap,
        'inter.broker.port': String(await freePort()),
      };
      const p = await startBroker({
        dataDir: await makeTempDir(`mq-cluster-${id}-`),
        args: ['--broker-id', String(id), ...Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])],
        startTimeoutMs: 30_000,
      });
      added.push(p);
      const r = await cli(['add-voter', '--id', String(id), '--address', `127.0.0.1:${raft}`]);
      expect(r.stderr).toBe('');
      // Its inter-broker listener is in the metadata log: where brokers will find it.
      await waitFor(() => p.output.some((l) => l.includes('controller endpoint registered in the metadata')), { timeout: 20_000, message: `controller ${id} registered its endpoint` });
    }
    expect(voters(await describeQuorum())).toEqual([1, 2, 3, 5, 6]);

    // Replace every controller broker 4 was configured with.
    for (const id of [1, 2, 3]) {
      const r = await cli(['remove-voter', '--id', String(id)]);
      expect(r.stderr).toBe('');
      await c.kill(id);
    }
    const q = await waitFor<Quorum | undefined>(
      async () => {
        const d = await describeQuorum().catch(() => undefined);
        return d && [5, 6].includes(d.leaderId) ? d : undefined;
      },
      { timeout: 30_000, interval: 300, message: 'controller 5 or 6 active' },
    );
    expect(voters(q!)).toEqual([5, 6]);

    // Broker 4 follows the metadata log from the new controllers, reached only through their registrations.
    await waitFor(
      async () => {
        const s = await c.status(4).catch(() => undefined);
        return s !== undefined && [5, 6].includes(s.controllerId);
      },
      { timeout: 20_000, interval: 200, message: 'broker 4 names controller 5 or 6' },
    );
    const after = uniqueName('after');
    await client.admin().createTopic(after, { numPartitions: 2, replicationFactor: 1 });
    for (let i = 0; i < 20; i++) await producer.send(after, { partition: i % 2, value: `a${i}` });
    const before2 = await readTopic(client, before, 2, 'read_uncommitted', 40, 20_000);
    const after2 = await readTopic(client, after, 2, 'read_uncommitted', 20, 20_000);
    for (const p of [0, 1]) {
      expect(before2[p]).toEqual(Array.from({ length: 20 }, (_, i) => `b${i * 2 + p}`));
      expect(after2[p]).toEqual(Array.from({ length: 10 }, (_, i) => `a${i * 2 + p}`));
    }
    // And it stays registered (its fetches are the heartbeats the new active controller sees).
    expect((await c.status(4)).brokers.find((b) => b.id === 4)?.fenced).toBe(false);
    for (const p of added) await p.kill();
  }, 240_000);
});
