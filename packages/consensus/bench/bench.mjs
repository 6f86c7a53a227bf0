#!/usr/bin/env node
// Benchmark: 3 real processes with fsync on, ours (example KV store on
// @mq/consensus) and etcd side by side in one run, driven by the same HTTP
// client with the same payloads.
//   npm run build -w @mq/consensus && npm run bench -w @mq/consensus [-- --seconds 3 --kills 10 --levels 1,8,32,128]
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { setup, request, freePort } from '../test/kv-cluster.mjs';

const { values: o } = parseArgs({
  options: {
    seconds: { type: 'string', default: '3' },
    kills: { type: 'string', default: '10' },
    levels: { type: 'string', default: '1,8,32,128' },
    rounds: { type: 'string', default: '3' },
    payload: { type: 'string', default: '128' },
    'skip-etcd': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(o.seconds);
const KILLS = Number(o.kills);
const LEVELS = o.levels.split(',').map(Number);
const PAYLOAD = 'x'.repeat(Number(o.payload));
const HAVE_ETCD = !o['skip-etcd'] && existsSync('/usr/bin/etcd');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Closed-loop load: `conc` clients each issue `put(i)` back to back for SECONDS. */
async function load(conc, put) {
  const lat = [];
  let errors = 0;
  let i = 0;
  const end = performance.now() + SECONDS * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const ok = await put(i++).catch(() => false);
      if (ok) lat.push(performance.now() - t0);
      else errors++;
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: conc }, worker));
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  return { ops: lat.length / secs, p50: pct(lat, 50), p99: pct(lat, 99), errors };
}

// ---- ours ------------------------------------------------------------------------------

async function oursCluster() {
  const c = await setup({ nodes: 3, tickMs: 100, fsync: true }); // election timeout 1-2 s, heartbeat 100 ms (etcd: 100 ms / 1000 ms)
  const leader = await c.waitForLeader();
  return {
    name: 'mq-consensus',
    c,
    leader,
    put: async (i) => (await request(c.ports[leader].web, 'PUT', `/kv/k${i % 1000}`, PAYLOAD)).status === 200,
    async electionAfterKill() {
      const l = await c.waitForLeader();
      const t0 = performance.now();
      await c.kill(l, 'SIGKILL');
      await c.waitForLeader(30000, l);
      const ms = performance.now() - t0;
      await c.start(l);
      await sleep(300);
      return ms;
    },
    cleanup: () => c.cleanup(),
  };
}

// ---- etcd ------------------------------------------------------------------------------

async function etcdCluster() {
  const dir = mkdtempSync(join(tmpdir(), 'mq-bench-etcd-'));
  const ids = [1, 2, 3];
  const ports = {};
  for (const id of ids) ports[id] = { peer: await freePort(), client: await freePort() };
  const initial = ids.map((id) => `e${id}=http://127.0.0.1:${ports[id].peer}`).join(',');
  const procs = new Map();
  const start = (id, state) => {
    const p = spawn(
      '/usr/bin/etcd',
      [
        '--name', `e${id}`,
        '--data-dir', join(dir, `e${id}`),
        '--listen-peer-urls', `http://127.0.0.1:${ports[id].peer}`,
        '--initial-advertise-peer-urls', `http://127.0.0.1:${ports[id].peer}`,
        '--listen-client-urls', `http://127.0.0.1:${ports[id].client}`,
        '--advertise-client-urls', `http://127.0.0.1:${ports[id].client}`,
        '--initial-cluster', initial,
        '--initial-cluster-state', state,
        '--initial-cluster-token', 'mq-bench',
        '--heartbeat-interval', '100',
        '--election-timeout', '1000',
        '--log-level', 'error',
      ],
      { stdio: 'ignore' },
    );
    procs.set(id, p);
  };
  for (const id of ids) start(id, 'new');
  const status = async (id) => {
    try {
      const r = await request(ports[id].client, 'POST', '/v3/maintenance/status', '{}', 1000);
      return r.status === 200 ? r.body : null;
    } catch {
      return null;
    }
  };
  // member id (string) of each node
  const memberOf = {};
  const findLeader = async (excludeMember = null, timeout = 30000) => {
    const end = Date.now() + timeout;
    while (Date.now() < end) {
      for (const id of procs.keys()) {
        const s = await status(id);
        if (!s) continue;
        memberOf[id] = s.header.member_id;
        if (s.leader && s.leader !== '0' && s.leader !== excludeMember) {
          const lid = Object.keys(memberOf).find((k) => memberOf[k] === s.leader);
          if (lid && procs.has(Number(lid))) return Number(lid);
        }
      }
      await sleep(5);
    }
    throw new Error('etcd: no leader');
  };
  let leader = await findLeader();
  // learn every member id
  for (const id of ids) while (!(await status(id))) await sleep(20);
  leader = await findLeader();
  const kill = (id) => {
    const p = procs.get(id);
    procs.delete(id);
    const exited = new Promise((r) => p.once('exit', r));
    p.kill('SIGKILL');
    return exited;
  };
  return {
    name: 'etcd ' + execFileSync('/usr/bin/etcd', ['--version']).toString().split('\n')[0].replace('etcd Version: ', ''),
    put: async (i) => {
      const body = JSON.stringify({ key: Buffer.from(`k${i % 1000}`).toString('base64'), value: Buffer.from(PAYLOAD).toString('base64') });
      return (await request(ports[leader].client, 'POST', '/v3/kv/put', body)).status === 200;
    },
    async electionAfterKill() {
      const l = await findLeader();
      const killedMember = memberOf[l];
      const t0 = performance.now();
      await kill(l);
      await findLeader(killedMember);
      const ms = performance.now() - t0;
      start(l, 'existing');
      while (!(await status(l))) await sleep(20);
      await sleep(300);
      leader = await findLeader();
      return ms;
    },
    cleanup: async () => {
      await Promise.all([...procs.keys()].map(kill));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---- run ------------------------------------------------------------------------------

const ROUNDS = Number(o.rounds);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
const systems = [];
const stopAll = async () => {
  for (const s of systems.splice(0)) await s.cleanup().catch(() => undefined);
};
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => void stopAll().then(() => process.exit(130)));
process.stdout.on('error', () => void stopAll().then(() => process.exit(1)));
systems.push(await oursCluster());
if (HAVE_ETCD) systems.push(await etcdCluster());
console.log(`# 3 nodes each, fsync on, ${Number(o.payload)}-byte values, median of ${ROUNDS} alternating rounds of ${SECONDS} s per level, closed-loop HTTP clients to the leader`);
console.log(`# machine: ${(await import('node:os')).cpus().length} cores (shared); node ${process.version}`);
const results = {};
try {
  for (const s of systems) await load(4, s.put); // warm up
  console.log('\n| clients | system | committed writes/s | p50 ms | p99 ms | errors |');
  console.log('|---:|---|---:|---:|---:|---:|');
  for (const conc of LEVELS) {
    // Alternate the systems round by round (the machine is shared), report medians.
    const rounds = {};
    for (let r = 0; r < ROUNDS; r++) for (const s of systems) (rounds[s.name] ??= []).push(await load(conc, s.put));
    for (const s of systems) {
      const rs = rounds[s.name];
      const r = { ops: median(rs.map((x) => x.ops)), p50: median(rs.map((x) => x.p50)), p99: median(rs.map((x) => x.p99)), errors: rs.reduce((a, x) => a + x.errors, 0) };
      (results[conc] ??= {})[s.name] = r;
      console.log(`| ${conc} | ${s.name} | ${fmt(r.ops, 0)} | ${fmt(r.p50, 2)} | ${fmt(r.p99, 2)} | ${r.errors} |`);
    }
  }
  if (systems.length === 2) {
    console.log('\n| clients | throughput ours/etcd | p50 ours/etcd | p99 ours/etcd |');
    console.log('|---:|---:|---:|---:|');
    for (const conc of LEVELS) {
      const [a, b] = systems.map((s) => results[conc][s.name]);
      console.log(`| ${conc} | ${fmt(a.ops / b.ops, 2)} | ${fmt(a.p50 / b.p50, 2)} | ${fmt(a.p99 / b.p99, 2)} |`);
    }
  }
  console.log(`\n| system | leader SIGKILLs | election p50 ms | p99 ms | max ms |`);
  console.log('|---|---:|---:|---:|---:|');
  const el = {};
  for (let k = 0; k < KILLS; k++) {
    for (const s of systems) (el[s.name] ??= []).push(await s.electionAfterKill());
  }
  for (const s of systems) {
    const xs = el[s.name].sort((a, b) => a - b);
    console.log(`| ${s.name} | ${xs.length} | ${fmt(pct(xs, 50), 0)} | ${fmt(pct(xs, 99), 0)} | ${fmt(xs[xs.length - 1], 0)} |`);
  }
} finally {
  await stopAll();
}
