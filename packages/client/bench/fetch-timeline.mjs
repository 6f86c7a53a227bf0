// Where a consume run's time goes, fetch by fetch: fills a one-partition
// topic on a broker in its own process, then reads it from the beginning in
// a fresh consumer process (as `mq bench consume` does) that times every
// fetch from request to decoded response and the gaps between fetches.
// Prints, per run: total time, number of fetches, the median fetch round
// trip and the gaps. A consumer whose fetches run back to back with
// round trips well above an idle client's is bound by its own thread.
//   npm run build -w @mq/cli && node packages/client/bench/fetch-timeline.mjs
// Env: N records (150,000), SIZE value bytes (1024), RUNS consumer runs (3).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startBrokerProcess } from './broker-process.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.N ?? 150_000);
const SIZE = Number(process.env.SIZE ?? 1024);
const RUNS = Number(process.env.RUNS ?? 3);
const HEAP = ['--min-semi-space-size=16', '--max-semi-space-size=32'];

if (process.argv[2] === 'consume') {
  // Child: read N records of topic `t` from the broker at argv[3].
  const { MqClient } = await import(pathToFileURL(path.join(here, '../dist/index.js')).href);
  const { Connection } = await import(pathToFileURL(path.join(here, '../dist/connection.js')).href);
  const fetches = [];
  const request = Connection.prototype.request;
  Connection.prototype.request = function (api, body, opts) {
    if (api !== 'fetch') return request.call(this, api, body, opts);
    const sent = performance.now();
    return request.call(this, api, body, opts).then((r) => {
      fetches.push([sent, performance.now()]);
      return r;
    });
  };
  const client = new MqClient({ bootstrap: process.argv[3] });
  await client.connect();
  const consumer = client.consumer({ autoOffsetReset: 'earliest' });
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  consumer.assign([{ topic: 't', partition: 0, offset: 0 }]);
  let got = 0;
  let bytes = 0;
  while (got < N) {
    for (const r of await consumer.poll(1000)) {
      bytes += r.value.length;
      got++;
    }
  }
  const total = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const rtts = fetches.map(([s, e]) => e - s).sort((a, b) => a - b);
  const gaps = fetches.slice(1).map(([s], i) => s - fetches[i][1]).sort((a, b) => a - b);
  const median = (xs) => xs[xs.length >> 1];
  console.log(
    `${total.toFixed(0)} ms (${(bytes / total / 1e3).toFixed(0)} MB/s, consumer CPU ${(((cpu.user + cpu.system) / 1e3 / total) * 100).toFixed(0)}% of it), ${fetches.length} fetches; ` +
      `first answered at +${(fetches[0][1] - t0).toFixed(1)} ms; round trip median ${median(rtts).toFixed(2)} ms, p90 ${rtts[Math.floor(rtts.length * 0.9)].toFixed(2)} ms; ` +
      `gap between fetches median ${median(gaps).toFixed(2)} ms, total ${gaps.reduce((a, b) => a + b, 0).toFixed(1)} ms`,
  );
  await client.close();
  process.exit(0);
}

const { bootstrap, child: broker } = await startBrokerProcess({ tag: 'fetch-timeline' });
const { MqClient } = await import(pathToFileURL(path.join(here, '../dist/index.js')).href);
const client = new MqClient({ bootstrap });
await client.admin().createTopics([{ topic: 't', numPartitions: 1 }]);
const producer = client.producer({ lingerMs: 5 });
const value = Buffer.alloc(SIZE, 1);
for (let done = 0; done < N; ) {
  const n = Math.min(10_000, N - done);
  await Promise.all(Array.from({ length: n }, () => producer.send('t', { value })));
  done += n;
}
await client.close();
console.log(`${N} records of ${SIZE} B, one partition; each run a fresh consumer process:`);
for (let i = 0; i < RUNS; i++) {
  process.stdout.write(execFileSync(process.execPath, [...HEAP, fileURLToPath(import.meta.url), 'consume', bootstrap], { encoding: 'utf8' }));
}
broker.kill('SIGTERM');
