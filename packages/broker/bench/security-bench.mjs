// What security costs: produce and consume throughput and one-at-a-time
// produce latency through @mq/client against two in-process brokers started
// side by side, one without security and one with SCRAM authentication +
// ACL authorization (the client logs in as a user holding only the ACLs it
// needs), rounds interleaved, medians printed; then the cost of one ACL
// decision (aclsAllow) among N ACLs.
// Usage (after npm run build): node bench/security-bench.mjs [--rounds 3] [--records 20000] [--latency 500] [--acls 100]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { MqClient } from '@mq/client';
import { startBroker } from '../dist/index.js';
import { aclsAllow, parseAcl } from '../dist/security/acl.js';
import { arg, median, quantile } from './bench-util.mjs';

const rounds = arg('rounds', 3);
const records = arg('records', 20000);
const latencyN = arg('latency', 500);
const aclCount = arg('acls', 100);
const value = Buffer.alloc(100, 97);

async function start(config) {
  const dir = await mkdtemp(path.join(tmpdir(), 'mq-sec-bench-'));
  const broker = await startBroker({ dataDir: dir, port: 0, httpPort: 0, config: { 'offsets.topic.num.partitions': '1', ...config } }, { logger: pino({ level: 'error' }) });
  return { broker, dir };
}

const plain = await start({});
const secure = await start({ 'authentication.enabled': 'true', 'authorization.enabled': 'true', 'super.users': 'User:admin' });
// The first user from loopback (the bootstrap), then a bench user with exactly its ACLs.
const boot = new MqClient({ bootstrap: `127.0.0.1:${secure.broker.port}` });
await boot.admin().createUser('admin', 'admin-pw');
await boot.close();
const admin = new MqClient({ bootstrap: `127.0.0.1:${secure.broker.port}`, sasl: { username: 'admin', password: 'admin-pw' } });
await admin.admin().createUser('bench', 'bench-pw');
await admin.admin().createAcls([
  { resourceType: 'topic', resourceName: 'sec-bench-', patternType: 'prefixed', principal: 'User:bench', operation: 'all', permission: 'allow' },
  { resourceType: 'cluster', resourceName: 'mq-cluster', principal: 'User:bench', operation: 'idempotent-write', permission: 'allow' },
]);
await admin.close();

const sides = {
  plain: () => new MqClient({ bootstrap: `127.0.0.1:${plain.broker.port}` }),
  'scram+acl': () => new MqClient({ bootstrap: `127.0.0.1:${secure.broker.port}`, sasl: { mechanism: 'SCRAM-SHA-256', username: 'bench', password: 'bench-pw' } }),
};
const results = { plain: { produce: [], consume: [], p50: [], p99: [], connect: [] }, 'scram+acl': { produce: [], consume: [], p50: [], p99: [], connect: [] } };

// Round 0 warms both up and is not counted; the order alternates between rounds.
for (let round = 0; round <= rounds; round++) {
  const order = Object.entries(sides);
  if (round % 2) order.reverse();
  for (const [name, make] of order) {
    const topic = `sec-bench-${round}`;
    const t0 = performance.now();
    const mq = make();
    await mq.admin().createTopic(topic);
    const counted = round > 0;
    if (counted) results[name].connect.push(performance.now() - t0);
    const producer = mq.producer({ acks: 1, lingerMs: 5 });
    let t = performance.now();
    const sends = [];
    for (let i = 0; i < records; i++) sends.push(producer.send(topic, { value }));
    await Promise.all(sends);
    if (counted) results[name].produce.push(records / ((performance.now() - t) / 1000));
    await producer.close();
    // One at a time: no linger, each send waits for its answer.
    const single = mq.producer({ acks: 1, lingerMs: 0 });
    const lat = [];
    for (let i = 0; i < latencyN; i++) {
      const s = performance.now();
      await single.send(topic, { value });
      lat.push(performance.now() - s);
    }
    lat.sort((a, b) => a - b);
    if (counted) results[name].p50.push(quantile(lat, 0.5));
    if (counted) results[name].p99.push(quantile(lat, 0.99));
    await single.close();
    const consumer = mq.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([{ topic, partition: 0 }]);
    t = performance.now();
    let seen = 0;
    while (seen < records + latencyN) seen += (await consumer.poll(1000)).length;
    if (counted) results[name].consume.push(seen / ((performance.now() - t) / 1000));
    await consumer.close();
    await mq.close();
  }
}

const f = (x, d = 0) => x.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d });
console.log(`rounds ${rounds} (after a warm-up round), ${records} records of 100 B, acks 1, one partition; medians`);
console.log('side        produce rec/s  consume rec/s  one-at-a-time p50 ms  p99 ms  first request ms (connect + login + CreateTopics)');
for (const [name, r] of Object.entries(results)) {
  console.log(`${name.padEnd(11)} ${f(median(r.produce)).padStart(13)}  ${f(median(r.consume)).padStart(13)}  ${f(median(r.p50), 3).padStart(20)}  ${f(median(r.p99), 3).padStart(6)}  ${f(median(r.connect), 1).padStart(8)}`);
}
const ratio = (k) => median(results['scram+acl'][k]) / median(results.plain[k]);
console.log(`scram+acl / plain: produce ${f(ratio('produce'), 3)}, consume ${f(ratio('consume'), 3)}, p50 ${f(ratio('p50'), 3)}, p99 ${f(ratio('p99'), 3)}`);

// One ACL decision among aclCount ACLs (the last one matching), as the authorizer makes per resource of a request.
const acls = Array.from({ length: aclCount }, (_, i) =>
  parseAcl({ resourceType: 'topic', resourceName: `t-${i}`, patternType: i % 2 ? 'prefixed' : 'literal', principal: `User:u${i % 10}`, operation: 'read', permission: 'allow' }),
);
const checks = 200_000;
let allowed = 0;
const c0 = process.hrtime.bigint();
for (let i = 0; i < checks; i++) if (aclsAllow(acls, 'User:u9', 'read', 'topic', `t-${aclCount - 1}`)) allowed++;
const ns = Number(process.hrtime.bigint() - c0) / checks;
console.log(`one ACL decision among ${aclCount} ACLs: ${f(ns, 0)} ns (${allowed === checks ? 'allowed' : 'refused'})`);

await plain.broker.close();
await secure.broker.close();
await rm(plain.dir, { recursive: true, force: true });
await rm(secure.dir, { recursive: true, force: true });
