#!/usr/bin/env node
// A replicated key-value store on @mq/consensus: one process per node.
//   node example/kv-server.mjs --id 1 --cluster 1=7001/8001,2=7002/8002,3=7003/8003 --data-dir /tmp/kv1
// PUT /kv/<key> (body = value) replicates a write; GET /kv/<key> is a linearizable read;
// a follower answers 421 with the leader's HTTP port. GET /status shows the Raft state.
import http from 'node:http';
import { parseArgs } from 'node:util';
import { createRaftNode, createWsTransport, FileStorage } from '@mq/consensus';

const { values: a } = parseArgs({ options: { id: { type: 'string' }, cluster: { type: 'string' }, 'data-dir': { type: 'string' }, 'tick-ms': { type: 'string', default: '50' }, 'no-fsync': { type: 'boolean', default: false } } });
const id = Number(a.id);
const cluster = Object.fromEntries(a.cluster.split(',').map((p) => { const [n, ports] = p.split('='); const [raft, web] = ports.split('/').map(Number); return [Number(n), { raft, web }]; }));
const kv = new Map();
const stateMachine = {
  apply: (e) => { const { k, v } = JSON.parse(Buffer.from(e.data)); kv.set(k, v); return null; },
  snapshot: () => Buffer.from(JSON.stringify([...kv])),
  restore: (data) => { kv.clear(); for (const [k, v] of JSON.parse(Buffer.from(data).toString() || '[]')) kv.set(k, v); },
};
const peers = Object.fromEntries(Object.entries(cluster).map(([n, p]) => [n, `ws://127.0.0.1:${p.raft}`]));
const transport = await createWsTransport({ id, port: cluster[id].raft, peers });
const storage = await FileStorage.open(a['data-dir'], { sync: !a['no-fsync'] });
const node = await createRaftNode({ id, peers: Object.keys(cluster).map(Number), tickMs: Number(a['tick-ms']) }, { storage, transport, stateMachine });

const reply = (res, status, body) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
const fail = (res, err) => err.code === 'NOT_LEADER'
  ? reply(res, 421, { error: err.code, leader: err.leader, leaderPort: cluster[err.leader]?.web ?? null })
  : reply(res, 503, { error: err.code ?? 'UNKNOWN', message: err.message });
http.createServer(async (req, res) => {
  const key = decodeURIComponent(req.url.slice(4));
  try {
    if (req.url === '/status') return reply(res, 200, node.status());
    if (req.method === 'PUT' && req.url.startsWith('/kv/')) {
      let body = ''; for await (const c of req) body += c;
      const { index } = await node.propose(Buffer.from(JSON.stringify({ k: key, v: body })));
      return reply(res, 200, { index });
    }
    if (req.method === 'GET' && req.url.startsWith('/kv/')) {
      await node.readIndex();
      return kv.has(key) ? reply(res, 200, { value: kv.get(key) }) : reply(res, 404, { error: 'NOT_FOUND' });
    }
    reply(res, 404, { error: 'NO_ROUTE' });
  } catch (err) { fail(res, err); }
}).listen(cluster[id].web, '127.0.0.1', () => console.log(JSON.stringify({ msg: 'kv listening', id, httpPort: cluster[id].web, raftPort: cluster[id].raft })));
process.on('SIGTERM', async () => { await node.close(); process.exit(0); });
