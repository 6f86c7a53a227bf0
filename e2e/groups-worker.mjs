// A consumer-group member in its own process, for the e2e tests of groups-*.test.ts
// (so a test can SIGKILL it). Configuration comes as one JSON argument; every
// event goes to stdout as one JSON line with the time it happened:
//   {"ev":"assigned"|"revoked"|"lost","ps":[0,1],"t":...}   (revoked: at the end of the callback)
//   {"ev":"record","p":0,"o":12,"v":"...","t":...}
//   {"ev":"committed","p":0,"o":13}   {"ev":"ready"}   {"ev":"error","message":...}
import { MqClient } from '@mq/client';

const cfg = JSON.parse(process.argv[2]);
const emit = (o) => process.stdout.write(`${JSON.stringify({ ...o, t: Date.now() })}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const mq = new MqClient({ bootstrap: cfg.bootstrap, clientId: cfg.name ?? 'worker' });
const consumer = mq.consumer({
  groupId: cfg.group,
  autoOffsetReset: 'earliest',
  sessionTimeoutMs: cfg.sessionTimeoutMs ?? 3000,
  heartbeatIntervalMs: cfg.heartbeatIntervalMs ?? 300,
  partitionAssigners: cfg.assignors ?? ['cooperative-sticky'],
  groupInstanceId: cfg.instanceId,
  autoCommit: cfg.autoCommit ?? true,
  autoCommitIntervalMs: cfg.autoCommitIntervalMs ?? 500,
  delivery: cfg.delivery ?? 'at-least-once',
  maxPollRecords: cfg.maxPollRecords ?? 500,
});
const ps = (tps) => tps.map((tp) => tp.partition).sort((a, b) => a - b);
consumer.subscribe([cfg.topic], {
  onPartitionsAssigned: (tps) => emit({ ev: 'assigned', ps: ps(tps) }),
  onPartitionsRevoked: (tps) => emit({ ev: 'revoked', ps: ps(tps) }),
  onPartitionsLost: (tps) => emit({ ev: 'lost', ps: ps(tps) }),
});

let stopping = false;
process.on('SIGTERM', () => {
  stopping = true;
});

let processed = 0;
try {
  emit({ ev: 'ready' });
  while (!stopping) {
    const records = await consumer.poll(200);
    for (const r of records) {
      if (cfg.delayMs) await sleep(cfg.delayMs);
      emit({ ev: 'record', p: r.partition, o: r.offset, v: r.value?.toString() ?? null });
      processed++;
      // Crash after processing, before any commit of this record: SIGKILL ourselves.
      if (cfg.crashAfter !== undefined && processed >= cfg.crashAfter) process.kill(process.pid, 'SIGKILL');
      if (cfg.commitEvery && processed % cfg.commitEvery === 0) {
        await consumer.commit([{ topic: r.topic, partition: r.partition, offset: r.offset + 1 }]);
        emit({ ev: 'committed', p: r.partition, o: r.offset + 1 });
      }
    }
  }
  await consumer.close();
  emit({ ev: 'closed' });
  await mq.close();
} catch (err) {
  emit({ ev: 'error', message: String(err?.message ?? err), code: err?.code });
  process.exitCode = 1;
  await mq.close().catch(() => {});
}
