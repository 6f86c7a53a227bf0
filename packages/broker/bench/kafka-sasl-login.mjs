/**
 * What a SASL login costs a Kafka client: kafkajs connecting, logging in and
 * answering one DescribeCluster, against a broker without authentication and
 * one with SCRAM-SHA-256 / SCRAM-SHA-512 (authentication + authorization on,
 * the user a super user), in-process brokers side by side in one run,
 * alternating. Medians of --rounds connections each.
 *
 *   npm run build && node packages/broker/bench/kafka-sasl-login.mjs --rounds 25
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { Kafka, logLevel } from 'kafkajs';
import { MqClient } from '@mq/client';
import { startBroker } from '../dist/index.js';
import { arg, median } from './bench-util.mjs';

const rounds = arg('rounds', 25);

async function start(config) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mq-ksasl-bench-'));
  const broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0, kafkaPort: 0, config: { 'offsets.topic.num.partitions': '1', ...config } }, { logger: pino({ level: 'error' }) });
  const close = async () => {
    await broker.close();
    await rm(dir, { recursive: true, force: true });
  };
  return { broker, close };
}

const plain = await start({});
const secured = await start({ 'authentication.enabled': 'true', 'authorization.enabled': 'true', 'super.users': 'User:admin' });
const first = new MqClient({ bootstrap: `127.0.0.1:${secured.broker.port}` });
await first.admin().createUser('admin', 'admin-pw');
await first.close();

const sides = {
  plain: { port: plain.broker.kafkaPort, sasl: undefined },
  'SCRAM-SHA-256': { port: secured.broker.kafkaPort, sasl: { mechanism: 'scram-sha-256', username: 'admin', password: 'admin-pw' } },
  'SCRAM-SHA-512': { port: secured.broker.kafkaPort, sasl: { mechanism: 'scram-sha-512', username: 'admin', password: 'admin-pw' } },
};
const times = Object.fromEntries(Object.keys(sides).map((k) => [k, []]));
for (let i = 0; i < rounds + 1; i++) {
  for (const [name, s] of Object.entries(sides)) {
    const admin = new Kafka({ brokers: [`127.0.0.1:${s.port}`], logLevel: logLevel.NOTHING, ...(s.sasl ? { sasl: s.sasl } : {}) }).admin();
    const t = performance.now();
    await admin.connect();
    await admin.describeCluster();
    // The first round warms up.
    if (i > 0) times[name].push(performance.now() - t);
    await admin.disconnect();
  }
}
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(14)} connect + login + DescribeCluster: median ${median(xs).toFixed(1)} ms (${xs.length} connections)`);
await plain.close();
await secured.close();
