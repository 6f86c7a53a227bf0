#!/usr/bin/env node
// Scale-out benchmark (issue 14): does aggregate throughput grow with brokers?
//
// On one machine the brokers share the CPU, so each broker's "machine" is modelled by its network: every broker runs
// in its own network namespace behind a veth pair whose bandwidth is capped with tc (tbf) in both directions, well
// below what the CPU moves; the active controller runs in a namespace of its own (uncapped: metadata only); the
// producers run in the root namespace, which routes between the namespaces. Aggregate acks=all produce throughput is
// measured with 1 broker (RF 1 topic), then 2, 3 and 4 (RF 2 topic), each broker added to the running cluster and
// `mq cluster rebalance` run (timed) before measuring. Target (the issue): at each size, aggregate >= 0.8 x
// brokers x cap / RF.
//
//   sudo node packages/broker/bench/scaleout-netns.mjs [--cap-mbytes 10] [--seconds 10] [--max-brokers 4]
//        [--partitions 12] [--value-bytes 1024] [--window 4000]
//
// Needs root (ip netns, tc) and a built tree (npx nx run-many -t build). Everything it creates (namespaces
// mq<pid>n<i>, links, 10.177.<i>.0/24 addresses, temp dirs) is removed at exit; net.ipv4.ip_forward is restored.
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { CLI, arg, waitFor } from './bench-util.mjs';

const CAP_MBYTES = arg('cap-mbytes', 10);
const SECONDS = arg('seconds', 10);
const MAX_BROKERS = arg('max-brokers', 4);
const PARTITIONS = arg('partitions', 12);
// Random bytes: nothing on the way can make them smaller.
const VALUE = randomBytes(arg('value-bytes', 1024));
const WINDOW = arg('window', 4000);
const WARMUP_MS = 2000;
const CONTROLLER = 100;
// Fixed ports: every process has a namespace (and so a port space) of its own.
const PORT = { client: 9092, http: 9080, interBroker: 9094, raft: 9095 };

const tag = `mq${process.pid % 100000}`;
const ns = (i) => `${tag}n${i}`;
const addr = (i) => `10.177.${i}.2`;
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const root = mkdtempSync(path.join(tmpdir(), 'mq-scaleout-'));
const made = [];
const procs = [];
const forwardBefore = readFileSync('/proc/sys/net/ipv4/ip_forward', 'utf8').trim();

/** Namespace `i` with a veth pair to the root namespace (10.177.i.1 <-> 10.177.i.2); capped both ways unless `uncapped`. */
function makeNamespace(i, uncapped = false) {
  const host = `${tag}h${i}`;
  const inside = `${tag}b${i}`;
  run('ip', ['netns', 'add', ns(i)]);
  made.push(i);
  run('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', inside]);
  run('ip', ['link', 'set', inside, 'netns', ns(i)]);
  run('ip', ['addr', 'add', `10.177.${i}.1/24`, 'dev', host]);
  run('ip', ['link', 'set', host, 'up']);
  run('ip', ['-n', ns(i), 'link', 'set', 'lo', 'up']);
  run('ip', ['-n', ns(i), 'addr', 'add', `${addr(i)}/24`, 'dev', inside]);
  run('ip', ['-n', ns(i), 'link', 'set', inside, 'up']);
  run('ip', ['-n', ns(i), 'route', 'add', 'default', 'via', `10.177.${i}.1`]);
  if (uncapped) return;
  // Token bucket: CAP_MBYTES MB/s out of the namespace (on its side) and into it (the root side's egress).
  const tbf = ['root', 'tbf', 'rate', `${CAP_MBYTES * 8}mbit`, 'burst', '256kb', 'latency', '200ms'];
  run('ip', ['netns', 'exec', ns(i), 'tc', 'qdisc', 'add', 'dev', inside, ...tbf]);
  run('tc', ['qdisc', 'add', 'dev', host, ...tbf]);
}

function cleanup() {
  for (const p of procs) p.kill('SIGKILL');
  for (const i of made) {
    try {
      run('ip', ['netns', 'del', ns(i)]); // takes the veth pair with it
    } catch {
      /* already gone */
    }
  }
  writeFileSync('/proc/sys/net/ipv4/ip_forward', forwardBefore);
  if (!process.exitCode) rmSync(root, { recursive: true, force: true });
  else console.error(`logs kept in ${root}`);
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130));

function startProcess(i, args) {
  const child = spawn('ip', ['netns', 'exec', ns(i), process.execPath, CLI, 'broker', 'start', '--data-dir', path.join(root, `d${i}`), '--host', addr(i), '--port', String(PORT.client), '--http-port', String(PORT.http), '--kafka-port', '-1', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MQ_LOG_FORMAT: 'json', MQ_LOG_LEVEL: 'warn' },
  });
  const log = createWriteStream(path.join(root, `p${i}.log`), { flags: 'a' });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  procs.push(child);
  return child;
}

const common = ['allow.insecure=true', 'inter.broker.port=' + PORT.interBroker, 'log.flush.policy=os', 'log.retention.check.interval.ms=1000', 'leader.imbalance.check.interval.ms=3600000'];
const sets = (list) => list.flatMap((c) => ['--config-set', c]);

async function startController() {
  makeNamespace(0, true);
  startProcess(0, ['--broker-id', String(CONTROLLER), '--process-roles', 'controller', '--controller-voters', `${CONTROLLER}@${addr(0)}:${PORT.raft}`, ...sets(common)]);
}

async function addBroker(client, i) {
  makeNamespace(i);
  startProcess(i, ['--broker-id', String(i), '--process-roles', 'broker', '--controller-bootstrap-servers', `${addr(0)}:${PORT.interBroker}`, ...sets(common)]);
  await waitFor(async () => (await client.admin().describeCluster()).brokers.some((b) => b.id === i && !b.fenced), 60_000, `broker ${i} registered and unfenced`);
}

/** acks=all sends to every partition round-robin, WINDOW in flight, for WARMUP_MS + SECONDS; MB/s acknowledged after the warm-up. */
async function measure(client, topic) {
  const producer = client.producer({ acks: 'all', lingerMs: 5, idempotent: true });
  const end = Date.now() + WARMUP_MS + SECONDS * 1000;
  const from = Date.now() + WARMUP_MS;
  let bytes = 0;
  let failed = 0;
  let n = 0;
  const worker = async () => {
    while (Date.now() < end) {
      const partition = n++ % PARTITIONS;
      try {
        await producer.send(topic, { value: VALUE, partition });
        const t = Date.now();
        if (t >= from && t <= end) bytes += VALUE.length; // acknowledged inside the measured window
      } catch {
        failed++;
      }
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, worker));
  await producer.close();
  return { mbytesPerSec: bytes / 1e6 / SECONDS, failed };
}

async function rebalance(bootstrap) {
  const started = Date.now();
  const out = run(process.execPath, [CLI, 'cluster', 'rebalance', '--format', 'json', '-b', bootstrap]);
  return { ms: Date.now() - started, plan: JSON.parse(out) };
}

run('sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
await startController();
const rows = [];
let client;
try {
  makeNamespace(1);
  startProcess(1, ['--broker-id', '1', '--process-roles', 'broker', '--controller-bootstrap-servers', `${addr(0)}:${PORT.interBroker}`, ...sets(common)]);
  const bootstrap = `${addr(1)}:${PORT.client}`;
  client = new MqClient({ bootstrap, clientId: 'scaleout-bench' });
  await waitFor(async () => (await client.admin().describeCluster()).brokers.some((b) => b.id === 1 && !b.fenced), 60_000, 'broker 1 unfenced');
  // Small logs, so a rebalance moves seconds of data, not the whole run's.
  const configs = { 'segment.bytes': String(1 << 20), 'retention.bytes': String(1 << 20) };
  await client.admin().createTopic('scale-rf1', { numPartitions: PARTITIONS, replicationFactor: 1, configs });
  const one = await measure(client, 'scale-rf1');
  rows.push({ brokers: 1, rf: 1, ...one, target: 0.8 * CAP_MBYTES, rebalanceMs: 0 });
  await client.admin().deleteTopics(['scale-rf1']);
  for (let i = 2; i <= MAX_BROKERS; i++) {
    await addBroker(client, i);
    let rebalanceMs = 0;
    if (i === 2) {
      await client.admin().createTopic('scale-rf2', { numPartitions: PARTITIONS, replicationFactor: 2, configs: { ...configs, 'min.insync.replicas': '2' } });
    } else {
      const r = await rebalance(bootstrap);
      rebalanceMs = r.ms;
    }
    const m = await measure(client, 'scale-rf2');
    rows.push({ brokers: i, rf: 2, ...m, target: (0.8 * i * CAP_MBYTES) / 2, rebalanceMs });
  }
} finally {
  await client?.close().catch(() => undefined);
}

console.log(`\ncap ${CAP_MBYTES} MB/s each way per broker, ${PARTITIONS} partitions, ${VALUE.length} B values, acks=all, ${SECONDS} s per size after ${WARMUP_MS} ms warm-up`);
console.log('| brokers | RF | aggregate MB/s | target (0.8 x brokers x cap / RF) | ratio to target | rebalance before (ms) | failed sends |');
console.log('|---:|---:|---:|---:|---:|---:|---:|');
for (const r of rows) {
  console.log(`| ${r.brokers} | ${r.rf} | ${r.mbytesPerSec.toFixed(1)} | ${r.target.toFixed(1)} | ${(r.mbytesPerSec / r.target).toFixed(2)} | ${r.rebalanceMs || '-'} | ${r.failed} |`);
}
process.exit(0);
