// Benchmarks of @mq/log-store against plain fs on the same bytes, in one run.
// Run: npm run bench -w @mq/log-store   (builds, then runs this against dist/)
// Env: BENCH_DIR (default: os tmpdir), BENCH_MB (append volume per run, default 128),
//      BENCH_BIG_MB (the "1 GiB" log, default 1024), BENCH_HUGE_MB (RSS log, default 2048).
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as fsp from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import hdr from 'hdr-histogram-js';
import { encodeBatchSync } from '@mq/protocol/batch';
import { openLog } from '../dist/index.js';

const MiB = 1024 * 1024;
const here = fileURLToPath(import.meta.url);
const root = path.join(process.env.BENCH_DIR ?? os.tmpdir(), `mq-log-bench-${process.pid}`);

/** Pre-encoded batches of 1 KiB records totalling about `batchBytes` each (encoding is not what we measure). */
function makeBatches(batchBytes, n = 8) {
  const perBatch = Math.max(1, Math.floor(batchBytes / 1024) - 1);
  return Array.from({ length: n }, (_, j) =>
    encodeBatchSync(
      Array.from({ length: perBatch }, (_, i) => ({ key: `key-${j}-${i}`, value: Buffer.alloc(1000, 97 + ((i + j) % 26)) })),
      { now: Date.now() },
    ),
  );
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });

async function logWrite(dir, batches, totalBytes, options = {}) {
  const log = await openLog(dir, { flush: { policy: 'os' }, ...options });
  let bytes = 0;
  let i = 0;
  const t0 = performance.now();
  while (bytes < totalBytes) {
    const b = batches[i++ % batches.length];
    await log.append(b);
    bytes += b.length;
  }
  const ms = performance.now() - t0;
  await log.close();
  return { ms, bytes };
}

/**
 * Append throughput, interleaved: each round writes CHUNK bytes with every
 * writer in turn (raw fs first), so page-cache writeback and the neighbours'
 * load hit all of them alike. Throughput = bytes / summed time per writer.
 */
async function benchAppend(volumeMb) {
  const CHUNK = 4 * MiB;
  const rows = [];
  for (const kb of [16, 64, 256, 1024]) {
    const batches = makeBatches(kb * 1024);
    // Each of the 4 concurrent writers owns copies: append patches headers in place.
    const own = Array.from({ length: 4 }, () => batches.map((b) => Buffer.from(b)));
    const reps = { raw: [], log: [], noCrc: [], piped: [] };
    for (let rep = 0; rep < 3; rep++) {
      const rawFile = path.join(root, `raw-${kb}.bin`);
      const fh = await fsp.open(rawFile, 'w');
      const logs = {};
      for (const name of ['log', 'noCrc', 'piped']) logs[name] = await openLog(path.join(root, `log-${kb}-${name}`), { flush: { policy: 'os' } });
      const ms = { raw: 0, log: 0, noCrc: 0, piped: 0 };
      let rawPos = 0;
      let i = 0;
      for (let done = 0; done < volumeMb * MiB; done += CHUNK) {
        let t0 = performance.now();
        for (let n = 0; n < CHUNK; ) {
          const b = batches[i++ % batches.length];
          await fh.write(b, 0, b.length, rawPos);
          rawPos += b.length;
          n += b.length;
        }
        ms.raw += performance.now() - t0;
        for (const [name, appendOptions] of [['log', {}], ['noCrc', { validate: false }]]) {
          t0 = performance.now();
          for (let n = 0; n < CHUNK; ) {
            const b = batches[i++ % batches.length];
            await logs[name].append(b, appendOptions);
            n += b.length;
          }
          ms[name] += performance.now() - t0;
        }
        t0 = performance.now();
        let n = 0;
        await Promise.all(
          own.map(async (mine) => {
            while (n < CHUNK) {
              const b = mine[i++ % mine.length];
              n += b.length;
              await logs.piped.append(b);
            }
          }),
        );
        ms.piped += performance.now() - t0;
      }
      await fh.close();
      for (const l of Object.values(logs)) await l.close();
      for (const k of Object.keys(ms)) reps[k].push(volumeMb / (ms[k] / 1000));
      await fsp.rm(rawFile, { force: true });
      for (const name of ['log', 'noCrc', 'piped']) await fsp.rm(path.join(root, `log-${kb}-${name}`), { recursive: true, force: true });
    }
    rows.push({ batch: `${kb} KiB`, raw: median(reps.raw), log: median(reps.log), noCrc: median(reps.noCrc), piped: median(reps.piped) });
  }
  console.log(`\n### Append, flush os, 1 KiB records, ${volumeMb} MiB per writer per run, writers interleaved in 4 MiB rounds, median of 3 runs (MiB/s; ratio to raw in brackets)\n`);
  console.log('| batch | raw fs write (1 at a time) | log.append (1 at a time, CRC checked) | log.append validate:false | log.append, 4 in flight |\n|---|---|---|---|---|');
  for (const r of rows) {
    const c = (x) => `${fmt(x)} (${fmt(x / r.raw, 2)})`;
    console.log(`| ${r.batch} | ${fmt(r.raw)} | ${c(r.log)} | ${c(r.noCrc)} | ${c(r.piped)} |`);
  }
}

async function buildBigLog(dir, mb, batchKb = 16) {
  const batches = makeBatches(batchKb * 1024, 16);
  await logWrite(dir, batches, mb * MiB);
}

async function benchSequentialRead(dir) {
  const log = await openLog(dir, { flush: { policy: 'os' } });
  const segFiles = fs.readdirSync(dir).filter((f) => f.endsWith('.log')).sort();
  const res = { fresh: [], reused: [], log: [] };
  const rawRead = async (fresh) => {
    const t0 = performance.now();
    let bytes = 0;
    let buf = Buffer.allocUnsafe(MiB);
    for (const f of segFiles) {
      const fh = await fsp.open(path.join(dir, f), 'r');
      let pos = 0;
      for (;;) {
        if (fresh) buf = Buffer.allocUnsafe(MiB);
        const { bytesRead } = await fh.read(buf, 0, MiB, pos);
        if (bytesRead === 0) break;
        pos += bytesRead;
      }
      bytes += pos;
      await fh.close();
    }
    return bytes / MiB / ((performance.now() - t0) / 1000);
  };
  for (let rep = 0; rep < 5; rep++) {
    res.fresh.push(await rawRead(true));
    res.reused.push(await rawRead(false));
    const t0 = performance.now();
    let next = log.logStartOffset;
    let lbytes = 0;
    while (next < log.logEndOffset) {
      const r = await log.read(next, MiB);
      lbytes += r.records.length;
      next = r.nextOffset;
    }
    res.log.push(lbytes / MiB / ((performance.now() - t0) / 1000));
  }
  const fresh = median(res.fresh);
  console.log(`\n### Sequential read of a ${fmt(log.size / MiB)} MiB log in 1 MiB reads (page cache warm), median of 5 (MiB/s)\n`);
  console.log('| raw fs read, new buffer per read | raw fs read, one reused buffer | log.read | log.read / raw (new buffer) |\n|---|---|---|---|');
  console.log(`| ${fmt(fresh)} | ${fmt(median(res.reused))} | ${fmt(median(res.log))} | ${fmt(median(res.log) / fresh, 2)} |`);
  await log.close();
}

async function benchRandomRead(dir) {
  const log = await openLog(dir, { flush: { policy: 'os' } });
  const n = 20_000;
  const end = log.logEndOffset;
  for (let i = 0; i < 2000; i++) await log.read(Math.floor(Math.random() * end), 16 * 1024); // warm-up
  console.log(`\n### read(offset) at random offsets of a ${fmt(log.size / MiB)} MiB log (one 16 KiB batch each), 3 runs of ${n} reads, µs\n`);
  console.log('| run | p50 | p99 | p99.9 | max |\n|---|---|---|---|---|');
  for (let run = 1; run <= 3; run++) {
    const h = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
    for (let i = 0; i < n; i++) {
      const off = Math.floor(Math.random() * end);
      const t0 = process.hrtime.bigint();
      const r = await log.read(off, 16 * 1024);
      h.recordValue(Number(process.hrtime.bigint() - t0) / 1000);
      if (r.records.length === 0) throw new Error(`empty read at ${off}`);
    }
    console.log(`| ${run} | ${h.getValueAtPercentile(50)} | ${h.getValueAtPercentile(99)} | ${h.getValueAtPercentile(99.9)} | ${fmt(h.maxValue)} |`);
  }
  await log.close();
}

async function benchFlushAlways(seconds = 3) {
  const rows = [];
  const batch = makeBatches(1024, 1)[0]; // one 1 KiB record per append
  for (const concurrency of [1, 64]) {
    const dir = path.join(root, `always-${concurrency}`);
    const log = await openLog(dir, { flush: { policy: 'always' } });
    let appends = 0;
    const until = performance.now() + seconds * 1000;
    const lat = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        const b = Buffer.from(batch);
        while (performance.now() < until) {
          const t0 = process.hrtime.bigint();
          await log.append(b);
          lat.recordValue(Number(process.hrtime.bigint() - t0) / 1000);
          appends++;
        }
      }),
    );
    rows.push({ what: `log.append, flush always, ${concurrency} appender(s)`, rate: appends / seconds, p50: lat.getValueAtPercentile(50), p99: lat.getValueAtPercentile(99) });
    await log.close();
    await fsp.rm(dir, { recursive: true, force: true });
  }
  // Baseline: plain fs, write + fdatasync per append.
  const fh = await fsp.open(path.join(root, 'fsync-each.bin'), 'w');
  let n = 0;
  let pos = 0;
  const until = performance.now() + seconds * 1000;
  const lat = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 10_000_000, numberOfSignificantValueDigits: 3 });
  while (performance.now() < until) {
    const t0 = process.hrtime.bigint();
    await fh.write(batch, 0, batch.length, pos);
    await fh.datasync();
    lat.recordValue(Number(process.hrtime.bigint() - t0) / 1000);
    pos += batch.length;
    n++;
  }
  await fh.close();
  await fsp.rm(path.join(root, 'fsync-each.bin'), { force: true });
  rows.push({ what: 'raw fs write + fdatasync per append', rate: n / seconds, p50: lat.getValueAtPercentile(50), p99: lat.getValueAtPercentile(99) });
  console.log(`\n### Durable appends (1 KiB record each), ${seconds} s each\n`);
  console.log('| writer | appends/s | p50 µs | p99 µs |\n|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.what} | ${fmt(r.rate)} | ${r.p50} | ${r.p99} |`);
}

function runChild(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', here, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (args[0] === '--child-append' && out.includes('ready')) setTimeout(() => child.kill('SIGKILL'), 300);
    });
    child.on('exit', (code, signal) => (code === 0 || signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ${args[0]} failed: ${code}`))));
  });
}

async function benchReopenAfterKill(bigMb) {
  console.log('\n### Reopen after SIGKILL (default 1 GiB segments; the child appended ~1 GiB of 64 KiB batches, then was killed mid-stream), 3 trials each\n');
  console.log('| flush policy of the killed writer | trial | log size MiB | reopen ms | bytes verified | bytes cut |\n|---|---|---|---|---|---|');
  for (const policy of ['interval', 'os']) {
    for (let trial = 1; trial <= 3; trial++) {
      const dir = path.join(root, `kill-${policy}`);
      await runChild(['--child-append', dir, policy, String(bigMb)]);
      const t0 = performance.now();
      const log = await openLog(dir);
      const ms = performance.now() - t0;
      const row = { size: log.size, scanned: log.recovery.scannedBytes, truncated: log.recovery.truncated?.bytes ?? 0 };
      await log.close();
      await fsp.rm(dir, { recursive: true, force: true });
      console.log(`| ${policy === 'interval' ? 'interval (1000 ms)' : 'os'} | ${trial} | ${fmt(row.size / MiB)} | ${fmt(ms, 1)} | ${fmt(row.scanned)} | ${row.truncated} |`);
    }
  }
}

async function benchRss(sizesMb) {
  console.log('\n### Memory of a process serving reads from logs of different sizes (fresh process each)\n');
  console.log('| log size | RSS after open MiB | RSS after 20k random reads + full scan MiB | JS heap used MiB | Buffer memory (arrayBuffers) MiB |\n|---|---|---|---|---|');
  for (const mb of sizesMb) {
    const dir = path.join(root, `rss-${mb}`);
    await buildBigLog(dir, mb, 64);
    const out = JSON.parse(await runChild(['--child-rss', dir]));
    console.log(`| ${fmt(mb)} MiB | ${fmt(out.open / MiB, 1)} | ${fmt(out.after / MiB, 1)} | ${fmt(out.heap / MiB, 1)} | ${fmt(out.buffers / MiB, 1)} |`);
    await fsp.rm(dir, { recursive: true, force: true });
  }
}

async function childAppend(dir, policy, mb) {
  const flush = policy === 'interval' ? { policy: 'interval', intervalMs: 1000 } : { policy: 'os' };
  const log = await openLog(dir, { flush });
  const batches = makeBatches(64 * 1024, 16);
  let bytes = 0;
  let i = 0;
  while (bytes < mb * MiB) {
    const b = batches[i++ % batches.length];
    await log.append(b);
    bytes += b.length;
  }
  process.stdout.write('ready\n');
  for (;;) {
    await log.append(batches[i++ % batches.length]);
    await new Promise((r) => setImmediate(r));
  }
}

async function childRss(dir) {
  const log = await openLog(dir);
  globalThis.gc?.();
  const open = process.memoryUsage().rss;
  const end = log.logEndOffset;
  for (let i = 0; i < 20_000; i++) await log.read(Math.floor(Math.random() * end), 64 * 1024);
  let next = log.logStartOffset;
  while (next < end) next = (await log.read(next, MiB)).nextOffset;
  globalThis.gc?.();
  const mu = process.memoryUsage();
  process.stdout.write(JSON.stringify({ open, after: mu.rss, heap: mu.heapUsed, buffers: mu.arrayBuffers }));
  await log.close();
}

async function main() {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === '--child-append') return childAppend(args[0], args[1], Number(args[2]));
  if (mode === '--child-rss') return childRss(args[0]);
  const volumeMb = Number(process.env.BENCH_MB ?? 128);
  const bigMb = Number(process.env.BENCH_BIG_MB ?? 1024);
  const hugeMb = Number(process.env.BENCH_HUGE_MB ?? 2048);
  fs.mkdirSync(root, { recursive: true });
  console.log(`# @mq/log-store benchmark — ${new Date().toISOString()}, node ${process.version}, ${os.cpus().length} CPUs, dir ${root}`);
  try {
    await benchAppend(volumeMb);
    const big = path.join(root, 'big');
    await buildBigLog(big, bigMb, 16);
    await benchSequentialRead(big);
    await benchRandomRead(big);
    await fsp.rm(big, { recursive: true, force: true });
    await benchFlushAlways();
    await benchReopenAfterKill(bigMb);
    await benchRss([100, hugeMb]);
  } finally {
    await fsp.rm(root, { recursive: true, force: true });
  }
}

await main();
