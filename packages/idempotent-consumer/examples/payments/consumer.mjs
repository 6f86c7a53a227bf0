#!/usr/bin/env node
// The payments consumer: charges each payment into a PostgreSQL ledger exactly once per payment id,
// although mq delivers at least once and the producer upstream retries (duplicates at other offsets).
//
//   node consumer.mjs --bootstrap 127.0.0.1:9092 --postgres postgres://postgres@127.0.0.1:5432/postgres \
//     [--store postgres|redis|memory] [--redis redis://127.0.0.1:6379] [--topic payments] [--group billing]
//     [--instance-id ID] [--commit-interval-ms 5000] [--exit-when-idle-ms MS]
//
// With --store postgres the payment id is recorded in the same database transaction as the ledger row:
// a crash at any point leaves both or neither. With --store redis the ledger row and the key are two
// systems: a crash between the charge and the key's "done" mark charges that payment twice (the window
// the README describes). --store memory forgets everything on restart (redeliveries are charged again).
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createClient } from 'redis';
import { MqClient } from '@mq/client';
import { idempotent, keyFromHeader, MemoryStore, PostgresStore, RedisStore } from '@mq/idempotent-consumer';

const { values: args } = parseArgs({
  options: {
    bootstrap: { type: 'string', default: '127.0.0.1:9092' },
    topic: { type: 'string', default: 'payments' },
    group: { type: 'string', default: 'billing' },
    store: { type: 'string', default: 'postgres' },
    postgres: { type: 'string' },
    redis: { type: 'string' },
    'commit-interval-ms': { type: 'string', default: '5000' },
    // static membership: a restarted consumer takes its partitions back at once (no wait for the dead one's session)
    'instance-id': { type: 'string' },
    'exit-when-idle-ms': { type: 'string' },
  },
});
if (!args.postgres) {
  console.error('payments consumer: --postgres URL is required (the ledger lives there)');
  process.exit(2);
}

const pool = new pg.Pool({ connectionString: args.postgres, max: 4 });
pool.on('error', () => undefined); // an idle connection lost: the pool replaces it
await pool.query('CREATE TABLE IF NOT EXISTS ledger (id bigserial PRIMARY KEY, payment_id text NOT NULL, amount_cents bigint NOT NULL, charged_at timestamptz NOT NULL DEFAULT now())');

let redis;
let store;
if (args.store === 'postgres') {
  store = new PostgresStore({ pool, scope: args.group });
  await store.init();
} else if (args.store === 'redis') {
  redis = createClient({ url: args.redis });
  await redis.connect();
  store = new RedisStore({ redis, scope: args.group, leaseMs: 2_000 });
} else if (args.store === 'memory') {
  store = new MemoryStore();
} else {
  console.error(`payments consumer: --store must be postgres, redis or memory, got "${args.store}"`);
  process.exit(2);
}

const mq = new MqClient({ bootstrap: args.bootstrap, clientId: 'payments-consumer' });
const consumer = mq.consumer({
  groupId: args.group,
  groupInstanceId: args['instance-id'],
  autoOffsetReset: 'earliest',
  autoCommitIntervalMs: Number(args['commit-interval-ms']),
});
consumer.subscribe([args.topic]);
const stop = new AbortController();
process.once('SIGTERM', () => stop.abort());
process.once('SIGINT', () => stop.abort());

let charged = 0;
let duplicates = 0;
let lastRecordAt = Date.now();
const idleMs = args['exit-when-idle-ms'] ? Number(args['exit-when-idle-ms']) : null;
const idleTimer = idleMs === null ? null : setInterval(() => Date.now() - lastRecordAt > idleMs && stop.abort(), 100);

await consumer.run({
  signal: stop.signal,
  eachMessage: idempotent(
    {
      store,
      key: keyFromHeader('payment-id'),
      onOutcome: (outcome) => {
        lastRecordAt = Date.now();
        if (outcome === 'duplicate') duplicates++;
        else charged++;
      },
    },
    async ({ key, message, tx }) => {
      const { amountCents } = JSON.parse(message.value.toString());
      // The charge. With PostgresStore, `tx` is the client inside the transaction that records the key.
      await (args.store === 'postgres' ? tx : pool).query('INSERT INTO ledger (payment_id, amount_cents) VALUES ($1, $2)', [key, amountCents]);
    },
  ),
});
if (idleTimer) clearInterval(idleTimer);
await consumer.close();
await mq.close();
await redis?.quit();
await pool.end();
console.log(JSON.stringify({ charged, duplicates }));
