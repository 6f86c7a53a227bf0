// Starts the example KV store (example/kv-server.mjs) as real processes on
// free loopback ports; used by the real-process tests and the benchmark.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../../tools/free-port.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const server = join(here, '..', 'example', 'kv-server.mjs');

export { freePort };

const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });

export function request(port, method, path, body, timeoutMs = 5000) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent, timeout: timeoutMs }, (res) => {
      let data = '';
      res.setEncoding('utf8');
      res.on('data', (c) => (data += c));
      res.on('end', () => {
        let json = null;
        try {
          json = data ? JSON.parse(data) : null;
        } catch {
          json = { raw: data };
        }
        resolve({ status: res.statusCode, body: json });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

/** setup({ nodes, tickMs, fsync }) -> handles; always call cleanup(). */
export async function setup({ nodes = 3, tickMs = 50, fsync = true } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'mq-kv-cluster-'));
  const ids = Array.from({ length: nodes }, (_, i) => i + 1);
  const ports = {};
  for (const id of ids) ports[id] = { raft: await freePort(), web: await freePort() };
  const clusterArg = ids.map((id) => `${id}=${ports[id].raft}/${ports[id].web}`).join(',');
  const procs = new Map();

  async function start(id) {
    const args = [server, '--id', String(id), '--cluster', clusterArg, '--data-dir', join(dir, `n${id}`), '--tick-ms', String(tickMs)];
    if (!fsync) args.push('--no-fsync');
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    procs.set(id, child);
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await new Promise((resolve, reject) => {
      let out = '';
      const onData = (d) => {
        out += d;
        if (out.includes('"kv listening"')) {
          child.stdout.off('data', onData);
          child.stdout.resume();
          resolve();
        }
      };
      child.stdout.on('data', onData);
      child.once('exit', (code) => reject(new Error(`node ${id} exited with ${code}: ${err}`)));
    });
    return child;
  }

  function kill(id, signal = 'SIGKILL') {
    const child = procs.get(id);
    if (!child || child.exitCode !== null) return Promise.resolve();
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    procs.delete(id);
    return exited;
  }

  async function status(id) {
    try {
      const r = await request(ports[id].web, 'GET', '/status', undefined, 1000);
      return r.status === 200 ? r.body : null;
    } catch {
      return null;
    }
  }

  /** The node that is leader according to a majority view, or null. */
  async function leader() {
    for (const id of procs.keys()) {
      const s = await status(id);
      if (s && s.role === 'leader') return id;
    }
    return null;
  }

  async function waitForLeader(timeoutMs = 15000, exclude = null) {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      const l = await leader();
      if (l !== null && l !== exclude) return l;
      await new Promise((r) => setTimeout(r, 5));
    }
    throw new Error('no leader elected in time');
  }

  /** PUT following leader redirects; resolves { ok, index } or { ok: false, error }. */
  async function put(key, value, { via = null, deadlineMs = 5000 } = {}) {
    const end = Date.now() + deadlineMs;
    let target = via ?? [...procs.keys()][0];
    while (Date.now() < end) {
      if (!procs.has(target)) target = [...procs.keys()][0];
      try {
        const r = await request(ports[target].web, 'PUT', `/kv/${encodeURIComponent(key)}`, value, Math.max(100, end - Date.now()));
        if (r.status === 200) return { ok: true, index: r.body.index, node: target };
        if (r.status === 421 && r.body.leader && procs.has(r.body.leader)) {
          target = r.body.leader;
          continue;
        }
      } catch {
        // connection refused or reset: try another node
      }
      const others = [...procs.keys()].filter((x) => x !== target);
      target = others.length ? others[Math.floor(Math.random() * others.length)] : target;
      await new Promise((r) => setTimeout(r, 10));
    }
    return { ok: false };
  }

  async function get(id, key) {
    const r = await request(ports[id].web, 'GET', `/kv/${encodeURIComponent(key)}`);
    return r;
  }

  async function cleanup() {
    await Promise.all([...procs.keys()].map((id) => kill(id, 'SIGKILL')));
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }

  for (const id of ids) await start(id);
  return { ids, ports, dir, start, kill, status, leader, waitForLeader, put, get, cleanup, procs };
}
