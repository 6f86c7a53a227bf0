// Where one-at-a-time produce latency goes: N sends of 100 B (acks=1,
// lingerMs 0, each awaited) against a broker in its own process (flush os),
// with timestamps at send(), at the request's socket write, at the response's
// arrival and at the promise's resolution (ws wrapped in this process), and in
// the broker from frame arrival to response write (latency-stages-preload.mjs).
// Usage: node latency-stages.mjs [broker dist dir]      (N=3000)
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { MqClient } from '../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N ?? 3000);
let tSend = 0;
let tMsg = 0;
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (...args) {
  tSend = performance.now();
  return send.apply(this, args);
};
const emit = WebSocket.prototype.emit;
WebSocket.prototype.emit = function (event, ...args) {
  if (event === 'message') tMsg = performance.now();
  return emit.call(this, event, ...args);
};

const distDir = process.argv[2] ?? path.join(here, '../../broker/dist');
const dataDir = mkdtempSync(path.join(tmpdir(), 'lat-stages-'));
const child = spawn(process.execPath, ['--import', path.join(here, 'latency-stages-preload.mjs'), path.join(here, 'broker-child.mjs'), distDir, dataDir], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
// A crash must not leave the broker running.
process.once('exit', () => {
  child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});
let out = '';
const port = await new Promise((resolve, reject) => {
  child.stdout.on('data', (d) => {
    out += d;
    const m = /port (\d+)/.exec(out);
    if (m) resolve(Number(m[1]));
  });
  child.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
});
const client = new MqClient({ bootstrap: `127.0.0.1:${port}` });
try {
  const topic = `stages-${Date.now()}`;
  await client.admin().createTopics([{ topic, numPartitions: 1 }]);
  const producer = client.producer({ acks: 1, lingerMs: 0 });
  const value = Buffer.alloc(100, 7);
  for (let i = 0; i < 200; i++) await producer.send(topic, { value }); // warm-up, not counted
  const rows = [];
  for (let i = 0; i < N; i++) {
    const s = performance.now();
    await producer.send(topic, { value });
    const e = performance.now();
    rows.push([tSend - s, tMsg - tSend, e - tMsg, e - s]);
  }
  child.stdout.removeAllListeners('data');
  const broker = await new Promise((resolve) => {
    let b = '';
    child.stdout.on('data', (d) => {
      b += d;
      if (b.includes('END')) resolve(JSON.parse(b.slice(b.indexOf('DATA') + 4, b.indexOf('END'))));
    });
    child.kill('SIGUSR1');
  });
  const q = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
  const line = (name, ms) => {
    const us = ms.map((x) => x * 1000);
    console.log(`${name.padEnd(36)} p50 ${q(us, 0.5).toFixed(0)} µs  p90 ${q(us, 0.9).toFixed(0)}  p99 ${q(us, 0.99).toFixed(0)}  max ${Math.max(...us).toFixed(0)}`);
  };
  line('send() -> request written', rows.map((r) => r[0]));
  line('request written -> response read', rows.map((r) => r[1]));
  line('  broker: frame read -> response sent', broker.rows.slice(-N));
  if (broker.append.length > 0) line('  broker: log append', broker.append.slice(-N));
  line('response read -> promise resolved', rows.map((r) => r[2]));
  line('total', rows.map((r) => r[3]));
  await producer.close();
} finally {
  await client.close();
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
