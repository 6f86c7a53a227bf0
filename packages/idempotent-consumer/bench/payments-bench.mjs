#!/usr/bin/env node
// The payments consumer's throughput with each idempotency store, against the same handler with none, same run:
//   node packages/idempotent-consumer/bench/payments-bench.mjs [--records 20000] [--rounds 3]
// One mq broker (this checkout's build, its own process), PostgreSQL and Redis from Debian on loopback with
// private data directories (tools/test-servers.mjs). The topic holds --records payments (3 partitions); each
// variant reads all of them as a fresh group and charges each into a PostgreSQL ledger; rounds alternate the
// variants' order. Prints one line per run and a table of medians (records/s, and the ratio to "none").
import pg from 'pg';
import { createClient } from 'redis';
import { MqClient } from '@mq/client';
import { idempotent, keyFromHeader, MemoryStore, PostgresStore, RedisStore } from '@mq/idempotent-consumer';
import { startBrokerProcess } from '../../client/bench/broker-process.mjs';
import { startPostgres, startRedis } from '../../../tools/test-servers.mjs';

function arg(name, def) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const RECORDS = arg('records', 20_000);
const ROUNDS = arg('rounds', 3);
const TOPIC = 'payments';

const [broker, postgres, redisServer] = await Promise.all([startBrokerProcess({ tag: 'payments-bench' }), startPostgres(), startRedis()]);
const mq = new MqClient({ bootstrap: broker.bootstrap, clientId: 'payments-bench' });
const pool = new pg.Pool({ connectionString: postgres.url, max: 4 });
const redis = createClient({ url: redisServer.url });
await redis.connect();
await pool.query('CREATE TABLE ledger (id bigserial PRIMARY KEY, payment_id text NOT NULL, amount_cents bigint NOT NULL)');

try {
  await mq.admin().createTopic(TOPIC, { numPartitions: 3 });
  const producer = mq.producer({ acks: 'all', lingerMs: 5 });
  const sends = [];
  for (let i = 0; i < RECORDS; i++) {
    const id = `pay-${i}`;
    sends.push(producer.send(TOPIC, { key: id, value: JSON.stringify({ amountCents: 100 + (i % 900) }), headers: { 'payment-id': id } }));
  }
  await Promise.all(sends);
  await producer.close();

  const charge = (client, key, message) => client.query('INSERT INTO ledger (payment_id, amount_cents) VALUES ($1, $2)', [key, JSON.parse(message.value.toString()).amountCents]);
  const variants = {
    // at-least-once, no idempotency: the floor of what a store costs
    none: async () => async ({ message }) => {
      await charge(pool, message.headers.find((h) => h.key === 'payment-id').value.toString(), message);
    },
    memory: async () => idempotent({ store: new MemoryStore({ maxKeys: RECORDS }), key: keyFromHeader('payment-id') }, ({ key, message }) => charge(pool, key, message)),
    redis: async (run) =>
      idempotent({ store: new RedisStore({ redis, scope: `bench-${run}` }), key: keyFromHeader('payment-id') }, ({ key, message }) => charge(pool, key, message)),
    postgres: async (run) => {
      const store = new PostgresStore({ pool, scope: `bench-${run}` });
      await store.init();
      return idempotent({ store, key: keyFromHeader('payment-id') }, ({ key, message, tx }) => charge(tx, key, message));
    },
  };

  const results = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  let run = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(variants);
    if (round % 2 === 1) order.reverse();
    for (const name of order) {
      run++;
      await pool.query('TRUNCATE ledger');
      const eachMessage = await variants[name](run);
      const consumer = mq.consumer({ groupId: `bench-${name}-${run}`, autoOffsetReset: 'earliest' });
      consumer.subscribe([TOPIC]);
      const stop = new AbortController();
      let seen = 0;
      let first = 0;
      const started = consumer.run({
        signal: stop.signal,
        eachMessage: async (p) => {
          if (seen === 0) first = performance.now();
          await eachMessage(p);
          if (++seen === RECORDS) stop.abort();
        },
      });
      const deadline = setTimeout(() => stop.abort(), 300_000);
      await started;
      clearTimeout(deadline);
      const seconds = (performance.now() - first) / 1000;
      await consumer.close();
      const rows = (await pool.query('SELECT count(*)::int AS n FROM ledger')).rows[0].n;
      if (seen !== RECORDS || rows !== RECORDS) throw new Error(`${name}: saw ${seen}, ledger ${rows}, expected ${RECORDS}`);
      const rate = RECORDS / seconds;
      results[name].push(rate);
      console.log(`round ${round + 1} ${name.padEnd(8)} ${Math.round(rate).toLocaleString('en-US')} records/s`);
    }
  }
  const base = median(results.none);
  console.log(`\n${RECORDS} payments, ${ROUNDS} rounds, medians (ledger insert per record in PostgreSQL, fsync off):`);
  console.log('store     records/s   vs none');
  for (const [name, rates] of Object.entries(results)) {
    console.log(`${name.padEnd(8)}  ${Math.round(median(rates)).toLocaleString('en-US').padStart(9)}   ${(median(rates) / base).toFixed(2)}`);
  }
} finally {
  await mq.close();
  await redis.quit();
  await pool.end();
  broker.child.kill('SIGKILL');
  await Promise.all([postgres.stop(), redisServer.stop()]);
}
