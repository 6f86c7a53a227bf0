// Transactions, side by side in one run against one broker process (this checkout's build):
// produce throughput of a transactional producer at 10, 100 and 1000 records per transaction
// against the idempotent producer without transactions, and consume throughput of
// read_committed against read_uncommitted over the same (transactional) topic. Rounds are
// interleaved (each variant once per round) so they share the machine's load; medians printed.
//
//   npx nx run-many -t build && node packages/client/bench/txn.bench.mjs
//   N=20000 SIZE=100 ROUNDS=3 node packages/client/bench/txn.bench.mjs
//
// Env: N records per run (100000; a tenth of it for 10 records per transaction), SIZE value bytes (100),
// ROUNDS (3), PARTITIONS (1). One warm-up run of every variant comes first (not counted).
import { MqClient } from '@mq/client';
import { startBrokerProcess } from './broker-process.mjs';

const N = Number(process.env.N ?? 100_000);
const SIZE = Number(process.env.SIZE ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PARTITIONS = Number(process.env.PARTITIONS ?? 1);
const WINDOW = 1000;
/** Records the consume runs read: a topic of CONSUME_N records in transactions of 100 (with its markers and an aborted transaction every 10). */
const CONSUME_N = Number(process.env.CONSUME_N ?? 500_000);

const { bootstrap, child } = await startBrokerProcess({ tag: 'txn-bench' });
const client = new MqClient({ bootstrap, clientId: 'txn-bench' });
const value = Buffer.alloc(SIZE, 'x');
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Sends N records with at most WINDOW unacknowledged; in transactions of `perTxn` when given. */
async function produceRun(topic, perTxn, total = perTxn === 10 ? Math.ceil(N / 10) : N) {
  const producer = perTxn ? client.producer({ transactionalId: `bench-${topic}`, lingerMs: 0 }) : client.producer({ idempotent: true, lingerMs: 0 });
  if (perTxn) await producer.initTransactions();
  const started = performance.now();
  let sent = 0;
  while (sent < total) {
    const n = Math.min(perTxn ?? WINDOW, total - sent);
    if (perTxn) await producer.beginTransaction();
    // Within a transaction (or a window), sends are pipelined; each window waits for its acks.
    for (let i = 0; i < n; i += WINDOW) {
      const batch = Array.from({ length: Math.min(WINDOW, n - i) }, () => ({ value }));
      await producer.sendBatch(topic, batch);
    }
    if (perTxn) await producer.commitTransaction();
    sent += n;
  }
  const ms = performance.now() - started;
  await producer.close();
  return (total / ms) * 1000;
}

async function consumeRun(topic, isolationLevel, total = CONSUME_N) {
  const c = client.consumer({ isolationLevel, autoOffsetReset: 'earliest', maxPollRecords: 5000 });
  c.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 0 })));
  const started = performance.now();
  let n = 0;
  while (n < total) n += (await c.poll(1000)).length;
  const ms = performance.now() - started;
  await c.close();
  return (total / ms) * 1000;
}

const produceVariants = [
  ['idempotent, no transactions', undefined],
  ['transactional, 10 per txn', 10],
  ['transactional, 100 per txn', 100],
  ['transactional, 1000 per txn', 1000],
];
const produced = new Map(produceVariants.map(([name]) => [name, []]));
const consumed = new Map([
  ['read_uncommitted', []],
  ['read_committed', []],
]);
const consumeTopic = `txn-bench-consume-${process.pid}`;
{
  await client.admin().createTopic(consumeTopic, { numPartitions: PARTITIONS, replicationFactor: 1 });
  const p = client.producer({ transactionalId: `bench-fill-${process.pid}`, lingerMs: 0 });
  let committed = 0;
  for (let t = 0; committed < CONSUME_N; t++) {
    await p.beginTransaction();
    await p.sendBatch(consumeTopic, Array.from({ length: 100 }, () => ({ value })));
    if (t % 10 === 9) await p.abortTransaction();
    else {
      await p.commitTransaction();
      committed += 100;
    }
  }
  await p.close();
}
for (const [, perTxn] of produceVariants) {
  const topic = `txn-bench-warm-${perTxn ?? 'idem'}-${process.pid}`;
  await client.admin().createTopic(topic, { numPartitions: PARTITIONS, replicationFactor: 1 });
  await produceRun(topic, perTxn, 5000);
}
for (let round = 0; round < ROUNDS; round++) {
  // Rotated each round, so no variant always runs right after the consume runs.
  const rotated = produceVariants.map((_, i) => produceVariants[(i + round) % produceVariants.length]);
  for (const [name, perTxn] of rotated) {
    const topic = `txn-bench-${round}-${perTxn ?? 'idem'}-${process.pid}`;
    await client.admin().createTopic(topic, { numPartitions: PARTITIONS, replicationFactor: 1 });
    produced.get(name).push(await produceRun(topic, perTxn));
    if (process.env.VERIFY) {
      const [end] = await client.admin().listOffsets(topic, [{ partition: 0, spec: 'latest' }]);
      process.stderr.write(`${name}: log end ${JSON.stringify(end)}\n`);
    }
  }
  // The same transactional topic (transactions of 100, committed), read both ways, alternating which goes first.
  const order = round % 2 === 0 ? ['read_uncommitted', 'read_committed'] : ['read_committed', 'read_uncommitted'];
  if (round === 0) await consumeRun(consumeTopic, 'read_uncommitted', 100_000); // warm-up (page cache, JIT)
  for (const level of order) consumed.get(level).push(await consumeRun(consumeTopic, level));
  process.stderr.write(`round ${round + 1}/${ROUNDS} done\n`);
}
const base = median(produced.get('idempotent, no transactions'));
console.log(`\nN=${N} records of ${SIZE} B, ${PARTITIONS} partition(s), ${ROUNDS} rounds, medians (records/s)\n`);
console.log('| produce | records/s | vs idempotent |\n|---|---:|---:|');
for (const [name] of produceVariants) {
  const m = median(produced.get(name));
  console.log(`| ${name} | ${Math.round(m)} | ${(m / base).toFixed(2)}× |`);
}
const cu = median(consumed.get('read_uncommitted'));
console.log(`\n| consume ${CONSUME_N} records (transactions of 100, every 10th aborted; read_uncommitted counts the first ${CONSUME_N} of all) | records/s | vs read_uncommitted |\n|---|---:|---:|`);
for (const [name, xs] of consumed) console.log(`| ${name} | ${Math.round(median(xs))} | ${(median(xs) / cu).toFixed(2)}× |`);
await client.close();
child.kill('SIGTERM');
