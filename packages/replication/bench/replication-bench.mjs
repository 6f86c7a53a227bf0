// Replication benchmark: one partition led by broker 1 with real @mq/log-store
// logs in temporary directories, followers fetching through an in-process
// "network" (no sockets: this measures the replication layer and the disk).
// Compares replication factor 1 with RF 3 at acks=1 and acks=all, under flush
// "os" and flush "always", interleaved over several rounds; prints medians.
// Then moves leadership round the three replicas and times, for each move,
// the replication layer's part of a failover: from the old leader resigning to
// the first acks=all produce answered by the new one (new leader created,
// followers moved over, truncated if needed, caught up). Election and
// metadata propagation are the controller's and are not included.
//
//   npm run bench -w @mq/replication [-- --seconds 2 --rounds 3 --inflight 32 --records 10 --bytes 100 --failovers 50]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { encodeBatchSync } from '@mq/protocol/batch';
import { openLog } from '@mq/log-store';
import { createFollowerFetcher, createPartitionLeader, handleFetch, handleOffsetForLeaderEpoch, systemTimers } from '../dist/index.js';
import { MemoryCheckpoint } from '../dist/testing/index.js';

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '3' },
    inflight: { type: 'string', default: '32' },
    records: { type: 'string', default: '10' },
    bytes: { type: 'string', default: '100' },
    failovers: { type: 'string', default: '50' },
  },
});
const SECONDS = Number(args.seconds);
const ROUNDS = Number(args.rounds);
const INFLIGHT = Number(args.inflight);
const RECORDS = Number(args.records);
const BYTES = Number(args.bytes);
const FAILOVERS = Number(args.failovers);

const value = Buffer.alloc(BYTES, 'x');
const template = encodeBatchSync(
  Array.from({ length: RECORDS }, () => ({ value })),
  { now: Date.now() },
);

async function runOnce({ rf, acks, flush }) {
  const dirs = [];
  const logs = [];
  for (let i = 0; i < rf; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'mq-repl-bench-'));
    dirs.push(dir);
    logs.push(await openLog(dir, { flush: { policy: flush } }));
  }
  const ids = logs.map((_, i) => i + 1);
  const leader = await createPartitionLeader(
    { topic: 'bench', partition: 0, brokerId: 1, leaderEpoch: 1, partitionEpoch: 1, replicas: ids, isr: ids, minInsyncReplicas: Math.min(2, rf) },
    {
      log: logs[0],
      clock: Date.now,
      timers: systemTimers,
      checkpoint: new MemoryCheckpoint(),
      alterPartition: async (r) => ({ leaderEpoch: 1, partitionEpoch: 2, isr: r.isr }),
    },
  );
  const components = { timers: systemTimers, leaders: () => leader };
  const fetchers = [];
  for (let i = 1; i < rf; i++) {
    const f = createFollowerFetcher(
      { brokerId: i + 1, leaderId: 1, maxWaitMs: 500 },
      {
        fetch: async (_to, req, signal) => {
          await new Promise((r) => setImmediate(r));
          return handleFetch(req, components, signal);
        },
        offsetForLeaderEpoch: async (_to, req) => handleOffsetForLeaderEpoch(req, components),
        clock: Date.now,
        timers: systemTimers,
      },
    );
    await f.addPartition({ topic: 'bench', partition: 0, log: logs[i], leaderEpoch: 1, checkpoint: new MemoryCheckpoint() });
    fetchers.push(f);
  }

  const latencies = [];
  let batches = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      await leader.append(Buffer.from(template), { acks, timeoutMs: 30_000 });
      latencies.push(performance.now() - t0);
      batches++;
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: INFLIGHT }, worker));
  const elapsed = (performance.now() - start) / 1000;

  for (const f of fetchers) await f.close();
  await leader.close();
  for (const l of logs) await l.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));

  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
  return {
    recordsPerSec: (batches * RECORDS) / elapsed,
    mbPerSec: (batches * template.length) / elapsed / 1e6,
    p50: q(0.5),
    p99: q(0.99),
  };
}

const configs = [];
for (const flush of ['os', 'always']) {
  configs.push({ name: `RF1 acks=1   flush=${flush}`, rf: 1, acks: 1, flush });
  configs.push({ name: `RF3 acks=1   flush=${flush}`, rf: 3, acks: 1, flush });
  configs.push({ name: `RF3 acks=all flush=${flush}`, rf: 3, acks: -1, flush });
}
const results = new Map(configs.map((c) => [c.name, []]));
for (let round = 0; round < ROUNDS; round++) {
  for (const c of configs) results.get(c.name).push(await runOnce(c));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(
  `${SECONDS}s x ${ROUNDS} rounds, ${INFLIGHT} produces in flight, batches of ${RECORDS} x ${BYTES} B records (${template.length} B), medians:`,
);
console.log('config                       records/s      MB/s   p50 ms   p99 ms   vs RF1 same flush');
for (const c of configs) {
  const rs = results.get(c.name);
  const rps = median(rs.map((r) => r.recordsPerSec));
  const base = median(results.get(`RF1 acks=1   flush=${c.flush}`).map((r) => r.recordsPerSec));
  console.log(
    `${c.name.padEnd(26)} ${rps.toFixed(0).padStart(11)} ${median(rs.map((r) => r.mbPerSec)).toFixed(1).padStart(9)} ${median(rs.map((r) => r.p50)).toFixed(2).padStart(8)} ${median(rs.map((r) => r.p99)).toFixed(2).padStart(8)} ${(rps / base).toFixed(2).padStart(10)}x`,
  );
}

async function failovers() {
  const dirs = [];
  const logs = [];
  const checkpoints = [];
  for (let i = 0; i < 3; i++) {
    const dir = await mkdtemp(join(tmpdir(), 'mq-repl-bench-'));
    dirs.push(dir);
    logs.push(await openLog(dir, { flush: { policy: 'os' } }));
    checkpoints.push(new MemoryCheckpoint());
  }
  const ids = [1, 2, 3];
  let leader;
  let fetchers = [];
  const components = { timers: systemTimers, leaders: () => leader };
  const lead = async (id, epoch) => {
    for (const f of fetchers) await f.close();
    fetchers = [];
    if (leader) await leader.resign();
    leader = await createPartitionLeader(
      { topic: 'bench', partition: 0, brokerId: id, leaderEpoch: epoch, partitionEpoch: epoch, replicas: ids, isr: ids, minInsyncReplicas: 2 },
      {
        log: logs[id - 1],
        clock: Date.now,
        timers: systemTimers,
        checkpoint: checkpoints[id - 1],
        alterPartition: async (r) => ({ leaderEpoch: epoch, partitionEpoch: epoch + 1, isr: r.isr }),
      },
    );
    for (const other of ids.filter((x) => x !== id)) {
      const f = createFollowerFetcher(
        { brokerId: other, leaderId: id, maxWaitMs: 500, backoffMs: 10 },
        {
          fetch: async (_to, req, signal) => {
            await new Promise((r) => setImmediate(r));
            return handleFetch(req, components, signal);
          },
          offsetForLeaderEpoch: async (_to, req) => handleOffsetForLeaderEpoch(req, components),
          clock: Date.now,
          timers: systemTimers,
        },
      );
      await f.addPartition({ topic: 'bench', partition: 0, log: logs[other - 1], leaderEpoch: epoch, checkpoint: checkpoints[other - 1] });
      fetchers.push(f);
    }
  };
  await lead(1, 0);
  const times = [];
  for (let i = 1; i <= FAILOVERS; i++) {
    // Some load, with acks=1 writes the followers may not have yet when leadership moves.
    await Promise.all(Array.from({ length: 20 }, () => leader.append(Buffer.from(template), { acks: -1, timeoutMs: 30_000 })));
    for (let k = 0; k < 5; k++) void leader.append(Buffer.from(template), { acks: 1 }).catch(() => undefined);
    const t0 = performance.now();
    await lead(ids[i % 3], i);
    await leader.append(Buffer.from(template), { acks: -1, timeoutMs: 30_000 });
    times.push(performance.now() - t0);
  }
  for (const f of fetchers) await f.close();
  await leader.close();
  for (const l of logs) await l.close();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  times.sort((a, b) => a - b);
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))];
  console.log(
    `\nleader moves: ${FAILOVERS}, from old leader resigning to the first acks=all produce on the new one: p50 ${q(0.5).toFixed(1)} ms, p99 ${q(0.99).toFixed(1)} ms, max ${times[times.length - 1].toFixed(1)} ms`,
  );
}
await failovers();
