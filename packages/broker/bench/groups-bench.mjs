#!/usr/bin/env node
// Consumer-group benchmark: rebalance time (10 members, 100 partitions,
// eager `range` vs cooperative `cooperative-sticky`) and offset commit
// throughput / latency. Starts its own broker process (the built CLI) per
// flush policy. Needs a build first: `npm run build`.
//
//   node packages/broker/bench/groups-bench.mjs [--runs 5] [--commits 2000]
//
// Rebalance scenarios (members use heartbeat 300 ms, session 6 s; the broker's
// group.initial.rebalance.delay.ms is 0 so the protocol, not the delay, is measured):
//   cold start: 10 members subscribe at once -> all 100 partitions assigned, each exactly once.
//   scale out:  a 10th member joins 9 stable ones -> every member stable again with 10 partitions.
//               "revoked" counts partitions whose consumption stopped during the rebalance.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { CLI, arg, median, quantile } from './bench-util.mjs';

const RUNS = arg('runs', 5);
const COMMITS = arg('commits', 2000);
const MEMBERS = 10;
const PARTITIONS = 100;

async function startBroker(extra = []) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mq-groups-bench-'));
  const child = spawn(process.execPath, [CLI, 'broker', 'start', '--data-dir', dir, '--port', '0', '--http-port', '0',
    '--config-set', 'group.initial.rebalance.delay.ms=0', '--config-set', 'group.min.session.timeout.ms=1000', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, MQ_LOG_LEVEL: 'info' },
  });
  const port = await new Promise((resolve, reject) => {
    let buf = '';
    const onData = (d) => {
      buf += d.toString();
      const m = /"msg":"broker listening".*?"port":(\d+)/.exec(buf) ?? /"port":(\d+).*?"msg":"broker listening"/.exec(buf);
      if (m) resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`broker exited ${code}: ${buf.slice(-2000)}`)));
    setTimeout(() => reject(new Error(`broker did not start: ${buf.slice(-2000)}`)), 20_000).unref();
  });
  return {
    bootstrap: `127.0.0.1:${port}`,
    async stop() {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** The `p`th percentile (0..100) of unsorted values. */
const pct = (xs, p) => quantile([...xs].sort((a, b) => a - b), p / 100);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitUntil(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(2);
  }
}

function member(bootstrap, topic, group, assignor, stats) {
  const mq = new MqClient({ bootstrap, clientId: 'bench' });
  const c = mq.consumer({ groupId: group, sessionTimeoutMs: 6000, heartbeatIntervalMs: 300, partitionAssigners: [assignor], autoCommit: false });
  const owned = new Set();
  c.subscribe([topic], {
    onPartitionsAssigned: (tps) => tps.forEach((tp) => owned.add(tp.partition)),
    onPartitionsRevoked: (tps) => {
      stats.revoked += tps.length;
      tps.forEach((tp) => owned.delete(tp.partition));
    },
    onPartitionsLost: (tps) => tps.forEach((tp) => owned.delete(tp.partition)),
  });
  // Keep polling so the member counts as alive (maxPollIntervalMs).
  let stop = false;
  const loop = (async () => {
    while (!stop) await c.poll(50).catch(() => []);
  })();
  return {
    owned,
    stable: () => c.groupState === 'stable',
    async close() {
      stop = true;
      await loop;
      await c.close();
      await mq.close();
    },
  };
}

function allAssigned(members) {
  const seen = new Set();
  let total = 0;
  for (const m of members) {
    for (const p of m.owned) seen.add(p);
    total += m.owned.size;
  }
  return seen.size === PARTITIONS && total === PARTITIONS;
}

async function rebalanceRun(bootstrap, topic, assignor, run) {
  const stats = { revoked: 0 };
  const group = `bench-${assignor}-${run}-${Date.now()}`;
  const t0 = performance.now();
  const members = Array.from({ length: MEMBERS - 1 }, () => member(bootstrap, topic, group, assignor, stats));
  await waitUntil(() => members.every((m) => m.stable()) && allAssigned(members), 30_000, 'cold start');
  const cold9 = performance.now() - t0;
  stats.revoked = 0;
  const t1 = performance.now();
  const last = member(bootstrap, topic, group, assignor, stats);
  members.push(last);
  await waitUntil(() => members.every((m) => m.stable() && m.owned.size === PARTITIONS / MEMBERS) && allAssigned(members), 30_000, 'scale out');
  const scaleOut = performance.now() - t1;
  const revoked = stats.revoked;
  await Promise.all(members.map((m) => m.close()));
  // Cold start of all 10 at once, in a fresh group.
  const stats2 = { revoked: 0 };
  const group2 = `${group}-cold`;
  const t2 = performance.now();
  const ten = Array.from({ length: MEMBERS }, () => member(bootstrap, topic, group2, assignor, stats2));
  await waitUntil(() => ten.every((m) => m.stable()) && allAssigned(ten), 30_000, 'cold start of 10');
  const cold10 = performance.now() - t2;
  await Promise.all(ten.map((m) => m.close()));
  return { cold10, cold9, scaleOut, revoked };
}

async function commitBench(bootstrap, topic, flushPolicy) {
  const mq = new MqClient({ bootstrap, clientId: 'bench-commit' });
  const c = mq.consumer({ groupId: `bench-commit-${flushPolicy}-${Date.now()}`, sessionTimeoutMs: 6000, heartbeatIntervalMs: 300, autoCommit: false });
  c.subscribe([topic]);
  await c.waitForAssignment();
  const tps = c.assignment();
  const lat = [];
  // Sequential: one commit (of one partition) at a time.
  const t0 = performance.now();
  for (let i = 0; i < COMMITS; i++) {
    const tp = tps[i % tps.length];
    const s = performance.now();
    await c.commit([{ topic: tp.topic, partition: tp.partition, offset: 0, metadata: `m${i}` }]);
    lat.push(performance.now() - s);
  }
  const seqSecs = (performance.now() - t0) / 1000;
  // Concurrent: 32 commits in flight (e.g. many threads/partitions committing).
  const t1 = performance.now();
  let next = 0;
  const latC = [];
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < COMMITS) {
        const i = next++;
        const tp = tps[i % tps.length];
        const s = performance.now();
        await c.commit([{ topic: tp.topic, partition: tp.partition, offset: 0 }]);
        latC.push(performance.now() - s);
      }
    }),
  );
  const concSecs = (performance.now() - t1) / 1000;
  await c.close();
  await mq.close();
  return {
    seqPerSec: COMMITS / seqSecs,
    seqP50: pct(lat, 50),
    seqP99: pct(lat, 99),
    concPerSec: COMMITS / concSecs,
    concP50: pct(latC, 50),
    concP99: pct(latC, 99),
  };
}

async function main() {
  const out = [];
  const broker = await startBroker();
  try {
    const admin = new MqClient({ bootstrap: broker.bootstrap, clientId: 'bench-admin' });
    await admin.admin().createTopic('bench-groups', { numPartitions: PARTITIONS });
    await admin.admin().createTopic('bench-commits', { numPartitions: 10 });
    await admin.close();
    const results = { range: [], 'cooperative-sticky': [] };
    for (let run = 0; run < RUNS; run++) {
      // Alternate the two so drift on a shared machine affects both alike.
      for (const assignor of ['range', 'cooperative-sticky']) results[assignor].push(await rebalanceRun(broker.bootstrap, 'bench-groups', assignor, run));
    }
    out.push(`rebalance, ${MEMBERS} members on ${PARTITIONS} partitions, median of ${RUNS} runs (ms):`);
    out.push('assignor              cold start 10   scale out 9->10   partitions revoked in scale out');
    for (const [name, rs] of Object.entries(results)) {
      out.push(
        `${name.padEnd(22)}${median(rs.map((r) => r.cold10)).toFixed(0).padStart(13)}   ${median(rs.map((r) => r.scaleOut)).toFixed(0).padStart(15)}   ${median(rs.map((r) => r.revoked)).toFixed(0).padStart(6)}`,
      );
    }
    const e = median(results.range.map((r) => r.scaleOut));
    const k = median(results['cooperative-sticky'].map((r) => r.scaleOut));
    out.push(`scale-out time cooperative / eager: ${(k / e).toFixed(2)}`);
    const commits = [];
    for (let run = 0; run < Math.min(RUNS, 3); run++) commits.push(await commitBench(broker.bootstrap, 'bench-commits', 'interval'));
    out.push(fmtCommits('flush.policy=interval (default)', commits));
  } finally {
    await broker.stop();
  }
  const always = await startBroker(['--config-set', 'log.flush.policy=always']);
  try {
    const admin = new MqClient({ bootstrap: always.bootstrap, clientId: 'bench-admin' });
    await admin.admin().createTopic('bench-commits', { numPartitions: 10 });
    await admin.close();
    const commits = [];
    for (let run = 0; run < Math.min(RUNS, 3); run++) commits.push(await commitBench(always.bootstrap, 'bench-commits', 'always'));
    out.push(fmtCommits('flush.policy=always (fsync per append)', commits));
  } finally {
    await always.stop();
  }
  console.log(out.join('\n'));
}

function fmtCommits(label, rs) {
  const m = (f) => median(rs.map(f));
  return [
    `offset commits, ${label}, ${COMMITS} per mode, median of ${rs.length} runs:`,
    `  sequential (1 in flight): ${m((r) => r.seqPerSec).toFixed(0)} commits/s, p50 ${m((r) => r.seqP50).toFixed(2)} ms, p99 ${m((r) => r.seqP99).toFixed(2)} ms`,
    `  concurrent (32 in flight): ${m((r) => r.concPerSec).toFixed(0)} commits/s, p50 ${m((r) => r.concP50).toFixed(2)} ms, p99 ${m((r) => r.concP99).toFixed(2)} ms`,
  ].join('\n');
}

await main();
process.exit(0);
