#!/usr/bin/env node
// A peer's own client driven directly, without the bench harness (no
// promise, clock read or histogram per record): the reference the adapters
// in packages/bench/src/peers are held to ("peers at their best").
//   node tools/peer-direct.mjs redis ADDRESS [--seconds 5] [--size 100] [--batch 1000] [--in-flight 2]
//   node tools/peer-direct.mjs rabbitmq ADDRESS [--seconds 5] [--size 100] [--window 2000] [--chunk 100]
// Prints one JSON line: { system, recordsPerSec, records, seconds, parameters }.
// tools/peer-bench.mjs runs it beside the adapter's produce-1p-100B.
import { createRequire } from 'node:module';
import { parseArgs } from 'node:util';

const require = createRequire(import.meta.url);
const { values: a, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '1' },
    size: { type: 'string', default: '100' },
    batch: { type: 'string', default: '1000' },
    'in-flight': { type: 'string', default: '2' },
    window: { type: 'string', default: '2000' },
    chunk: { type: 'string', default: '100' },
  },
});
const [system, address] = positionals;
if (!['redis', 'rabbitmq'].includes(system) || !address) {
  process.stderr.write('usage: peer-direct.mjs redis|rabbitmq host:port [options]\n');
  process.exit(2);
}
const [host, port] = address.split(',')[0].split(':');
const SECONDS = Number(a.seconds);
const WARMUP = Number(a.warmup);
const value = Buffer.alloc(Number(a.size), 0x61);
const now = () => performance.now();

/** Runs `drive(until)` for the warm-up, then measured; `drive` resolves with the records acknowledged. */
async function measure(drive) {
  await drive(now() + WARMUP * 1000);
  const t0 = now();
  const records = await drive(t0 + SECONDS * 1000);
  return { records, seconds: (now() - t0) / 1000 };
}

async function redis() {
  const { Redis } = require('ioredis');
  const r = new Redis({ host, port: Number(port), lazyConnect: true });
  await r.connect();
  const key = `direct-${process.pid}`;
  await r.del(key);
  const batch = Number(a.batch);
  const inFlight = Number(a['in-flight']);
  // `inFlight` loops, each: a pipeline of `batch` XADDs, exec, await, again.
  const drive = async (until) => {
    let acked = 0;
    const lane = async () => {
      while (now() < until) {
        const p = r.pipeline();
        for (let i = 0; i < batch; i++) p.xadd(key, '*', 'v', value);
        const res = await p.exec();
        if (res.some(([err]) => err)) throw res.find(([err]) => err)[0];
        acked += batch;
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    return acked;
  };
  const m = await measure(drive);
  await r.del(key);
  r.disconnect();
  return { ...m, parameters: { batch, inFlight, size: value.length } };
}

async function rabbitmq() {
  const rabbit = require('rabbitmq-stream-js-client');
  // The Debian 3.10 server needs the same workaround as the adapter (see packages/bench/src/peers/rabbitmq.ts).
  const { Connection } = require('rabbitmq-stream-js-client/dist/connection.js');
  Connection.prototype.exchangeCommandVersions = async () => true;
  const client = await rabbit.connect({ hostname: host, port: Number(port), username: 'guest', password: 'guest', vhost: '/' });
  const stream = `direct-${process.pid}`;
  await client.deleteStream({ stream }).catch(() => undefined);
  await client.createStream({ stream, arguments: {} });
  const chunk = Number(a.chunk);
  const window = Number(a.window);
  const publisher = await client.declarePublisher({ stream, maxChunkLength: chunk });
  let confirmed = 0;
  let wake = null;
  publisher.on('publish_confirm', (err, ids) => {
    if (err !== null) throw new Error(`publish error ${err}`);
    confirmed += ids.length;
    if (wake) {
      const w = wake;
      wake = null;
      w();
    }
  });
  // send() without awaiting it, at most `window` unconfirmed; the client packs `chunk` records a frame.
  let sent = 0;
  const drive = async (until) => {
    const from = confirmed;
    while (now() < until) {
      while (sent - confirmed < window) {
        publisher.send(value).catch((err) => {
          throw err;
        });
        sent++;
      }
      await new Promise((r) => (wake = r));
    }
    while (confirmed < sent) await new Promise((r) => (wake = r));
    return confirmed - from;
  };
  const m = await measure(drive);
  await publisher.close().catch(() => undefined);
  await client.deleteStream({ stream }).catch(() => undefined);
  await client.close();
  return { ...m, parameters: { window, chunk, size: value.length } };
}

const m = await (system === 'redis' ? redis() : rabbitmq());
process.stdout.write(JSON.stringify({ system, recordsPerSec: m.records / m.seconds, ...m }) + '\n');
