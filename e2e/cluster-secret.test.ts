/**
 * Brokers and controllers authenticate each other (cluster.secret.file),
 * against a real 3-broker cluster: with the secret the cluster works
 * (produce acks=all, consume); a stranger on the inter-broker port (a
 * ControllerForward, a replica fetch) or the Raft port (a forged Hello and a
 * higher-term heartbeat) without the proof is closed and changes nothing;
 * a broker with another secret cannot join while the others keep serving.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { WebSocket } from 'ws';
import { MqClient } from '@mq/client';
import { Connection } from '@mq/client/internal';
import { MessageType, encodeEnvelope, message } from '@mq/consensus';
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorCodeFromNumber } from '@mq/protocol/errors';
import { encodeRequest, type mq } from '@mq/protocol/wire';
import { CLI_BIN, cleanup, makeTempDir, uniqueName, waitFor } from './src/harness.js';
import { FAST_FAILOVER_CONFIG, freePort, leaderFor, startCluster, type TestCluster } from './src/cluster-harness.js';

let cluster: TestCluster | undefined;
const spawned: ChildProcess[] = [];

afterAll(async () => {
  for (const p of spawned) p.kill('SIGKILL');
  await cluster?.close();
  await cleanup();
});

async function secretFile(dir: string, name: string, secret: string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return file;
}

/** Sends `frames` on a raw WebSocket to `port` (no cluster proof); resolves with how the broker closed it and what it answered. */
function raw(port: number, frames: Uint8Array[]): Promise<{ code: number; reason: string; answers: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}`, { perMessageDeflate: false });
    let answers = 0;
    const timer = setTimeout(() => reject(new Error('the broker did not close the connection')), 10_000);
    ws.on('open', () => {
      for (const f of frames) ws.send(f);
    });
    ws.on('message', () => answers++);
    ws.on('error', () => undefined);
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString(), answers });
    });
  });
}

/** Protobuf of a raft.Envelope holding only a Hello (field 1); concatenated with encodeEnvelope's bytes it is one Envelope with both. */
function helloBytes(clusterId: string, from: number, to: number): Buffer {
  const id = Buffer.from(clusterId);
  const hello = Buffer.concat([Buffer.from([0x0a, id.length]), id, Buffer.from([0x10, from, 0x18, to])]);
  return Buffer.concat([Buffer.from([0x0a, hello.length]), hello]);
}

async function metric(httpUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${httpUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  if (!line) throw new Error(`no ${name} in /metrics`);
  return Number(line.split(' ')[1]);
}

function grep(lines: readonly string[], re: RegExp): string[] {
  return lines.filter((l) => re.test(l));
}

describe('cluster: brokers and controllers authenticate each other (cluster.secret.file)', () => {
  it('works with the secret; unauthenticated frames on the inter-broker and Raft ports change nothing; a broker with another secret cannot join', async () => {
    const dir = await makeTempDir('mq-secret-');
    const good = await secretFile(dir, 'cluster.secret', 'the-cluster-secret-of-this-test-0123456789');
    const bad = await secretFile(dir, 'other.secret', 'another-secret-that-is-long-enough-0123456');
    cluster = await startCluster({
      brokers: 3,
      // A broker-only process (id 4) that follows the metadata log through the controller channel, with the secret too.
      observers: 1,
      proxies: false,
      // Slow failure detection: the paused follower stays in the ISR while the forged fetch is tried.
      config: { ...FAST_FAILOVER_CONFIG, 'broker.session.timeout.ms': '20000', 'replica.lag.time.max.ms': '20000', 'cluster.secret.file': good },
    });
    const c = cluster;
    await c.waitHealthy();
    const client = new MqClient({ bootstrap: c.bootstrap });
    try {
      // 1. The cluster works over authenticated links: acks=all produce to RF 3, consume.
      const topic = uniqueName('secret');
      await client.admin().createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '3' } });
      // And one whose replicas include the broker-only process (its fetches and the controller channel authenticate too).
      const wide = uniqueName('secret-wide');
      await client.admin().createTopic(wide, { numPartitions: 4, replicationFactor: 4 });
      await c.waitHealthy(30_000, [wide]);
      await c.waitHealthy(30_000, [topic]);
      const producer = client.producer({ acks: 'all' });
      const first = await producer.send(topic, { value: 'over-authenticated-links', partition: 0 });
      const consumer = client.consumer({ maxWaitMs: 100 });
      consumer.assign([{ topic, partition: 0, offset: first.offset }]);
      expect((await consumer.poll(10_000)).map((r) => r.value!.toString())).toEqual(['over-authenticated-links']);
      await consumer.close();

      // 2. A stranger on the inter-broker port: a ControllerForward creating a topic, without the proof.
      const controller = (await c.anyStatus()).controllerId;
      const forward = encodeRequest({
        correlationId: 1,
        apiVersion: 0,
        clientId: 'stranger',
        controllerForward: { brokerId: 2, command: Buffer.from(JSON.stringify({ type: 'createTopic', name: 'fz-no-proof', topicId: 'fz1', numPartitions: 1, replicationFactor: 1, configs: {} })), timeoutMs: 5000 },
      });
      const refusedForward = await raw(c.broker(controller).interBrokerPort, [forward]);
      expect(refusedForward.code).toBe(1008);
      expect(refusedForward.reason).toMatch(/^CLUSTER_AUTHENTICATION_FAILED: controllerForward before cluster authentication/);
      // A client Connection (its handshake first) is refused the same way.
      await expect(
        Connection.open({ address: `127.0.0.1:${c.broker(controller).interBrokerPort}`, clientId: 'stranger', connectTimeoutMs: 5000, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 }),
      ).rejects.toMatchObject({ code: 'CLUSTER_AUTHENTICATION_FAILED' });
      // One log line for the refused connection (pino writes asynchronously: wait for it).
      await waitFor(() => grep(c.broker(controller).process.output, /inter-broker connection refused: controllerForward before cluster authentication/).length === 1, { timeout: 5000, message: 'one log line for the refusal' });

      // 3. A forged replica fetch on the leader's inter-broker port: with one follower SIGSTOPped an acks=all write
      // waits; the fetch naming that follower at the log end must not move the high watermark and release it.
      const leader = await leaderFor(c, topic, 0);
      const replicas = (await client.admin().describeTopic(topic)).partitions[0]!.replicas;
      const follower = replicas.find((id) => id !== leader)!;
      c.pause(follower);
      const leaderConn = await Connection.open({ address: c.broker(leader).process.bootstrap, clientId: 'producer', connectTimeoutMs: 5000, requestTimeoutMs: 30_000, maxResponseBytes: 64 << 20 });
      let settled = false;
      const produce = leaderConn
        .request('produce', { acks: -1, timeoutMs: 25_000, topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: Buffer.from('never-replicated') }]) }] }] })
        .then(
          (r) => errorCodeFromNumber(r.topics![0]!.partitions![0]!.errorCode ?? 0) as string,
          (err: { code?: string }) => err.code ?? 'UNKNOWN',
        )
        .finally(() => (settled = true));
      await new Promise((r) => setTimeout(r, 500));
      expect(settled).toBe(false);
      const hwBefore = (await c.status(leader)).hosted.find((h) => h.topic === topic)!.highWatermark;
      const fetch: mq.IRequestFrame = {
        correlationId: 7,
        apiVersion: 0,
        clientId: `broker-${follower}`,
        fetch: {
          replicaId: follower,
          replicaEpoch: -1,
          maxWaitMs: 0,
          minBytes: 0,
          maxBytes: 1 << 20,
          topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: hwBefore + 1, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: 0, logStartOffset: 0 }] }],
        },
      };
      const refusedFetch = await raw(c.broker(leader).interBrokerPort, [encodeRequest(fetch)]);
      expect(refusedFetch).toMatchObject({ code: 1008, reason: expect.stringMatching(/^CLUSTER_AUTHENTICATION_FAILED: fetch before cluster authentication/) });
      await new Promise((r) => setTimeout(r, 1500));
      expect(settled).toBe(false);
      expect((await c.status(leader)).hosted.find((h) => h.topic === topic)!.highWatermark).toBe(hwBefore);
      c.resume(follower);
      expect(await produce).toBe('NONE');
      leaderConn.close();

      // 4. A forged Raft Hello (the right quorum id, a voter's id, from that voter's address: all of them are on
      // 127.0.0.1) with a higher-term heartbeat: refused before Raft sees it; the leader keeps its term.
      const voters = c.controllerIds.map((id) => `${id}@127.0.0.1`).join(',');
      const quorumId = `mq-metadata-${createHash('sha256').update(voters).digest('hex').slice(0, 16)}`;
      const raftLeader = await c.activeController();
      const claimed = c.controllerIds.find((id) => id !== raftLeader)!;
      const termBefore = await metric(c.broker(raftLeader).process.httpUrl, 'mq_raft_term');
      const forged = Buffer.concat([
        helloBytes(quorumId, claimed, raftLeader),
        encodeEnvelope([message({ type: MessageType.Heartbeat, from: claimed, to: raftLeader, term: termBefore + 5 })]),
      ]);
      const refusedRaft = await raw(c.broker(raftLeader).raftPort, [forged]);
      expect(refusedRaft).toMatchObject({ code: 4004, reason: expect.stringContaining('CLUSTER_AUTHENTICATION_FAILED') });
      await new Promise((r) => setTimeout(r, 1000));
      expect(await metric(c.broker(raftLeader).process.httpUrl, 'mq_raft_term')).toBe(termBefore);
      expect(await c.activeController()).toBe(raftLeader);

      // 5. A broker-only process with another secret: it cannot join (one clear line on each side); the rest keep serving.
      const outsiderDir = await makeTempDir('mq-outsider-');
      const bootstrap = c.controllerIds.map((id) => `127.0.0.1:${c.broker(id).interBrokerPort}`).join(',');
      const args = ['broker', 'start', '--data-dir', outsiderDir, '--port', String(await freePort()), '--http-port', String(await freePort()), '--broker-id', '9'];
      for (const [k, v] of Object.entries({ 'process.roles': 'broker', 'controller.quorum.bootstrap.servers': bootstrap, 'inter.broker.port': String(await freePort()), 'cluster.secret.file': bad })) {
        args.push('--config-set', `${k}=${v}`);
      }
      const outsider = spawn(process.execPath, [CLI_BIN, ...args], { cwd: outsiderDir, stdio: ['ignore', 'pipe', 'pipe'] });
      spawned.push(outsider);
      const out: string[] = [];
      const collect = (d: Buffer) => out.push(...d.toString('utf8').split('\n'));
      outsider.stdout!.on('data', collect);
      outsider.stderr!.on('data', collect);
      await waitFor(() => grep(out, /did not prove the cluster secret/).length > 0, { timeout: 20_000, message: 'the outsider logs that the controller did not prove the secret' }).catch((err: Error) => {
        throw new Error(`${err.message}\n${out.slice(-20).join('\n')}`);
      });
      expect(grep(out, /did not prove the cluster secret/)[0]).toMatch(/CLUSTER_AUTHENTICATION_FAILED.*node \d did not prove the cluster secret \(check cluster.secret.file on both\)/);
      await waitFor(() => c.controllerIds.some((id) => grep(c.broker(id).process.output, /inter-broker connection closed before it proved the cluster secret/).length > 0), {
        timeout: 10_000,
        message: 'a controller logs the connection that did not prove the secret',
      });
      const m = await producer.send(topic, { value: 'still-serving', partition: 0 });
      expect(m.offset).toBeGreaterThan(first.offset);
      const meta = await client.admin().describeCluster();
      expect(meta.brokers.map((b) => b.id).sort()).toEqual([1, 2, 3, 4]);
      expect(await client.admin().listTopics()).not.toContain('fz-no-proof');
      outsider.kill('SIGKILL');
    } finally {
      await client.close().catch(() => undefined);
    }
  }, 180_000);
});
