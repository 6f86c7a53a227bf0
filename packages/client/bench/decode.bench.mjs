// Consumer-side decode cost alone (no network): 1 MiB fetch responses of
// N-byte records, drained into poll()-sized arrays with every value read,
// for each client build given (A/B in one process, interleaved).
//   npm run build -w @mq/client && node packages/client/bench/decode.bench.mjs [dist dir ...]
// Env: SIZE value bytes (100), ROUNDS (7), MB per round (200).
// PROCESSES=1: each round runs each build in a fresh process (alternating), so
// neither build's code shares a process (and the JIT state of Node's own
// Buffer code) with the other's: in one process, a build against a copy of
// itself measured 0.84x-1.27x (client README, issue 13's decode).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { encodeBatchSync } from '@mq/protocol/batch';

const here = path.dirname(fileURLToPath(import.meta.url));
const SIZE = Number(process.env.SIZE ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const MB = Number(process.env.MB ?? 200);
const dists = process.argv.slice(2);
if (dists.length === 0) dists.push(path.join(here, '../dist'));
const PROCESSES = process.env.PROCESSES === '1';
const CHILD = process.env.DECODE_BENCH_CHILD === '1';
const builds = PROCESSES ? dists.map((name) => ({ name, rates: [] })) : await Promise.all(
  dists.map(async (d) => ({ name: d, CompletedFetch: (await import(pathToFileURL(path.resolve(d, 'internal.js')).href)).CompletedFetch, rates: [] })),
);

// One fetch response: batches of ~16 KiB up to 1 MiB.
const value = Buffer.alloc(SIZE, 0x61);
const perBatch = Math.max(1, Math.floor(16384 / (SIZE + 10)));
const batches = [];
let offset = 0;
let bytes = 0;
while (bytes < 1 << 20) {
  const b = encodeBatchSync(Array.from({ length: perBatch }, () => ({ value })), { baseOffset: offset });
  offset += perBatch;
  bytes += b.length;
  batches.push(b);
}
const response = Buffer.concat(batches);
const recordsPerResponse = offset;
const responses = Math.ceil((MB * 1e6) / response.length);

async function run(CompletedFetch) {
  let n = 0;
  let sum = 0;
  const c0 = process.cpuUsage();
  for (let i = 0; i < responses; i++) {
    const f = new CompletedFetch('t', 0, response, 0, 0, true);
    while (!f.done) {
      const out = [];
      await f.drain(out, 500, 0);
      for (let j = 0; j < out.length; j++) sum += out[j].value.length;
      n += out.length;
    }
  }
  const c = process.cpuUsage(c0);
  const s = (c.user + c.system) / 1e6; // CPU seconds of the whole process (GC threads included): less swayed by other load than wall time
  if (sum !== n * SIZE || n !== responses * recordsPerResponse) throw new Error('decoded wrong');
  return n / s;
}

if (CHILD) {
  // One build, warmed up by a first run: prints the second run's rate.
  await run(builds[0].CompletedFetch);
  console.log(await run(builds[0].CompletedFetch));
  process.exit(0);
}
for (let r = 0; r < ROUNDS; r++) {
  for (const b of r % 2 ? [...builds].reverse() : builds) {
    if (PROCESSES) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), b.name], { env: { ...process.env, DECODE_BENCH_CHILD: '1', PROCESSES: '' } });
      b.rates.push(Number(out.toString().trim()));
    } else b.rates.push(await run(b.CompletedFetch));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`decode ${responses} responses of ${recordsPerResponse} records (${SIZE} B values, CRC checked), records per CPU second, median of ${ROUNDS}${PROCESSES ? ' (a fresh process per build and round)' : ''}`);
const base = median(builds[0].rates);
for (const b of builds) {
  const m = median(b.rates);
  console.log(`${b.name}: ${(m / 1e6).toFixed(2)} M records/s, ${(1e9 / m).toFixed(0)} ns CPU/record, x${(m / base).toFixed(2)}`);
}
