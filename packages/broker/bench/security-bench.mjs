// What security costs: produce and consume throughput and one-at-a-time
// produce latency through @mq/client against three in-process brokers started
// side by side: one without security, one with SCRAM authentication + ACL
// authorization (the client logs in as a user holding only the ACLs it
// needs), and one with TLS (a certificate made at run time with openssl) +
// SCRAM + ACLs; rounds interleaved, medians printed; then the cost of one ACL
// decision (aclsAllow) among N ACLs.
// Usage (after npm run build): node bench/security-bench.mjs [--rounds 3] [--records 20000] [--latency 500] [--acls 100]
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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

// A self-signed certificate for 127.0.0.1 (openssl from Debian), trusted by the TLS side's client.
const pki = await mkdtemp(path.join(tmpdir(), 'mq-sec-bench-pki-'));
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { cwd: pki, stdio: 'pipe' });
const tlsConfig = { 'tls.cert.file': path.join(pki, 'cert.pem'), 'tls.key.file': path.join(pki, 'key.pem') };
const tlsCa = await readFile(path.join(pki, 'cert.pem'), 'utf8');

const securityConfig = { 'authentication.enabled': 'true', 'authorization.enabled': 'true', 'super.users': 'User:admin' };
const plain = await start({});
const secure = await start(securityConfig);
const secureTls = await start({ ...securityConfig, ...tlsConfig });
// On each secured broker: the first user from loopback (the bootstrap), then a bench user with exactly its ACLs.
for (const [b, tls] of [[secure, undefined], [secureTls, { ca: tlsCa }]]) {
  const at = { bootstrap: `127.0.0.1:${b.broker.port}`, ...(tls ? { tls } : {}) };
  const boot = new MqClient(at);
  await boot.admin().createUser('admin', 'admin-pw');
  await boot.close();
  const admin = new MqClient({ ...at, sasl: { username: 'admin', password: 'admin-pw' } });
  await admin.admin().createUser('bench', 'bench-pw');
  await admin.admin().createAcls([
    { resourceType: 'topic', resourceName: 'sec-bench-', patternType: 'prefixed', principal: 'User:bench', operation: 'all', permission: 'allow' },
    { resourceType: 'cluster', resourceName: 'mq-cluster', principal: 'User:bench', operation: 'idempotent-write', permission: 'allow' },
  ]);
  await admin.close();
}

const bench = { mechanism: 'SCRAM-SHA-256', username: 'bench', password: 'bench-pw' };
const sides = {
  plain: () => new MqClient({ bootstrap: `127.0.0.1:${plain.broker.port}` }),
  'scram+acl': () => new MqClient({ bootstrap: `127.0.0.1:${secure.broker.port}`, sasl: bench }),
  'tls+scram+acl': () => new MqClient({ bootstrap: `127.0.0.1:${secureTls.broker.port}`, tls: { ca: tlsCa }, sasl: bench }),
};
const results = Object.fromEntries(Object.keys(sides).map((k) => [k, { produce: [], consume: [], p50: [], p99: [], connect: [] }]));

// Round 0 warms both up and is not counted; the order alternates between rounds.
for (let round = 0; round <= rounds; round++) {
  // Each side goes first in turn (a load that changes during the run falls on every side alike).
  const all = Object.entries(sides);
  const order = all.map((_, i) => all[(i + round) % all.length]);
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
console.log('side          produce rec/s  consume rec/s  one-at-a-time p50 ms  p99 ms  first request ms (connect + login + CreateTopics)');
for (const [name, r] of Object.entries(results)) {
  console.log(`${name.padEnd(13)} ${f(median(r.produce)).padStart(13)}  ${f(median(r.consume)).padStart(13)}  ${f(median(r.p50), 3).padStart(20)}  ${f(median(r.p99), 3).padStart(6)}  ${f(median(r.connect), 1).padStart(8)}`);
}
for (const side of ['scram+acl', 'tls+scram+acl']) {
  const ratio = (k) => median(results[side][k]) / median(results.plain[k]);
  console.log(`${side} / plain: produce ${f(ratio('produce'), 3)}, consume ${f(ratio('consume'), 3)}, p50 ${f(ratio('p50'), 3)}, p99 ${f(ratio('p99'), 3)}`);
}

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

for (const b of [plain, secure, secureTls]) {
  await b.broker.close();
  await rm(b.dir, { recursive: true, force: true });
}
await rm(pki, { recursive: true, force: true });
