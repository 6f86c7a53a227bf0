/**
 * A cluster with a dedicated controller quorum: 3 controller-only processes
 * (process.roles=controller: Raft voters, no partitions) and 3 broker-only
 * processes (process.roles=broker: they follow the metadata log from the
 * active controller and heartbeat with those fetches). As a script:
 *   - no partition is placed on a controller;
 *   - producers (acks=all, RF=3) run while the active controller is SIGKILLed:
 *     a new one takes over and produce/fetch carry on;
 *   - a broker-only process is SIGKILLed: it is fenced and its partitions move
 *     within the session timeout;
 *   - its whole data directory (metadata included) is wiped and it restarts:
 *     it rebuilds from the controller and the leaders and rejoins every ISR;
 *   - another broker-only process crashes and restarts at once: refused while
 *     its old run's session lasts (it says so and retries), then registered;
 *   - a second process with a live broker's id is refused with
 *     DUPLICATE_BROKER_REGISTRATION and exits with a one-line error;
 *   - a controller whose metadata log was deleted refuses to start as a voter;
 *   - every acknowledged record is read back at its offset.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { cleanup, makeTempDir, startBroker, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, freePort, leaderFor, startAckedPump, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
const t0 = Date.now();
/** Progress on stderr with MQ_E2E_TRACE=1 (which step a failure or a slow run is in). */
function step(what: string): void {
  if (process.env.MQ_E2E_TRACE) process.stderr.write(`[${((Date.now() - t0) / 1000).toFixed(1)} s] ${what}\n`);
}

/**
 * The broker session the controllers judge. Step 4 restarts a crashed broker at once and checks that its new
 * run is refused while the old run's session lasts: the new process must start and register before that
 * session runs out. On a loaded 2-core machine (load 15-22) start-up alone takes 3-12 s (measured: 12.2 s from
 * spawn to registered at load 22), so FAST_FAILOVER_CONFIG's 2 s session made the check a race with start-up
 * that CI lost; here the session is well above start-up. The duplicate process of step 6 keeps the 2 s retry
 * grace of FAST_FAILOVER_CONFIG (its own setting): a live holder refuses it whatever the grace.
 */
const SESSION_MS = 20_000;
const CONFIG: Readonly<Record<string, string>> = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': String(SESSION_MS) };

afterAll(async () => {
  await cluster?.close();
  await cleanup();
});

describe('cluster: dedicated controllers and broker-only processes', () => {
  it('survives the active controller and a broker dying, rebuilds a wiped broker, refuses a duplicate id', async () => {
    cluster = await startCluster({ controllers: 3, brokers: 3, config: CONFIG });
    const c = cluster;
    expect(c.controllerIds).toEqual([1, 2, 3]);
    expect(c.brokerIds).toEqual([4, 5, 6]);
    step('started');
    await c.waitHealthy();
    step('healthy');
    const status = await c.anyStatus();
    // Controllers do not register as brokers: nothing can be placed on them.
    expect(status.brokers.map((b) => b.id)).toEqual([4, 5, 6]);

    const topic = uniqueName('dedicated');
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 5000, retry: { initialDelayMs: 50, maxDelayMs: 300, retries: 1000 } });
    try {
      await client.admin().createTopic(topic, { numPartitions: 3, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
      await c.waitHealthy(30_000, [topic]);
      const described = await client.admin().describeTopic(topic);
      for (const p of described.partitions) expect([...p.replicas].sort()).toEqual([4, 5, 6]);

      const producer = client.producer({ acks: 'all', lingerMs: 2, maxInFlight: 1, deliveryTimeoutMs: 60_000 });
      const pump = startAckedPump(producer, topic, 3);
      const acked = pump.acked;
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([0, 1, 2].map((partition) => ({ topic, partition, offset: 0 })));
      const read = new Map<string, string>();
      let reading = true;
      const reader = (async () => {
        while (reading) for (const r of await consumer.poll(200)) read.set(`${r.partition}:${r.offset}`, r.value!.toString());
      })();

      // 1. The active controller dies: another voter takes over; the brokers keep serving.
      await waitFor(() => acked.length >= 300, { timeout: 20_000, message: 'acks before the controller is killed' });
      step('producing');
      const active = await c.activeController();
      step(`killing active controller ${active}`);
      const killedAt = Date.now();
      await c.kill(active);
      const next = await c.activeController([active]);
      expect(next).not.toBe(active);
      for (const p of [0, 1, 2]) {
        await waitFor(() => acked.some((a) => a.partition === p && a.at > killedAt + 100), { timeout: 15_000, message: `acks on partition ${p} after the controller died` });
      }
      // The brokers follow the new controller (their metadata fetches go there).
      await waitFor(async () => (await c.status(4)).controllerId === next, { timeout: 10_000, message: `broker 4 follows controller ${next}` });

      step(`controller ${next} took over`);
      // 2. A broker-only process dies: fenced, its leaderships move, within the session timeout (+ a check round).
      const victim = await leaderFor(c, topic, 0);
      const diedAt = Date.now();
      await c.kill(victim);
      await waitFor(
        async () => {
          const s = await c.status(next);
          const fenced = s.brokers.some((b) => b.id === victim && b.fenced);
          const d = await client.admin().describeTopic(topic);
          return fenced && d.partitions.every((p) => p.leader !== victim && p.leader >= 0);
        },
        { timeout: SESSION_MS + 10_000, interval: 100, message: `broker ${victim} fenced and its partitions moved` },
      );
      const movedMs = Date.now() - diedAt;
      step(`broker ${victim} fenced, partitions moved in ${movedMs} ms`);
      // Driven by the session timeout, not by anything slower; the margin is for a loaded 2-core CI machine.
      expect(movedMs).toBeLessThan(SESSION_MS + 6000);
      const afterFence = acked.length;
      await waitFor(() => acked.length >= afterFence + 200, { timeout: 15_000, message: 'acks with a broker dead' });

      // 3. Its whole data directory (partition logs, metadata, meta.properties) is wiped: it rebuilds and rejoins.
      await c.wipeAndRestart(victim, true);
      step(`broker ${victim} wiped and restarted`);
      await c.waitHealthy(30_000, [topic]).catch(async (err: unknown) => {
        throw new Error(`${String(err)}\n${JSON.stringify(await c.anyStatus().catch(() => null))}\n${c.broker(victim).process.output.slice(-40).join('\n')}`);
      });
      step(`broker ${victim} back in the ISR`);
      await waitFor(
        async () => {
          const s = await c.status(victim);
          return s.hosted.filter((h) => h.topic === topic).length === 3 && s.hosted.every((h) => h.logEndOffset > 0) ? s : undefined;
        },
        { timeout: 20_000, message: `broker ${victim} rebuilt its replicas` },
      );

      // 4. Another broker-only process crashes and is restarted at once: its old run is still registered and
      // (as far as the controller knows) alive, so the new run is refused until that session expires, then gets in.
      const crashed = c.brokerIds.find((id) => id !== victim)!;
      await c.kill(crashed);
      const restartedAt = Date.now();
      await c.restart(crashed);
      const restartMs = Date.now() - restartedAt;
      step(`broker ${crashed} restarted after a crash, registered after ${restartMs} ms`);
      const refusedOnce = c.broker(crashed).process.output.some((l) => l.includes('held by another live run') && l.includes('session expires'));
      expect({ refused: refusedOnce, restartMs, sessionMs: SESSION_MS }).toEqual({ refused: true, restartMs: expect.any(Number), sessionMs: SESSION_MS });
      await c.waitHealthy(30_000, [topic]);
      step(`broker ${crashed} back in the ISR`);

      // 5. The old controller comes back as a voter.
      await c.restart(active);

      await pump.stop();
      await waitFor(() => acked.every((a) => read.has(`${a.partition}:${a.offset}`)), { timeout: 20_000, message: 'the consumer read every acknowledged record' });
      reading = false;
      await reader;
      await consumer.close();
      for (const a of acked) expect(read.get(`${a.partition}:${a.offset}`)).toBe(`v${a.seq}`);

      step('read back');
      // 6. A second process with a live broker's id is refused, and exits with one line saying why.
      const taken = c.brokerIds.find((id) => id !== victim)!;
      const bootstrap = c.controllerIds.map((id) => `127.0.0.1:${c.broker(id).interBrokerPort}`).join(',');
      const dupArgs = ['--broker-id', String(taken), '--config-set', 'process.roles=broker', '--config-set', `controller.quorum.bootstrap.servers=${bootstrap}`, ...Object.entries(FAST_FAILOVER_CONFIG).flatMap(([k, v]) => ['--config-set', `${k}=${v}`])];
      const dup = await startBroker({ dataDir: await makeTempDir('mq-dup-'), port: await freePort(), httpPort: await freePort(), args: dupArgs, startTimeoutMs: 40_000 }).then(
        () => 'started',
        (err: Error) => err.message,
      );
      expect(dup).toMatch(/exited with code [1-9]/);
      expect(dup).toMatch(/mq: broker id \d+ is already registered by another running process/);
      expect((await c.anyStatus()).brokers.find((b) => b.id === taken)!.fenced).toBe(false);

      step('duplicate refused');
      // 7. A controller whose metadata log is gone refuses to start as a voter.
      const lost = c.controllerIds.find((id) => id !== next)!;
      await c.kill(lost);
      await rm(path.join(c.broker(lost).dataDir, '__cluster_metadata'), { recursive: true, force: true });
      const refused = await c.restart(lost).then(
        () => 'started',
        (err: Error) => err.message,
      );
      expect(refused).toMatch(/refuses to start as a voter/);
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 240_000);
});
