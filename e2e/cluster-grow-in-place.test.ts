/**
 * A single broker grows into a cluster in place (issues 13 and 14), and a
 * combined broker,controller process leaves the quorum. Real processes, as a
 * script:
 *   - `mq broker start` with no cluster settings (a one-node cluster: no Raft
 *     or inter-broker listener): a topic of 3 partitions with records;
 *     `mq controller add-voter` is refused with what to do;
 *   - it is restarted on the same data directory with
 *     controller.quorum.voters naming only itself (a one-voter quorum that
 *     listens) and inter.broker.port: every record is still there;
 *   - brokers 2 and 3 start as combined processes joining the quorum
 *     (controller.raft.address) and are added with `mq controller add-voter`;
 *   - every partition (the internal ones too) is reassigned to replicas
 *     1, 2, 3 (RF 1 to 3);
 *   - `mq controller remove-voter --id 1` takes the original process out of
 *     the quorum (voters 2, 3), then it is SIGKILLed: every record is read
 *     back from 2 and 3, and the quorum {2, 3} still commits (a new topic,
 *     acks=all records).
 */
import { MqClient } from '@mq/client';
import { cleanup, makeTempDir, runCli, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, freePort } from './src/cluster-harness.js';
import { readTopic } from './src/txn-copier.js';

const procs: BrokerProcess[] = [];
const clients: MqClient[] = [];
const CONFIG: Readonly<Record<string, string>> = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '6000' };
const t0 = Date.now();
function step(what: string): void {
  if (process.env.MQ_E2E_TRACE) process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${what}\n`);
}
const sets = (config: Record<string, string>) => Object.entries(config).flatMap(([k, v]) => ['--config-set', `${k}=${v}`]);

afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  for (const p of procs) await p.kill().catch(() => undefined);
  await cleanup();
});

interface Quorum {
  leaderId: number;
  members: Array<{ id: number; voter: boolean }>;
}

interface Status {
  controllerId: number;
  brokers: Array<{ id: number; fenced: boolean }>;
  hosted: Array<{ topic: string; partition: number }>;
  underReplicated: unknown[];
}

describe('cluster: a single broker grows into a cluster in place', () => {
  it('keeps every record while it is joined by two brokers, replicated to them, and then killed', async () => {
    // A one-node cluster with data.
    const one = await startBroker({ args: ['--config-set', 'log.flush.policy=os'] });
    procs.push(one);
    const first = new MqClient({ bootstrap: [one.bootstrap], requestTimeoutMs: 5000 });
    const topic = uniqueName('grow');
    await first.admin().createTopic(topic, { numPartitions: 3, replicationFactor: 1 });
    const producer = first.producer({ acks: 'all' });
    for (let i = 0; i < 90; i++) await producer.send(topic, { partition: i % 3, key: `k${i}`, value: `v${i}` });
    await first.close();
    const refused = await runCli(['controller', 'add-voter', '--id', '2', '--address', '127.0.0.1:1', '-b', one.bootstrap]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/^mq: this broker is a one-node cluster with no Raft listener, so its quorum cannot grow yet: restart it with controller\.quorum\.voters=1@<host>:<raft port> and inter\.broker\.port=<port>/);

    // Restarted in place as a one-voter quorum that listens.
    const raft = new Map<number, number>();
    const interBroker = new Map<number, number>();
    for (const id of [1, 2, 3]) {
      raft.set(id, await freePort());
      interBroker.set(id, await freePort());
    }
    const founding = `1@127.0.0.1:${raft.get(1)}`;
    expect(await one.stop()).toBe(0);
    await one.restart({ args: ['--broker-id', '1', ...sets({ ...CONFIG, 'controller.quorum.voters': founding, 'inter.broker.port': String(interBroker.get(1)) })] });
    const client = new MqClient({ bootstrap: [one.bootstrap], requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 200 } });
    clients.push(client);
    const expected = [0, 1, 2].map((p) => Array.from({ length: 30 }, (_, i) => `v${i * 3 + p}`));
    expect(await readTopic(client, topic, 3, 'read_uncommitted', 90, 20_000)).toEqual(expected);
    step('restarted in place as a one-voter quorum that listens; records intact');

    // Brokers 2 and 3 join as combined broker,controller processes.
    const cli = (args: string[], timeoutMs = 60_000) => runCli([...args, '-b', one.bootstrap], { timeoutMs });
    const procOf = new Map<number, BrokerProcess>([[1, one]]);
    for (const id of [2, 3]) {
      const p = await startBroker({
        dataDir: await makeTempDir(`mq-grow-${id}-`),
        args: [
          '--broker-id',
          String(id),
          ...sets({
            ...CONFIG,
            'controller.quorum.voters': founding,
            'controller.raft.address': `127.0.0.1:${raft.get(id)}`,
            'controller.quorum.bootstrap.servers': `127.0.0.1:${interBroker.get(1)}`,
            'inter.broker.port': String(interBroker.get(id)),
          }),
        ],
        startTimeoutMs: 30_000,
      });
      procs.push(p);
      procOf.set(id, p);
      const r = await cli(['controller', 'add-voter', '--id', String(id), '--address', `127.0.0.1:${raft.get(id)}`]);
      expect(r.stderr).toBe('');
    }
    const status = async (id: number): Promise<Status> => {
      const res = await fetch(`${procOf.get(id)!.httpUrl}/cluster`, { signal: AbortSignal.timeout(3000) });
      return (await res.json()) as Status;
    };
    await waitFor(async () => (await status(1)).brokers.filter((b) => !b.fenced).length === 3, { timeout: 30_000, interval: 200, message: 'brokers 1, 2, 3 registered and unfenced' });
    step('brokers 2 and 3 added and unfenced');
    const q = JSON.parse((await cli(['controller', 'describe', '--format', 'json'])).stdout) as Quorum;
    expect(q.members.filter((m) => m.voter).map((m) => m.id).sort()).toEqual([1, 2, 3]);

    // Every partition broker 1 holds (internal topics too) to replicas 1, 2, 3: one by the CLI, the rest in one HTTP request.
    const hosted = (await status(1)).hosted;
    expect(hosted.filter((h) => h.topic === topic)).toHaveLength(3);
    const byCli = await cli(['topic', 'reassign', topic, '--partition', '0', '--replicas', '1,2,3', '--allow-rf-change', '--wait'], 90_000);
    expect(byCli.stderr).toBe('');
    const rest3 = hosted.filter((h) => !(h.topic === topic && h.partition === 0)).map((h) => ({ topic: h.topic, partition: h.partition, replicas: [1, 2, 3] }));
    const res = await fetch(`${one.httpUrl}/reassignments`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ partitions: rest3, allow_replication_factor_change: true }),
      signal: AbortSignal.timeout(60_000),
    });
    expect(res.status).toBe(200);
    const answered = (await res.json()) as { results: Array<{ error?: unknown }> };
    expect(answered.results.filter((r) => r.error)).toEqual([]);
    step(`reassignments of ${hosted.length} partitions started`);
    await waitFor(
      async () => {
        const moving = ((await (await fetch(`${one.httpUrl}/reassignments`)).json()) as { reassignments: unknown[] }).reassignments.length;
        const [s2, s3] = [await status(2), await status(3)];
        return moving === 0 && s2.hosted.length === hosted.length && s3.hosted.length === hosted.length && (await status(1)).underReplicated.length === 0;
      },
      { timeout: 90_000, interval: 300, message: 'every partition replicated to brokers 2 and 3' },
    );
    step('every partition has replicas 1, 2, 3');

    // The combined process 1 leaves the quorum, then dies.
    const removed = await cli(['controller', 'remove-voter', '--id', '1']);
    expect(removed.stderr).toBe('');
    expect(removed.stdout).toBe('removed controller 1: voters 2, 3 (stop its process now)\n');
    await one.kill();
    step('broker 1 removed from the quorum and killed');
    const rest = new MqClient({ bootstrap: [2, 3].map((id) => procOf.get(id)!.bootstrap), requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 500, retries: 200 } });
    clients.push(rest);
    const q2 = await waitFor<Quorum | undefined>(
      async () => {
        const r = await runCli(['controller', 'describe', '--format', 'json', '-b', procOf.get(2)!.bootstrap]);
        const d = r.code === 0 ? (JSON.parse(r.stdout) as Quorum) : undefined;
        return d && [2, 3].includes(d.leaderId) ? d : undefined;
      },
      { timeout: 30_000, interval: 300, message: 'controller 2 or 3 active' },
    );
    expect(q2!.members.filter((m) => m.voter).map((m) => m.id).sort()).toEqual([2, 3]);
    expect(await readTopic(rest, topic, 3, 'read_uncommitted', 90, 30_000)).toEqual(expected);

    // The quorum {2, 3} commits: a new topic, acks=all records through it.
    const next = uniqueName('grown');
    await rest.admin().createTopic(next, { numPartitions: 2, replicationFactor: 2 });
    const p2 = rest.producer({ acks: 'all' });
    for (let i = 0; i < 20; i++) await p2.send(next, { partition: i % 2, value: `n${i}` });
    expect(await readTopic(rest, next, 2, 'read_uncommitted', 20, 20_000)).toEqual([0, 1].map((p) => Array.from({ length: 10 }, (_, i) => `n${i * 2 + p}`)));
  }, 300_000);
});
