#!/usr/bin/env node
// Cluster benchmark: a local 3-broker cluster (three `mq broker start` processes, each a controller voter).
//  1. Produce throughput and latency, one partition per config, configs interleaved over rounds:
//     RF1 acks=1, RF3 acks=1, RF3 acks=all (min.insync.replicas=2).
//  2. Failover: SIGKILL the leader of an RF3 partition, time until the first acks=all produce on it succeeds
//     (a send started right after the kill, retried by the client), p50/p99 over --kills kills.
//  3. With --http (instead of 1 and 2): HTTP produce and read latency on the partition's leader's HTTP port vs a
//     non-leader's (which forwards to the leader), sequential requests, modes interleaved over rounds.
//   node packages/broker/bench/cluster-bench.mjs [--seconds 3] [--rounds 3] [--kills 10] [--value-bytes 100]
//   node packages/broker/bench/cluster-bench.mjs --http [--rounds 5] [--http-requests 200]
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { MqClient } from '@mq/client';
import { waitFor as waitUntil } from './bench-util.mjs';

const { values: a } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '3' },
    kills: { type: 'string', default: '10' },
    'value-bytes': { type: 'string', default: '100' },
    window: { type: 'string', default: '2000' },
    'session-ms': { type: 'string', default: '2000' },
    'failover-only': { type: 'boolean', default: false },
    http: { type: 'boolean', default: false },
    'http-requests': { type: 'string', default: '200' },
  },
});
const SECONDS = Number(a.seconds);
const ROUNDS = Number(a.rounds);
const KILLS = Number(a.kills);
const VALUE = Buffer.alloc(Number(a['value-bytes']), 'x');
const WINDOW = Number(a.window);
const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../cli/dist/bin.js');

const free = () => new Promise((r) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => { const s = [...xs].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN; };
const median = (xs) => pct(xs, 50);

const root = mkdtempSync(path.join(tmpdir(), 'mq-cluster-bench-'));
const ids = [1, 2, 3];
const ports = {};
for (const id of ids) ports[id] = { raft: await free(), client: await free(), http: await free() };
const voters = ids.map((id) => `${id}@127.0.0.1:${ports[id].raft}`).join(',');
const procs = {};
const config = ['broker.session.timeout.ms=' + a['session-ms'], 'controller.tick.ms=50', 'replica.lag.time.max.ms=5000', 'log.flush.policy=os', 'leader.imbalance.check.interval.ms=3600000'];

function startBroker(id) {
  const child = spawn(process.execPath, [BIN, 'broker', 'start', '--broker-id', String(id), '--data-dir', path.join(root, `b${id}`), '--port', String(ports[id].client), '--http-port', String(ports[id].http), '--controller-voters', voters, ...config.flatMap((c) => ['--config-set', c])], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MQ_LOG_LEVEL: 'warn' } });
  procs[id] = child;
  // Broker logs (warn and above) go to <root>/b<id>.log, kept when the run fails.
  const log = createWriteStream(path.join(root, `b${id}.log`), { flags: 'a' });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return child;
}
async function status(id) {
  const res = await fetch(`http://127.0.0.1:${ports[id].http}/cluster`, { signal: AbortSignal.timeout(2000) });
  return res.json();
}
const waitFor = (fn, timeoutMs, what) => waitUntil(fn, timeoutMs, what, 50);
async function healthy(topics) {
  return waitFor(async () => {
    for (const id of ids) {
      if (procs[id].exitCode !== null || procs[id].signalCode !== null) continue;
      const s = await status(id).catch(() => null);
      if (!s || s.controllerId < 0) continue;
      const ok = s.brokers.length === 3 && s.brokers.every((b) => !b.fenced) && !s.underReplicated.some((u) => topics.includes(u.topic)) && !s.offline.some((u) => topics.includes(u.topic));
      return ok;
    }
    return false;
  }, 60_000, 'a healthy cluster');
}
async function leaderOf(topic) {
  return waitFor(async () => {
    for (const id of ids) {
      if (procs[id].exitCode !== null || procs[id].signalCode !== null) continue;
      const s = await status(id).catch(() => null);
      if (s?.hosted.some((h) => h.topic === topic && h.role === 'leader')) return id;
    }
    return 0;
  }, 30_000, `a leader of ${topic}`);
}

/** HTTP on the leader's port vs a non-leader's (forwarded over the inter-broker connection), one request at a time. */
async function httpBench(admin) {
  const topic = 'bench-http';
  const N = Number(a['http-requests']);
  await admin.createTopic(topic, { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  await healthy([topic]);
  const leader = await leaderOf(topic);
  const other = ids.find((id) => id !== leader);
  const url = (id, p) => `http://127.0.0.1:${ports[id].http}${p}`;
  const body = JSON.stringify({ partition: 0, value: VALUE.toString() });
  const produce = (id, acks) => async () => {
    const res = await fetch(url(id, `/topics/${topic}/records?acks=${acks}`), { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (res.status !== 200) throw new Error(`produce to broker ${id}: ${res.status} ${await res.text()}`);
    await res.arrayBuffer().catch(() => undefined);
  };
  const read = (id) => async () => {
    const res = await fetch(url(id, `/topics/${topic}/partitions/0/records?offset=0&max_records=10`));
    if (res.status !== 200) throw new Error(`read from broker ${id}: ${res.status}`);
    await res.arrayBuffer();
  };
  const modes = [
    ['produce acks=all  leader    ', produce(leader, 'all')],
    ['produce acks=all  non-leader', produce(other, 'all')],
    ['produce acks=1    leader    ', produce(leader, '1')],
    ['produce acks=1    non-leader', produce(other, '1')],
    ['read 10 records   leader    ', read(leader)],
    ['read 10 records   non-leader', read(other)],
  ];
  const results = new Map(modes.map(([name]) => [name, { p50: [], p99: [] }]));
  for (let round = 0; round <= ROUNDS; round++) {
    for (const [name, op] of modes) {
      const lat = [];
      for (let i = 0; i < N; i++) {
        const t0 = performance.now();
        await op();
        lat.push(performance.now() - t0);
      }
      if (round === 0) continue; // warm-up
      results.get(name).p50.push(pct(lat, 50));
      results.get(name).p99.push(pct(lat, 99));
    }
  }
  console.log(`\nHTTP, leader ${leader} vs non-leader ${other} (forwards to the leader): ${ROUNDS} rounds x ${N} sequential requests per mode after a warm-up round, ${VALUE.length} B values, flush os; medians over rounds`);
  console.log('mode                            p50 ms   p99 ms   p50 vs leader');
  for (let i = 0; i < modes.length; i++) {
    const [name] = modes[i];
    const r = results.get(name);
    const base = results.get(modes[i - (i % 2)][0]);
    console.log(`${name}  ${median(r.p50).toFixed(2).padStart(7)}  ${median(r.p99).toFixed(2).padStart(7)}   ${(median(r.p50) / median(base.p50)).toFixed(2)}x`);
  }
}

let client;
let failed = false;
try {
  for (const id of ids) startBroker(id);
  await healthy([]);
  client = new MqClient({ bootstrap: ids.map((id) => `127.0.0.1:${ports[id].client}`), requestTimeoutMs: 5000, retry: { initialDelayMs: 10, maxDelayMs: 200, retries: 10_000 } });
  const admin = client.admin();
  const configs = [
    { name: 'RF1 acks=1  ', topic: 'bench-rf1', rf: 1, acks: 1 },
    { name: 'RF3 acks=1  ', topic: 'bench-rf3', rf: 3, acks: 1 },
    { name: 'RF3 acks=all', topic: 'bench-rf3', rf: 3, acks: 'all' },
  ];
  await admin.createTopic('bench-rf1', { numPartitions: 1, replicationFactor: 1 });
  await admin.createTopic('bench-rf3', { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  await admin.createTopic('bench-failover', { numPartitions: 1, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  await healthy(['bench-rf1', 'bench-rf3', 'bench-failover']);

  const results = new Map(configs.map((c) => [c.name, { rate: [], mbs: [], p50: [], p99: [] }]));
  if (a.http) await httpBench(admin);
  for (let round = 0; round < (a['failover-only'] || a.http ? 0 : ROUNDS + 1); round++) {
    for (const c of configs) {
      const producer = client.producer({ acks: c.acks, lingerMs: 2 });
      const lat = [];
      let n = 0;
      const end = Date.now() + SECONDS * 1000;
      const inflight = new Set();
      while (Date.now() < end) {
        const t0 = performance.now();
        const p = producer.send(c.topic, { value: VALUE, partition: 0 }).then(() => { n++; lat.push(performance.now() - t0); });
        inflight.add(p);
        p.finally(() => inflight.delete(p));
        if (inflight.size >= WINDOW) await Promise.race(inflight);
      }
      await Promise.all(inflight);
      await producer.close?.();
      if (round === 0) continue; // warm-up
      const r = results.get(c.name);
      r.rate.push(n / SECONDS);
      r.mbs.push((n * VALUE.length) / SECONDS / 1e6);
      r.p50.push(pct(lat, 50));
      r.p99.push(pct(lat, 99));
    }
  }
  const base = median(results.get(configs[0].name).rate);
  if (!a['failover-only'] && !a.http) {
  console.log(`\nproduce: ${ROUNDS} rounds x ${SECONDS}s per config (after a warm-up round), ${VALUE.length} B values, ${WINDOW} sends in flight, lingerMs 2, flush os; medians`);
  console.log('config         records/s   MB/s   p50 ms   p99 ms   vs RF1');
  for (const c of configs) {
    const r = results.get(c.name);
    console.log(`${c.name}  ${String(Math.round(median(r.rate))).padStart(10)}  ${median(r.mbs).toFixed(1).padStart(5)}  ${median(r.p50).toFixed(1).padStart(7)}  ${median(r.p99).toFixed(1).padStart(7)}   ${(median(r.rate) / base).toFixed(2)}x`);
  }
  }

  // Failover.
  const times = [];
  const producer = client.producer({ acks: 'all', lingerMs: 0 });
  for (let k = 0; k < (a.http ? 0 : KILLS); k++) {
    await healthy(['bench-failover']);
    await producer.send('bench-failover', { value: VALUE, partition: 0 });
    const leader = await leaderOf('bench-failover');
    const t0 = performance.now();
    procs[leader].kill('SIGKILL');
    await producer.send('bench-failover', { value: VALUE, partition: 0 });
    const ms = performance.now() - t0;
    times.push(ms);
    process.stderr.write(`kill ${k + 1}/${KILLS}: leader ${leader}, first acks=all produce after ${ms.toFixed(0)} ms\n`);
    await new Promise((r) => (procs[leader].exitCode !== null || procs[leader].signalCode !== null ? r() : procs[leader].once('exit', r)));
    startBroker(leader);
  }
  if (!a.http) console.log(`\nfailover: SIGKILL the leader, first successful acks=all produce on the partition (broker.session.timeout.ms=${a['session-ms']}, controller.tick.ms=50), ${KILLS} kills`);
  if (!a.http) console.log(`p50 ${pct(times, 50).toFixed(0)} ms   p99 ${pct(times, 99).toFixed(0)} ms   min ${Math.min(...times).toFixed(0)} ms   max ${Math.max(...times).toFixed(0)} ms`);
} catch (err) {
  failed = true;
  for (const id of ids) console.error(`broker ${id}:`, JSON.stringify(await status(id).catch((e) => String(e))));
  console.error(`failed; broker logs kept in ${root}`);
  throw err;
} finally {
  await client?.close().catch(() => {});
  for (const p of Object.values(procs)) p.kill('SIGKILL');
  await sleep(300);
  if (!failed) rmSync(root, { recursive: true, force: true });
}
