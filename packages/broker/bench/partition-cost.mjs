#!/usr/bin/env node
// What one CreateTopics request with many partitions costs a broker (issue 22, "one request, thousands of
// partitions"): a one-voter cluster (`mq broker start` with controller.quorum.voters naming itself), one
// CreateTopics of --partitions partitions (RF 1), then: the time until it is answered and until the broker
// hosts every partition, the broker's RSS and open files, the files under cluster-logs/ and the size of the
// metadata log. Limits are raised for the run so that the request is not refused.
// Stops waiting after --max-seconds and reports how many partitions the broker leads by then.
//   node packages/broker/bench/partition-cost.mjs [--partitions 10000] [--max-seconds 300]
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { arg, CLI } from './bench-util.mjs';

const N = arg('partitions', 10_000);
const MAX_MS = arg('max-seconds', 300) * 1000;
const free = () => new Promise((r) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const root = mkdtempSync(path.join(tmpdir(), 'mq-partition-cost-'));
const [raft, client, http] = [await free(), await free(), await free()];
const config = [`topic.max.partitions=${N}`, `max.partitions.per.request=${N}`, `max.partition.replicas.per.broker=${N + 100}`, 'controller.fsync=false', 'log.flush.policy=os'];
const child = spawn(process.execPath, [CLI, 'broker', 'start', '--broker-id', '1', '--data-dir', root, '--port', String(client), '--http-port', String(http), '--controller-voters', `1@127.0.0.1:${raft}`, ...config.flatMap((c) => ['--config-set', c])], { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, MQ_LOG_LEVEL: 'warn' } });

const rssMiB = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))[1]) / 1024;
const openFiles = () => readdirSync(`/proc/${child.pid}/fd`).length;
function walk(dir) {
  let files = 0, bytes = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) { const w = walk(p); files += w.files; bytes += w.bytes; } else { files++; bytes += statSync(p).size; }
  }
  return { files, bytes };
}
async function status() {
  const res = await fetch(`http://127.0.0.1:${http}/cluster`, { signal: AbortSignal.timeout(10_000) });
  return res.json();
}
async function waitFor(fn, timeoutMs) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try { const v = await fn(); if (v) return v; } catch { /* not answering yet: try again */ }
    if (Date.now() > end) throw new Error('timed out');
    await sleep(100);
  }
}

try {
  await waitFor(async () => (await status()).brokers?.some((b) => b.id === 1 && !b.fenced), 30_000);
  const before = { rss: rssMiB(), fds: openFiles(), meta: walk(path.join(root, '__cluster_metadata')).bytes };
  const c = new MqClient({ bootstrap: [`127.0.0.1:${client}`] });
  const t0 = Date.now();
  await c.admin().createTopic('wide', { numPartitions: N, replicationFactor: 1 }, { timeoutMs: 600_000 });
  const answered = Date.now() - t0;
  let peakRss = rssMiB();
  let led = 0;
  await waitFor(async () => {
    peakRss = Math.max(peakRss, rssMiB());
    led = (await status()).hosted.filter((h) => h.topic === 'wide' && h.role === 'leader').length;
    return led === N;
  }, MAX_MS).catch(() => undefined);
  const hosted = Date.now() - t0;
  const logs = walk(path.join(root, 'cluster-logs'));
  const after = { rss: rssMiB(), fds: openFiles(), meta: walk(path.join(root, '__cluster_metadata')).bytes };
  console.log(JSON.stringify({
    partitions: N,
    createTopicsAnsweredMs: answered,
    partitionsLed: led,
    [led === N ? 'allPartitionsLedMs' : 'stillOpeningAfterMs']: hosted,
    rssMiB: { before: Math.round(before.rss), after: Math.round(after.rss), peak: Math.round(peakRss) },
    openFiles: { before: before.fds, after: after.fds },
    clusterLogs: { files: logs.files, MiB: +(logs.bytes / 1048576).toFixed(1) },
    metadataLogBytes: { before: before.meta, after: after.meta },
  }, null, 2));
  await c.close();
} finally {
  child.kill('SIGKILL');
  await sleep(200);
  rmSync(root, { recursive: true, force: true });
}
