// A read-process-write copier in its own process, for e2e/transactions.test.ts (so the test can
// SIGKILL it at any moment): copies every record of cfg.source to the same partition of cfg.dest
// in transactions, committing its input offsets (group cfg.group) in the same transaction.
// Configuration comes as one JSON argument; events go to stdout as JSON lines:
//   {"ev":"ready","positions":{...}}  {"ev":"committed","n":12}  {"ev":"error","message":...,"code":...}
import { MqClient } from '@mq/client';

const cfg = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(`${JSON.stringify({ ...o, t: Date.now() })}\n`);

const mq = new MqClient({ bootstrap: cfg.bootstrap, clientId: 'txn-copier', retry: { retries: 50, initialDelayMs: 100, maxDelayMs: 500 } });
try {
  const producer = mq.producer({ transactionalId: cfg.transactionalId, lingerMs: 0 });
  // First: fence any previous instance (its open transaction is aborted, a prepared one completed),
  // so the committed offsets read next are final.
  await producer.initTransactions();
  const positions = {};
  try {
    const d = await mq.groups().describeGroup(cfg.group);
    for (const o of d.offsets) if (o.topic === cfg.source && o.committedOffset >= 0) positions[o.partition] = o.committedOffset;
  } catch (err) {
    if (err?.code !== 'GROUP_ID_NOT_FOUND') throw err;
  }
  const consumer = mq.consumer({ isolationLevel: 'read_committed', autoOffsetReset: 'earliest', maxPollRecords: cfg.perTxn ?? 20, maxWaitMs: 100 });
  consumer.assign(Array.from({ length: cfg.partitions }, (_, p) => ({ topic: cfg.source, partition: p, offset: positions[p] ?? 0 })));
  emit({ ev: 'ready', positions });
  let copied = 0;
  for (;;) {
    const records = await consumer.poll(200);
    if (records.length === 0) continue;
    await producer.beginTransaction();
    const next = new Map();
    const sends = records.map((r) => {
      next.set(r.partition, r.offset + 1);
      return producer.send(cfg.dest, { key: r.key, value: r.value, partition: r.partition });
    });
    await Promise.all(sends);
    await producer.sendOffsetsToTransaction(
      [...next].map(([partition, offset]) => ({ topic: cfg.source, partition, offset })),
      { groupId: cfg.group },
    );
    await producer.commitTransaction();
    copied += records.length;
    emit({ ev: 'committed', n: copied });
  }
} catch (err) {
  emit({ ev: 'error', message: String(err?.message ?? err), code: err?.code });
  process.exitCode = 1;
  await mq.close().catch(() => undefined);
}
