// The producer's own CPU cost per record, without a network or broker: a stub
// cluster answers every produce request at once. Shows what send() and
// sendBatch() cost in the client (partitioning, encoding, batching,
// promises), side by side.
// Run: npm run build -w @mq/client && node packages/client/bench/send-path.bench.mjs
import { decodeRequest } from '@mq/protocol/wire';
import { Producer } from '../dist/producer/producer.js';
import { Retrier } from '../dist/retrier.js';

const N = Number(process.env.N ?? 500_000);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PARTITIONS = Number(process.env.PARTITIONS ?? 4);
const value = 'v'.repeat(Number(process.env.VALUE_BYTES ?? 100));

const topicMeta = {
  name: 't',
  topicId: '',
  internal: false,
  partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1], offlineReplicas: [], error: 'NONE' })),
};
const next = new Map();
const conn = {
  // Answers like a broker: base offsets per partition. The frame is encoded as on the real path and decoded
  // (protobufjs, views of the batches) to find the record counts.
  async requestEncoded(_body, encode, options) {
    const req = decodeRequest(encode(1, 0, 'bench')).produce;
    options?.onWritten?.(); // the frame is "written": a pooled frame goes back as on a socket
    return {
      topics: req.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => {
          const records = Buffer.from(p.records.buffer, p.records.byteOffset, p.records.byteLength);
          const base = next.get(p.partition) ?? 0;
          let count = 0;
          for (let pos = 0; pos < records.length; ) {
            count += records.readInt32BE(pos + 57);
            pos += records.readInt32BE(pos + 8) + 12;
          }
          next.set(p.partition, base + count);
          return { partition: p.partition, errorCode: 0, baseOffset: base };
        }),
      })),
    };
  },
};
const cluster = {
  options: { requestTimeoutMs: 30_000, retry: {} },
  retrier: new Retrier(),
  maxFrameBytes: 64 << 20,
  cachedTopic: () => topicMeta,
  leaderOf: () => 1,
  brokerConnection: async () => conn,
  openConnection: () => conn,
  invalidate() {},
  refreshMetadata: async () => {},
};

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

const producer = new Producer(cluster, { acks: 1, lingerMs: 2, batchBytes: 64 * 1024, bufferMemory: 64 << 20, maxRequestBytes: 8 << 20 });
const keys = Array.from({ length: 1024 }, (_, i) => `k${i}`);
const cases = [
  [
    'send() keyed, awaited in windows of 10k',
    async () => {
      let w = [];
      for (let i = 0; i < N; i++) {
        w.push(producer.send('t', { key: keys[i & 1023], value }));
        if (w.length === 10_000) {
          await Promise.all(w);
          w = [];
        }
      }
      await Promise.all(w);
    },
  ],
  [
    'send() unkeyed (sticky)',
    async () => {
      let w = [];
      for (let i = 0; i < N; i++) {
        w.push(producer.send('t', { value }));
        if (w.length === 10_000) {
          await Promise.all(w);
          w = [];
        }
      }
      await Promise.all(w);
    },
  ],
  [
    'write() keyed (fire and forget), flush at the end',
    async () => {
      for (let i = 0; i < N; i++) if (!producer.write('t', { key: keys[i & 1023], value })) await producer.drain();
      await producer.flush();
    },
  ],
  [
    'sendBatch() of 1000 keyed',
    async () => {
      const batch = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}`, value }));
      const pending = [];
      for (let i = 0; i < N; i += 1000) {
        pending.push(producer.sendBatch('t', batch));
        if (pending.length >= 16) await pending.shift();
      }
      await Promise.all(pending);
    },
  ],
];
const rates = cases.map(() => []);
for (let r = 0; r < ROUNDS + 1; r++) {
  for (const [i, [, fn]] of cases.entries()) {
    // CPU time, not wall time: the client's own cost, less disturbed by other load on the machine.
    const c0 = process.cpuUsage();
    await fn();
    const c = process.cpuUsage(c0);
    if (r > 0) rates[i].push(N / ((c.user + c.system) / 1e6));
  }
}
await producer.close();
console.log(`records: ${N} x ${value.length} B values, ${PARTITIONS} partitions, stub broker, median of ${ROUNDS} interleaved rounds, node ${process.version}`);
const w = Math.max(...cases.map(([n]) => n.length));
cases.forEach(([name], i) => console.log(`${name.padEnd(w)}  ${(median(rates[i]) / 1e6).toFixed(2)} M records per CPU-second`));
