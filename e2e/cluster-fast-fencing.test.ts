/**
 * Issue 21, failover without waiting out the session: real processes, real
 * SIGKILL / SIGSTOP, no timing assertions.
 *
 * 1. A killed voter is fenced on the confirmed connection-loss hint (its Raft
 *    port refuses the redial), with a session timeout far longer than the
 *    test's waits, and acks=all goes on on the partitions it led and followed.
 *    The same for the killed active controller: the survivors forget it and
 *    elect a new one, which fences it; and for a killed broker-only process,
 *    whose metadata fetch connection closes and whose port refuses a probe.
 * 2. A connection loss that is not confirmed (the links are cut, the port still
 *    accepts) fences nobody.
 * 3. A paused leader: a producer's request left unanswered by it moves to the
 *    new leader once the controller fences the paused broker (its session
 *    expired), while the old leader is still paused, not after the request
 *    timeout.
 * 4. A paused follower leaves the ISR (fenced at its session) and acks=all goes
 *    on on its partitions.
 */
import { MqClient } from '@mq/client';
import { cleanup, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;

afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});
afterAll(async () => {
  await cleanup();
});

/** Far beyond every wait of these tests: only the connection-loss hint can fence a broker in them. */
const LONG_SESSION = { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '120000', 'replica.lag.time.max.ms': '120000' };

async function createTopic(c: TestCluster, topic: string, partitions: number): Promise<void> {
  const admin = new MqClient({ bootstrap: c.bootstrap });
  try {
    await admin.admin().createTopic(topic, { numPartitions: partitions, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
    await c.waitHealthy(30_000, [topic]);
  } finally {
    await admin.close();
  }
}

async function fenced(c: TestCluster, id: number, exclude: number[]): Promise<boolean> {
  const s = await c.anyStatus(exclude);
  return s.brokers.find((b) => b.id === id)?.fenced === true;
}

/** The controllers' fence and unfence decisions about broker `id`, from every live broker's log (JSON lines). */
function fencingEvents(c: TestCluster, id: number): Array<{ fenced: boolean; gone: boolean; brokerEpoch: number; time: number }> {
  const out: Array<{ fenced: boolean; gone: boolean; brokerEpoch: number; time: number }> = [];
  for (const b of c.ids) {
    for (const line of c.broker(b).process.output) {
      if (!line.includes(`fencing broker ${id}`)) continue;
      // (pino's child loggers repeat "broker": the last one, the subject, wins in JSON.parse)
      let l: { msg?: string; broker?: number; brokerEpoch?: number; gone?: boolean; time?: number };
      try {
        l = JSON.parse(line) as typeof l;
      } catch {
        continue;
      }
      if (l.broker !== id || typeof l.brokerEpoch !== 'number' || !l.msg) continue;
      const time = l.time ?? 0;
      if (l.msg.startsWith(`fencing broker ${id}:`)) out.push({ fenced: true, gone: l.gone === true, brokerEpoch: l.brokerEpoch, time });
      else if (l.msg.startsWith(`unfencing broker ${id}:`)) out.push({ fenced: false, gone: false, brokerEpoch: l.brokerEpoch, time });
    }
  }
  return out.sort((a, b) => a.time - b.time);
}

describe('cluster: a dead broker is fenced without waiting out its session (issue 21)', () => {
  it('a killed voter, then the killed active controller, are fenced on the refused redial; acks=all goes on on every partition', async () => {
    // No proxies: a killed broker's own port must refuse (a proxy would accept and then close).
    cluster = await startCluster({ brokers: 3, config: LONG_SESSION, proxies: false });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('hint');
    await createTopic(c, topic, 3);
    const client = new MqClient({ bootstrap: c.bootstrap });
    const producer = client.producer({ acks: 'all', idempotent: true });
    try {
      for (let p = 0; p < 3; p++) await producer.send(topic, { value: `before-${p}`, partition: p });

      // A voter that is not the active controller.
      const controller = await c.activeController();
      const victim = c.ids.find((id) => id !== controller)!;
      await c.kill(victim);
      await waitFor(() => fenced(c, victim, [victim]), { timeout: 60_000, message: `broker ${victim} fenced` });
      for (let p = 0; p < 3; p++) await producer.send(topic, { value: `after-kill-${p}`, partition: p });
      await c.restart(victim);
      await c.waitHealthy(60_000, [topic]);
      // The dead run's registration stayed fenced: the restarted process's Raft messages (heard before it registers
      // again) did not unfence it; only its new registration (a new broker epoch) was unfenced.
      const events = fencingEvents(c, victim);
      const gone = events.filter((e) => e.fenced && e.gone);
      expect(gone.length).toBeGreaterThan(0);
      const revived = events.filter((e) => !e.fenced && gone.some((g) => g.brokerEpoch === e.brokerEpoch && g.time <= e.time));
      expect(revived).toEqual([]);
      expect(events.some((e) => !e.fenced && e.time >= gone[0]!.time)).toBe(true);

      // The active controller: the survivors forget it, elect one of themselves, and that one fences it.
      const active = await c.activeController();
      await c.kill(active);
      await c.activeController([active]);
      await waitFor(() => fenced(c, active, [active]), { timeout: 60_000, message: `the old controller ${active} fenced` });
      for (let p = 0; p < 3; p++) await producer.send(topic, { value: `after-controller-kill-${p}`, partition: p });
    } finally {
      await producer.close();
      await client.close();
    }
  }, 120_000);

  it('a killed broker-only process is fenced once its metadata fetch connection closes and its port refuses', async () => {
    cluster = await startCluster({ brokers: 3, observers: 1, config: LONG_SESSION, proxies: false });
    const c = cluster;
    await c.waitHealthy();
    const observer = 4;
    const topic = uniqueName('observer-hint');
    await createTopic(c, topic, 4);
    // The observer's metadata long poll is running (it has applied the new topic) before it is killed: the hint is
    // that connection closing.
    await waitFor(async () => (await fetch(`${c.broker(observer).process.httpUrl}/topics/${topic}`).catch(() => undefined))?.status === 200, {
      timeout: 30_000,
      message: `broker ${observer} applied the creation of ${topic}`,
    });
    await c.kill(observer);
    await waitFor(() => fenced(c, observer, [observer]), { timeout: 60_000, message: `broker ${observer} fenced` });
    const client = new MqClient({ bootstrap: c.ids.filter((id) => id !== observer).map((id) => c.broker(id).process.bootstrap) });
    const producer = client.producer({ acks: 'all', idempotent: true });
    try {
      for (let p = 0; p < 4; p++) await producer.send(topic, { value: `after-kill-${p}`, partition: p });
    } finally {
      await producer.close();
      await client.close();
    }
  }, 120_000);

  it('a lost connection that is not confirmed (links cut, the port still accepts) fences nobody', async () => {
    cluster = await startCluster({ brokers: 3, config: LONG_SESSION });
    const c = cluster;
    await c.waitHealthy();
    const controller = await c.activeController();
    const victim = c.ids.find((id) => id !== controller)!;
    // Every link of the victim is cut: connections reset, redials accepted by the proxy and closed at once.
    c.isolate(victim);
    let seenFenced = 0;
    const deadline = Date.now() + 4000;
    while (Date.now() < deadline) {
      if (await fenced(c, victim, [victim]).catch(() => false)) seenFenced++;
      await new Promise((r) => setTimeout(r, 100));
    }
    c.healAll();
    expect(seenFenced).toBe(0);
    await c.waitHealthy(30_000);
  }, 120_000);

  it('a producer request left unanswered by a paused leader moves to the new leader while the old one is still paused', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('paused-leader');
    await createTopic(c, topic, 1);
    const leader = await leaderFor(c, topic, 0);
    // Request and ack timeouts far beyond the test's: only the leader check can move the request.
    const client = new MqClient({ bootstrap: c.bootstrap, requestTimeoutMs: 120_000 });
    const producer = client.producer({ acks: 'all', idempotent: true, ackTimeoutMs: 120_000 });
    try {
      await producer.send(topic, { value: 'before', partition: 0 });
      c.pause(leader);
      let resumed = false;
      try {
        const r = await producer.send(topic, { value: 'during-pause', partition: 0 });
        expect(resumed).toBe(false);
        expect(r.offset).toBe(1);
      } finally {
        resumed = true;
        c.resume(leader);
      }
      await c.waitHealthy(60_000, [topic]);
      const r = await producer.send(topic, { value: 'after', partition: 0 });
      expect(r.offset).toBe(2);
    } finally {
      await producer.close();
      await client.close();
    }
  }, 120_000);

  it('a paused follower leaves the ISR and acks=all goes on on its partitions', async () => {
    cluster = await startCluster({ brokers: 3, config: FAST_FAILOVER_CONFIG });
    const c = cluster;
    await c.waitHealthy();
    const topic = uniqueName('paused-follower');
    await createTopic(c, topic, 1);
    const leader = await leaderFor(c, topic, 0);
    const controller = await c.activeController();
    const follower = c.ids.find((id) => id !== leader && id !== controller) ?? c.ids.find((id) => id !== leader)!;
    const client = new MqClient({ bootstrap: c.bootstrap });
    const producer = client.producer({ acks: 'all', idempotent: true });
    try {
      await producer.send(topic, { value: 'before', partition: 0 });
      c.pause(follower);
      try {
        for (let i = 0; i < 5; i++) await producer.send(topic, { value: `during-${i}`, partition: 0 });
        const s = await c.status(await c.activeController([follower]));
        expect(s.underReplicated.find((u) => u.topic === topic)?.isr ?? []).not.toContain(follower);
      } finally {
        c.resume(follower);
      }
      await c.waitHealthy(60_000, [topic]);
    } finally {
      await producer.close();
      await client.close();
    }
  }, 120_000);
});
