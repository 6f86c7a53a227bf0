#!/usr/bin/env node
// Offset commit latency: a single broker (commit appended to its local
// __consumer_offsets) against a 3-broker cluster (commit replicated to the
// in-sync replicas of the replicated __consumer_offsets, acks=all), side by
// side: the runs alternate single, cluster, single, cluster... Each run sends
// `--commits` sequential OffsetCommits (one partition each) from outside a
// group and reports p50/p99/max in ms; the summary gives the medians over
// the runs and the cluster/single ratio. Needs a build first (`npm run build`).
//
//   node packages/broker/bench/groups-commit-latency.mjs [--runs 3] [--commits 1000]
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { Cluster, CoordinatorClient, parseClientOptions } from '@mq/client/internal';
import { CLI, arg, median, quantile } from './bench-util.mjs';

const RUNS = arg('runs', 3);
const COMMITS = arg('commits', 1000);
const PARTITIONS = 6;

/** `n` consecutive free ports (checked one by one). */
async function freePorts(n) {
  for (;;) {
    const base = 20000 + Math.floor(Math.random() * 30000);
    const ok = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        new Promise((resolve) => {
          const s = net.createServer();
          s.once('error', () => resolve(false));
          s.listen(base + i, '127.0.0.1', () => s.close(() => resolve(true)));
        }),
      ),
    );
    if (ok.every(Boolean)) return base;
  }
}

async function start(kind) {
  const dir = await mkdtemp(path.join(tmpdir(), `mq-commit-bench-${kind}-`));
  const brokers = kind === 'cluster' ? 3 : 1;
  const port = await freePorts(brokers);
  const http = await freePorts(brokers);
  const raft = await freePorts(brokers);
  const common = ['--config-set', 'group.initial.rebalance.delay.ms=0', '--config-set', 'offsets.topic.num.partitions=6'];
  const args =
    kind === 'cluster'
      ? [CLI, 'cluster', 'start', '--brokers', '3', '--data-dir', dir, '--port', String(port), '--http-port', String(http), '--raft-port', String(raft), ...common]
      : [CLI, 'broker', 'start', '--data-dir', dir, '--port', String(port), '--http-port', String(http), ...common];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, MQ_LOG_LEVEL: 'info' } });
  const bootstrap = Array.from({ length: brokers }, (_, i) => `127.0.0.1:${port + i}`);
  const mq = new MqClient({ bootstrap, requestTimeoutMs: 5000, retry: { retries: 100, initialDelayMs: 100, maxDelayMs: 500 } });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await mq.admin().createTopic('bench', { numPartitions: PARTITIONS, replicationFactor: brokers, configs: brokers > 1 ? { 'min.insync.replicas': '2' } : {} });
      break;
    } catch (err) {
      if (err?.code === 'TOPIC_ALREADY_EXISTS') break;
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
  const p = mq.producer({ acks: 'all' });
  await Promise.all(Array.from({ length: PARTITIONS }, (_, partition) => p.sendBatch('bench', Array.from({ length: 10 }, () => ({ value: 'x', partition })))));
  await p.close();
  await mq.close();
  return {
    bootstrap,
    async stop() {
      child.kill('SIGINT');
      await new Promise((r) => child.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}


async function run(kind, round) {
  const target = await start(kind);
  const cluster = new Cluster(parseClientOptions({ bootstrap: target.bootstrap, requestTimeoutMs: 5000 }));
  try {
    const coordinator = new CoordinatorClient(cluster, `bench-${kind}-${round}`);
    // Warm up: creates __consumer_offsets in the cluster, finds the coordinator, loads the partition.
    for (let i = 0; i < 50; i++) await coordinator.commit([{ topic: 'bench', partition: i % PARTITIONS, offset: 1 }], null);
    const ms = [];
    for (let i = 0; i < COMMITS; i++) {
      const t = process.hrtime.bigint();
      await coordinator.commit([{ topic: 'bench', partition: i % PARTITIONS, offset: 1 + (i % 9) }], null);
      ms.push(Number(process.hrtime.bigint() - t) / 1e6);
    }
    ms.sort((a, b) => a - b);
    return { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), max: ms.at(-1) };
  } finally {
    cluster.close();
    await target.stop();
  }
}

const results = { single: [], cluster: [] };
for (let r = 0; r < RUNS; r++) {
  for (const kind of ['single', 'cluster']) {
    const x = await run(kind, r);
    results[kind].push(x);
    console.log(`${kind.padEnd(7)} run ${r + 1}: p50 ${x.p50.toFixed(2)} ms  p99 ${x.p99.toFixed(2)} ms  max ${x.max.toFixed(2)} ms`);
  }
}
const m = (kind, key) => median(results[kind].map((x) => x[key]));
for (const key of ['p50', 'p99']) {
  console.log(`median ${key}: single ${m('single', key).toFixed(2)} ms, cluster ${m('cluster', key).toFixed(2)} ms, ratio ${(m('cluster', key) / m('single', key)).toFixed(2)}`);
}
