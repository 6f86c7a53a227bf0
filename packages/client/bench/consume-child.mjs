// One consumer run for consume.bench.mjs: reads `records` records of `topic`
// from the beginning with the @mq/client build in <client dist dir>, touching
// every value (as an application would), and prints one JSON line.
// Usage: node consume-child.mjs <client dist dir> <bootstrap> <topic> <partitions> <records> <mode>
//   mode: poll (consumer.poll()) | batches (consumer.pollBatches(), when the build has it)
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [distDir, bootstrap, topic, partitionsArg, recordsArg, mode = 'poll'] = process.argv.slice(2);
const partitions = Number(partitionsArg);
const records = Number(recordsArg);
// The parent holds our stdin: if it goes away mid-run, so do we.
process.stdin.on('end', () => process.exit(2));
process.stdin.resume();
const { MqClient } = await import(pathToFileURL(path.resolve(distDir, 'index.js')).href);
const client = new MqClient({ bootstrap });
// PARTITION_MAX_BYTES / FETCH_MAX_BYTES / CHECK_CRCS=0 (env) override the consumer's defaults.
const consumer = client.consumer({
  autoOffsetReset: 'earliest',
  ...(process.env.PARTITION_MAX_BYTES ? { partitionMaxBytes: Number(process.env.PARTITION_MAX_BYTES) } : {}),
  ...(process.env.FETCH_MAX_BYTES ? { fetchMaxBytes: Number(process.env.FETCH_MAX_BYTES) } : {}),
  ...(process.env.CHECK_CRCS === '0' ? { checkCrcs: false } : {}),
});
const all = [];
for (let p = 0; p < partitions; p++) all.push({ topic, partition: p, offset: 0 });
consumer.assign(all);
let n = 0;
let bytes = 0;
const t0 = process.hrtime.bigint();
const c0 = process.cpuUsage();
if (mode === 'batches') {
  while (n < records) {
    for (const batch of await consumer.pollBatches(1000)) {
      for (const r of batch) {
        bytes += r.value === null ? 0 : r.value.length;
        n++;
      }
    }
  }
} else {
  while (n < records) {
    const got = await consumer.poll(1000);
    for (let i = 0; i < got.length; i++) {
      const v = got[i].value;
      bytes += v === null ? 0 : v.length;
      n++;
    }
  }
}
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const cpu = process.cpuUsage(c0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
await consumer.close();
await client.close();
process.stdin.destroy();
process.stdout.write(JSON.stringify({ records: n, bytes, seconds, cpuSeconds, userSeconds: cpu.user / 1e6, systemSeconds: cpu.system / 1e6, recordsPerSec: n / seconds, mbPerSec: bytes / seconds / 1e6 }) + '\n');
