/**
 * Records real client traffic for the corpus: a session of @mq/client (admin,
 * idempotent acks=all producer, consumer, consumer group, group admin, list
 * offsets, delete) against a real broker, capturing every frame the client
 * sends. Run `node tools/fuzz-frames.mjs --record` to refresh corpus.json.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { MqClient } from '@mq/client';
import { RequestFrame, bodyOf } from './schema.mjs';
import { startBrokerProcess } from './broker-target.mjs';

export const CORPUS_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'corpus.json');

export async function recordCorpus() {
  const broker = await startBrokerProcess();
  const frames = [];
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function recordingSend(data, ...rest) {
    frames.push(Buffer.from(data));
    return send.call(this, data, ...rest);
  };
  try {
    const c = new MqClient({ bootstrap: broker.bootstrap, clientId: 'fuzz-recorder' });
    const admin = c.admin();
    await admin.createTopic('fz-corpus', { numPartitions: 2, configs: { 'retention.ms': '600000' } });
    await admin.createTopic('fz-corpus-compact', { numPartitions: 1, configs: { 'cleanup.policy': 'compact' } });
    await admin.listTopics();
    await admin.describeTopics(['fz-corpus']);
    await admin.describeConfigs({ topics: ['fz-corpus'], includeBroker: true });
    await admin.createPartitions([{ topic: 'fz-corpus', count: 3 }]);
    await admin.describeCluster();
    for (const compression of ['none', 'gzip', 'lz4', 'zstd', 'snappy']) {
      const p = c.producer({ acks: 'all', idempotent: true, compression, lingerMs: 1 });
      await p.sendBatch('fz-corpus', Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, value: `value-${compression}-${i}`, headers: { h: 'v' } })));
      await p.close();
    }
    const p1 = c.producer({ acks: 1 });
    await p1.send('fz-corpus-compact', { key: 'a', value: 'b' });
    await p1.close();
    await admin.listOffsets('fz-corpus', [{ partition: 0, spec: 'latest' }, { partition: 1, spec: 'earliest' }, { partition: 2, spec: Date.now() - 60_000 }]);
    await admin.watermarks('fz-corpus', 0);
    const consumer = c.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([{ topic: 'fz-corpus', partition: 0 }, { topic: 'fz-corpus', partition: 1 }]);
    for (let i = 0; i < 3; i++) await consumer.poll(200);
    await consumer.close();
    const group = c.consumer({ groupId: 'fz-corpus-group', autoOffsetReset: 'earliest' });
    group.subscribe(['fz-corpus']);
    await group.waitForAssignment();
    await group.poll(300);
    // Long enough for a heartbeat.
    await new Promise((r) => setTimeout(r, 3500));
    await group.poll(300);
    await group.commit().catch(() => undefined);
    await group.committed().catch(() => undefined);
    await c.groups().listGroups();
    await c.groups().describeGroup('fz-corpus-group');
    await group.close();
    await c.groups().deleteGroup('fz-corpus-group').catch(() => undefined);
    await admin.deleteTopics(['fz-corpus-compact']);
    await c.close({ timeoutMs: 2000 });
  } finally {
    WebSocket.prototype.send = send;
    await broker.stop();
  }
  // Keep a bounded, varied corpus: every frame of the rarer APIs, at most 40 of each common one.
  const perApi = new Map();
  const kept = [];
  for (const f of frames) {
    let api;
    try {
      api = bodyOf(RequestFrame.decode(f));
    } catch {
      continue;
    }
    if (!api) continue;
    const n = perApi.get(api) ?? 0;
    if (n >= 40) continue;
    perApi.set(api, n + 1);
    kept.push({ api, frame: f.toString('base64') });
  }
  await writeFile(CORPUS_FILE, `${JSON.stringify(kept, null, 1)}\n`);
  return { frames: kept.length, perApi: Object.fromEntries(perApi) };
}
