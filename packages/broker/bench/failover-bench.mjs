#!/usr/bin/env node
// Failover with the DEFAULT broker configuration: --brokers (4) `mq broker start` processes on loopback, every
// one a controller voter, no --config-set at all; a topic of --partitions (8) partitions, RF 3,
// min.insync.replicas 2; one idempotent acks=all producer (client defaults).
//  1. Max rate: the producer unpaced (--window sends in flight) for --max-seconds.
//  2. No false positives: the producer unpaced for --quiet-seconds (full load), no fault; counts leader changes
//     (leader epochs), ISR shrinks (sampled every 250 ms, and the brokers' "proposing ISR shrink" log lines),
//     fencings and controller changes (log lines).
//  3. Faults, the producer paced at --load (0.5) of the max rate: each event picks a victim, waits --baseline-ms
//     (the baseline window), then
//       leader-kill    SIGKILL the leader of a partition (partitions in turn), restart it after the window
//       leader-stop    SIGSTOP it for --pause-ms, then SIGCONT
//       follower-kill  SIGKILL a broker (brokers in turn), restart it after the window
//       follower-stop  SIGSTOP a broker for --pause-ms, then SIGCONT
//     For leader events, a probe send on the victim's partition starts right after the signal: the time to its
//     acknowledgment is the failover time. For every event, the paced sends started within --window-ms after the
//     signal are split by the victim's role in their partition (led / followed / unrelated) and their p99 and
//     max latency compared with the baseline window's; after each event the cluster is healed (restart/SIGCONT,
//     all unfenced, full ISRs) before the next.
//   node packages/broker/bench/failover-bench.mjs [--leader-kills 50] [--leader-stops 10] [--follower-kills 10]
//     [--follower-stops 10] [--quiet-seconds 600] [--brokers 4] [--partitions 8] [--load 0.5] [--config k=v ...]
//   (--config adds a --config-set to every broker, for runs with a tuned configuration.)
import { spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { MqClient } from '@mq/client';
import { CLI, waitFor } from './bench-util.mjs';

const { values: a } = parseArgs({
  options: {
    brokers: { type: 'string', default: '4' },
    partitions: { type: 'string', default: '8' },
    'value-bytes': { type: 'string', default: '100' },
    window: { type: 'string', default: '2000' },
    'max-seconds': { type: 'string', default: '5' },
    'quiet-seconds': { type: 'string', default: '60' },
    load: { type: 'string', default: '0.5' },
    'leader-kills': { type: 'string', default: '10' },
    'leader-stops': { type: 'string', default: '5' },
    'follower-kills': { type: 'string', default: '5' },
    'follower-stops': { type: 'string', default: '5' },
    'pause-ms': { type: 'string', default: '4000' },
    'baseline-ms': { type: 'string', default: '2000' },
    'window-ms': { type: 'string', default: '3000' },
    config: { type: 'string', multiple: true, default: [] },
    keep: { type: 'boolean', default: false },
  },
});
const N = Number(a.brokers);
const P = Number(a.partitions);
const VALUE = Buffer.alloc(Number(a['value-bytes']), 'x');
const WINDOW = Number(a.window);
const PAUSE_MS = Number(a['pause-ms']);
const BASELINE_MS = Number(a['baseline-ms']);
const WINDOW_MS = Number(a['window-ms']);
const TOPIC = 'failover';

const free = () => new Promise((r) => { const s = net.createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => r(p)); }); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => { const s = [...xs].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN; };
const f0 = (x) => (Number.isFinite(x) ? x.toFixed(0) : '-');
const now = () => performance.now();

const root = mkdtempSync(path.join(tmpdir(), 'mq-failover-bench-'));
const ids = Array.from({ length: N }, (_, i) => i + 1);
const ports = {};
for (const id of ids) ports[id] = { raft: await free(), client: await free(), http: await free() };
const voters = ids.map((id) => `${id}@127.0.0.1:${ports[id].raft}`).join(',');
const procs = {};
const logFile = (id) => path.join(root, `b${id}.log`);

function startBroker(id) {
  const child = spawn(process.execPath, [CLI, 'broker', 'start', '--broker-id', String(id), '--data-dir', path.join(root, `b${id}`), '--port', String(ports[id].client), '--http-port', String(ports[id].http), '--controller-voters', voters, ...a.config.flatMap((c) => ['--config-set', c])], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, MQ_LOG_LEVEL: 'info' } });
  procs[id] = child;
  const log = createWriteStream(logFile(id), { flags: 'a' });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  return child;
}
const alive = (id) => procs[id].exitCode === null && procs[id].signalCode === null;
async function status(id) {
  const res = await fetch(`http://127.0.0.1:${ports[id].http}/cluster`, { signal: AbortSignal.timeout(2000) });
  return res.json();
}
/**
 * Every broker unfenced and full ISRs, as the active controller sees it (a broker just restarted reports the
 * state from before its kill until it has replayed the metadata log).
 */
async function healthy(topics) {
  return waitFor(async () => {
    for (const id of ids) {
      if (!alive(id)) continue;
      const any = await status(id).catch(() => null);
      if (!any || any.controllerId < 0 || !alive(any.controllerId)) continue;
      const s = any.controllerId === id ? any : await status(any.controllerId).catch(() => null);
      if (!s?.activeController) continue;
      return s.brokers.length === N && s.brokers.every((b) => !b.fenced) && !s.underReplicated.some((u) => topics.includes(u.topic)) && !s.offline.some((u) => topics.includes(u.topic));
    }
    return false;
  }, 120_000, 'a healthy cluster');
}
/** Counts of the log lines that mark a leader move or an ISR change, over every broker's log so far. */
function logCounts() {
  const c = { fenced: 0, isrShrink: 0, controllerChanged: 0, resigned: 0 };
  for (const id of ids) {
    let text = '';
    try { text = readFileSync(logFile(id), 'utf8'); } catch { continue; }
    for (const line of text.split('\n')) {
      if (line.includes('"msg":"fencing broker')) c.fenced++; // not "unfencing broker"
      if (line.includes('proposing ISR shrink')) c.isrShrink++;
      if (line.includes('controller changed') || line.includes('this broker is the active controller')) c.controllerChanged++;
      if (line.includes('resigning all partition leaderships')) c.resigned++;
    }
  }
  return c;
}

// ---- the producer and the latency of every send, by partition ----
let client;
let producer;
const collectors = new Set();
let pending = 0;
let sendErrors = 0;
const errorCodes = new Map();
function send(partition) {
  const t0 = now();
  pending++;
  return producer.send(TOPIC, { value: VALUE, partition }).then(
    () => {
      const ms = now() - t0;
      for (const c of collectors) if (t0 >= c.from && t0 < c.to) c.add(partition, ms, true);
    },
    (err) => {
      sendErrors++;
      const code = err?.code ?? String(err);
      errorCodes.set(code, (errorCodes.get(code) ?? 0) + 1);
      for (const c of collectors) if (t0 >= c.from && t0 < c.to) c.add(partition, now() - t0, false, err);
    },
  ).finally(() => { pending--; });
}
function collector(from, to) {
  const c = { from, to, lat: new Map(), errors: new Map(), add(p, ms, ok, err) { if (ok) { if (!c.lat.has(p)) c.lat.set(p, []); c.lat.get(p).push(ms); } else c.errors.set(p, (c.errors.get(p) ?? 0) + 1); c.lastErr = err; } };
  collectors.add(c);
  return c;
}
/** Unpaced: WINDOW sends in flight, partitions in turn, for `ms`. Returns records/s. */
async function fullLoad(ms, during) {
  const end = Date.now() + ms;
  const inflight = new Set();
  let n = 0;
  let i = 0;
  let nextSample = Date.now();
  while (Date.now() < end) {
    const p = send(i++ % P).then(() => { n++; });
    inflight.add(p);
    p.finally(() => inflight.delete(p));
    if (inflight.size >= WINDOW) await Promise.race(inflight);
    if (during && Date.now() >= nextSample) { nextSample = Date.now() + 250; await during(); }
  }
  await Promise.all(inflight);
  return n / (ms / 1000);
}
/**
 * Paced at `rate` records/s (in 5 ms steps), partitions in turn, until stop() is called; pause(true) sends
 * nothing (between events, so that a producer the machine's load slowed down drains its backlog).
 */
function paced(rate) {
  let stopped = false;
  let paused = false;
  let i = 0;
  const t0 = Date.now();
  let sent = 0;
  const loop = (async () => {
    while (!stopped) {
      const due = Math.floor(((Date.now() - t0) / 1000) * rate);
      // Never more than 4x the window in flight: a stalled partition must not make the producer buffer without bound.
      while (!paused && sent < due && pending < WINDOW * 4) { void send(i++ % P); sent++; }
      if (sent < due) sent = due; // what could not go out while stalled is skipped, not burst later
      await sleep(5);
    }
  })();
  return { stop: async () => { stopped = true; await loop; }, pause: (on) => { paused = on; } };
}

async function describe() {
  const t = await client.admin().describeTopic(TOPIC);
  return t.partitions;
}

let failed = false;
try {
  console.log(`machine: ${(await import('node:os')).cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at start`);
  for (const id of ids) startBroker(id);
  await healthy([]);
  client = new MqClient({ bootstrap: ids.map((id) => `127.0.0.1:${ports[id].client}`) });
  await client.admin().createTopic(TOPIC, { numPartitions: P, replicationFactor: 3, configs: { 'min.insync.replicas': '2' } });
  await healthy([TOPIC]);
  producer = client.producer({ acks: 'all', idempotent: true });

  // 1. max rate
  await fullLoad(1000);
  const maxRate = await fullLoad(Number(a['max-seconds']) * 1000);
  console.log(`max rate: ${Math.round(maxRate)} records/s (${VALUE.length} B, acks=all, idempotent, ${WINDOW} in flight, ${P} partitions, ${N} brokers)`);

  // 2. no false positives at full load
  const quietMs = Number(a['quiet-seconds']) * 1000;
  if (quietMs > 0) {
    const before = await describe();
    const logsBefore = logCounts();
    let shrunkSamples = 0;
    let samples = 0;
    const epochs = new Map(before.map((p) => [p.partition, p.leaderEpoch]));
    let leaderChanges = 0;
    const quietStart = Date.now();
    let lastSample = 0;
    const rate = await fullLoad(quietMs, async () => {
      if (Date.now() - lastSample < 250) return;
      lastSample = Date.now();
      const ps = await describe().catch(() => null);
      if (!ps) return;
      samples++;
      if (ps.some((p) => p.isr.length < p.replicas.length)) shrunkSamples++;
      for (const p of ps) { if (p.leaderEpoch !== epochs.get(p.partition)) { leaderChanges++; epochs.set(p.partition, p.leaderEpoch); } }
    });
    const logsAfter = logCounts();
    console.log(`\nno-false-positive run: ${((Date.now() - quietStart) / 1000).toFixed(0)} s at full load (${Math.round(rate)} records/s), load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    console.log(`  leader changes (leader epochs): ${leaderChanges}; metadata samples with a shrunk ISR: ${shrunkSamples}/${samples}`);
    console.log(`  log lines: fencing ${logsAfter.fenced - logsBefore.fenced}, ISR shrink proposed ${logsAfter.isrShrink - logsBefore.isrShrink}, controller changes ${logsAfter.controllerChanged - logsBefore.controllerChanged}, leaderships resigned ${logsAfter.resigned - logsBefore.resigned}; failed sends ${sendErrors}`);
  }

  // 3. faults at `load` of the max rate
  const rate = Math.round(maxRate * Number(a.load));
  const pacer = paced(rate);
  const plan = [
    ...Array(Number(a['leader-kills'])).fill('leader-kill'),
    ...Array(Number(a['leader-stops'])).fill('leader-stop'),
    ...Array(Number(a['follower-kills'])).fill('follower-kill'),
    ...Array(Number(a['follower-stops'])).fill('follower-stop'),
  ];
  const results = new Map();
  const counters = { leader: 0, follower: 0 };
  for (let k = 0; k < plan.length; k++) {
    const kind = plan[k];
    await healthy([TOPIC]);
    pacer.pause(false);
    const parts = await describe();
    let victim;
    let probePartition = -1;
    if (kind.startsWith('leader')) {
      probePartition = counters.leader++ % P;
      victim = parts.find((p) => p.partition === probePartition).leader;
    } else {
      victim = ids[counters.follower++ % N];
    }
    const role = (p) => (p.leader === victim ? 'led' : p.replicas.includes(victim) ? 'followed' : 'unrelated');
    const roles = new Map(parts.map((p) => [p.partition, role(p)]));
    const tb = now();
    const base = collector(tb, tb + BASELINE_MS);
    await sleep(BASELINE_MS);
    const t0 = now();
    const win = collector(t0, t0 + WINDOW_MS);
    procs[victim].kill(kind.endsWith('kill') ? 'SIGKILL' : 'SIGSTOP');
    if (a.keep) process.stderr.write(`signal ${kind} to broker ${victim} at ${new Date().toISOString()}\n`);
    let failoverMs = NaN;
    let probeErr;
    const probe = probePartition >= 0
      ? producer.send(TOPIC, { value: VALUE, partition: probePartition }).then(() => { failoverMs = now() - t0; }, (err) => { probeErr = err; })
      : Promise.resolve();
    if (kind.endsWith('stop')) {
      await Promise.race([probe, sleep(PAUSE_MS)]);
      const left = PAUSE_MS - (now() - t0);
      if (left > 0) await sleep(left);
      procs[victim].kill('SIGCONT');
    } else {
      await Promise.race([probe, sleep(30_000)]);
      await sleep(Math.max(0, WINDOW_MS - (now() - t0)));
      await new Promise((r) => (alive(victim) ? procs[victim].once('exit', r) : r()));
      startBroker(victim);
    }
    await probe;
    await sleep(Math.max(0, WINDOW_MS - (now() - t0)));
    pacer.pause(true);
    await waitFor(() => pending === 0, 60_000, 'the producer to drain');
    collectors.delete(base);
    collectors.delete(win);
    const r = results.get(kind) ?? results.set(kind, { failover: [], probeErrors: 0, byRole: new Map(), baseline: [] }).get(kind);
    if (probePartition >= 0) { if (probeErr) r.probeErrors++; else r.failover.push(failoverMs); }
    const p99Of = (c, which) => { const xs = []; let errs = 0; for (const [p, l] of c.lat) if (which === undefined || roles.get(p) === which) xs.push(...l); for (const [p, e] of c.errors) if (which === undefined || roles.get(p) === which) errs += e; return { p99: pct(xs, 99), max: xs.length ? Math.max(...xs) : NaN, n: xs.length, errs }; };
    r.baseline.push(p99Of(base));
    for (const which of ['led', 'followed', 'unrelated']) {
      const v = p99Of(win, which);
      if (v.n === 0 && v.errs === 0) continue;
      if (!r.byRole.has(which)) r.byRole.set(which, []);
      r.byRole.get(which).push(v);
    }
    const parts2 = [...r.byRole].map(([w, l]) => `${w} p99 ${f0(l.at(-1).p99)} ms`).join(', ');
    process.stderr.write(`${new Date().toISOString()} ${k + 1}/${plan.length} ${kind} broker ${victim}${probePartition >= 0 ? ` (leader of ${probePartition})` : ''}: ${probePartition >= 0 ? (probeErr ? `probe failed: ${probeErr.message}` : `first acks=all ack after ${f0(failoverMs)} ms`) : ''}; window ${parts2}; baseline p99 ${f0(r.baseline.at(-1).p99)} ms\n`);
  }
  await pacer.stop();
  console.log(`\nfaults: producer paced at ${rate} records/s (${a.load} of max), ${P} partitions RF 3 min.insync.replicas 2 on ${N} brokers, DEFAULT configuration${a.config.length ? ` plus ${a.config.join(' ')}` : ''}; pause ${PAUSE_MS} ms; window ${WINDOW_MS} ms after the signal, baseline ${BASELINE_MS} ms before`);
  console.log('event           n   failover p50  p99   max   | window p99 (median over events / worst): led      followed     unrelated    | baseline p99');
  for (const [kind, r] of results) {
    const med = (l, k) => pct(l.map((x) => x[k]), 50);
    const worst = (l, k) => Math.max(...l.map((x) => x[k]).filter(Number.isFinite));
    const cell = (w) => { const l = r.byRole.get(w); return l ? `${f0(med(l, 'p99'))}/${f0(worst(l, 'p99'))}`.padStart(11) : '-'.padStart(11); };
    const fo = r.failover;
    console.log(`${kind.padEnd(14)} ${String(Math.max(fo.length + r.probeErrors, r.baseline.length)).padStart(3)}   ${fo.length ? `${f0(pct(fo, 50)).padStart(6)} ${f0(pct(fo, 99)).padStart(5)} ${f0(Math.max(...fo)).padStart(5)}` : '     -     -     -'}   |                                  ${cell('led')}  ${cell('followed')}  ${cell('unrelated')}    | ${f0(pct(r.baseline.map((x) => x.p99), 50))}${r.probeErrors ? `   (${r.probeErrors} probes failed)` : ''}`);
  }
  console.log(`failed sends: ${sendErrors}${errorCodes.size ? ` (${[...errorCodes].map(([c, n]) => `${c} ${n}`).join(', ')})` : ''}; load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at the end`);
} catch (err) {
  failed = true;
  for (const id of ids) console.error(`broker ${id}:`, JSON.stringify(await status(id).catch((e) => String(e))));
  console.error(`failed; broker logs kept in ${root}`);
  throw err;
} finally {
  await client?.close().catch(() => {});
  for (const p of Object.values(procs)) { p.kill('SIGCONT'); p.kill('SIGKILL'); }
  await sleep(300);
  if (!failed && !a.keep) rmSync(root, { recursive: true, force: true });
  else console.error(`broker logs in ${root}`);
}
