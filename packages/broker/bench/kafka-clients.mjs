// kafkajs and @platformatic/kafka against mq's Kafka listener, side by side
// with @mq/client against mq's own protocol, in the same run, on one real `mq broker start` process
// (flush os, acks 1), plus a raw Kafka-wire producer (pre-built batches,
// @mq/kafka-protocol frames) that shows what the listener takes when the
// client costs nothing. For each: records/s, and the CPU seconds the client
// process and the broker process spent (from /proc), per million records.
// Needs `npm run build` first.
// Usage: node bench/kafka-clients.mjs [--records 100000] [--batch 500] [--in-flight 8]
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { MqClient } from '@mq/client';
import { encodeBatchSync } from '@mq/protocol/batch';
import { FrameSplitter, ProduceApi, encodeRequest } from '@mq/kafka-protocol';
import { freePort } from '../../../tools/free-port.mjs';
import { arg, CLI } from './bench-util.mjs';

const RECORDS = arg('records', 100_000);
const BATCH = arg('batch', 500);
const IN_FLIGHT = arg('in-flight', 8);
const TICK = 100; // clock ticks per second of /proc/<pid>/stat

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / TICK;
}

const dir = await mkdtemp(path.join(tmpdir(), 'mq-kafka-bench-'));
const [port, httpPort, kafkaPort] = [await freePort(), await freePort(), await freePort()];
const broker = spawn(process.execPath, [CLI, 'broker', 'start', '--data-dir', dir, '--port', String(port), '--http-port', String(httpPort), '--kafka-port', String(kafkaPort), '--config-set', 'log.flush.policy=os', '--config-set', 'group.initial.rebalance.delay.ms=0', '--log-format', 'json'], { stdio: ['ignore', 'pipe', 'inherit'] });
await new Promise((resolve, reject) => {
  let out = '';
  broker.stdout.on('data', (d) => {
    out += d;
    if (out.includes('"broker listening"')) resolve();
  });
  broker.once('exit', (code) => reject(new Error(`broker exited ${code}`)));
});

// @platformatic/kafka 2.x is written for Node 22 (Promise.withResolvers): on Node 20 supply that one function.
Promise.withResolvers ??= () => {
  let resolve;
  let reject;
  const promise = new Promise((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
};
const pk = await import('@platformatic/kafka');
const bootstrapBrokers = [`127.0.0.1:${kafkaPort}`];

const mq = new MqClient({ bootstrap: `127.0.0.1:${port}` });
const kafka = new Kafka({ clientId: 'bench', brokers: [`127.0.0.1:${kafkaPort}`], logLevel: logLevel.NOTHING });
const rows = [];

async function measure(name, fn) {
  const [c0, b0, t0] = [process.cpuUsage(), cpuSeconds(broker.pid), performance.now()];
  const n = await fn();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const clientCpu = (c.user + c.system) / 1e6;
  const brokerCpu = cpuSeconds(broker.pid) - b0;
  rows.push({ name, recordsPerSec: Math.round(n / (ms / 1000)), clientCpuSecPerM: +((clientCpu / n) * 1e6).toFixed(2), brokerCpuSecPerM: +((brokerCpu / n) * 1e6).toFixed(2) });
}

for (const size of [100, 1024]) {
  const value = Buffer.alloc(size, 97);
  const n = size === 100 ? RECORDS : Math.floor(RECORDS / 2);
  const batches = Math.ceil(n / BATCH);
  const kjsTopic = `kjs-${size}`;
  const mqTopic = `mq-${size}`;
  const rawTopic = `raw-${size}`;
  const platTopic = `plat-${size}`;
  for (const t of [kjsTopic, mqTopic, rawTopic, platTopic]) await mq.admin().createTopic(t, { numPartitions: 1 });

  // kafkajs producer: BATCH records per send, IN_FLIGHT sends at once, acks 1.
  const kp = kafka.producer();
  await kp.connect();
  await measure(`kafkajs produce ${size} B`, async () => {
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches) {
        next++;
        await kp.send({ topic: kjsTopic, acks: 1, messages: Array.from({ length: BATCH }, () => ({ value })) });
      }
    }));
    return batches * BATCH;
  });
  await kp.disconnect();

  // @platformatic/kafka producer: the same records, BATCH per send, IN_FLIGHT sends at once, acks 1.
  const pp = new pk.Producer({ clientId: 'bench-plat', bootstrapBrokers, acks: 1 });
  await measure(`@platformatic/kafka produce ${size} B`, async () => {
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches) {
        next++;
        await pp.send({ messages: Array.from({ length: BATCH }, () => ({ topic: platTopic, partition: 0, value })) });
      }
    }));
    return batches * BATCH;
  });
  await pp.close();

  // @mq/client producer: the same records through sendBatch.
  const mp = mq.producer({ acks: 1 });
  await measure(`@mq/client produce ${size} B`, async () => {
    let next = 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, async () => {
      while (next < batches) {
        next++;
        await mp.sendBatch(mqTopic, Array.from({ length: BATCH }, () => ({ partition: 0, value })));
      }
    }));
    return batches * BATCH;
  });

  // Raw Kafka wire: one pre-built batch sent again and again (the listener and the log, no client work).
  const batch = encodeBatchSync(Array.from({ length: BATCH }, () => ({ value })));
  await measure(`raw Kafka wire produce ${size} B`, async () => {
    const socket = net.connect(kafkaPort, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const frames = new FrameSplitter(1 << 24);
    let answered = 0;
    let sent = 0;
    await new Promise((resolve) => {
      const send = () => {
        sent++;
        socket.write(encodeRequest(ProduceApi, 8, sent, 'raw', { acks: 1, timeoutMs: 30_000, topicData: [{ name: rawTopic, partitionData: [{ index: 0, records: batch }] }] }));
      };
      socket.on('data', (d) => {
        for (const _ of frames.push(d)) {
          answered++;
          if (answered === batches) resolve();
          else if (sent < batches) send();
        }
      });
      for (let i = 0; i < Math.min(IN_FLIGHT, batches); i++) send();
    });
    socket.destroy();
    return batches * BATCH;
  });

  // kafkajs consumer (a group, eachBatch) reading the kafkajs topic from the start.
  const kc = kafka.consumer({ groupId: `bench-${size}`, maxBytes: 8 << 20, maxBytesPerPartition: 4 << 20 });
  await kc.connect();
  await kc.subscribe({ topic: kjsTopic, fromBeginning: true });
  await measure(`kafkajs consume ${size} B`, async () => {
    let seen = 0;
    await new Promise((resolve) => {
      kc.run({ eachBatch: async ({ batch: b }) => { seen += b.messages.length; if (seen >= batches * BATCH) resolve(); } });
    });
    return seen;
  });
  await kc.disconnect();

  // @platformatic/kafka consumer (a group, a stream from the earliest offset) reading its topic.
  const pc = new pk.Consumer({ groupId: `bench-plat-${size}`, clientId: 'bench-plat', bootstrapBrokers, maxBytes: 8 << 20 });
  await measure(`@platformatic/kafka consume ${size} B`, async () => {
    const stream = await pc.consume({ autocommit: false, topics: [platTopic], mode: pk.MessagesStreamModes.EARLIEST });
    let seen = 0;
    await new Promise((resolve) => {
      stream.on('data', () => {
        if (++seen === batches * BATCH) resolve();
      });
    });
    await stream.close();
    return seen;
  });
  await pc.close(true);

  // @mq/client consumer reading its topic from the start.
  const mc = mq.consumer({ autoOffsetReset: 'earliest' });
  mc.assign([{ topic: mqTopic, partition: 0 }]);
  await measure(`@mq/client consume ${size} B`, async () => {
    let seen = 0;
    for await (const _ of mc) if (++seen >= batches * BATCH) break;
    return seen;
  });
  await mc.close();
}

await mq.close();
broker.kill('SIGTERM');
await new Promise((r) => broker.once('exit', r));
await rm(dir, { recursive: true, force: true });
console.log(`records ${RECORDS} (1 KiB: ${Math.floor(RECORDS / 2)}), ${BATCH} per batch, ${IN_FLIGHT} in flight, acks 1, flush os`);
console.table(rows);
