/** The HTTP API of a real broker process: a round trip, a graceful stop (SIGTERM) and a restart that keeps everything. */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { cleanup, startBroker, uniqueName } from './src/harness.js';

async function call(url: string, method = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

describe('broker HTTP API (real process)', () => {
  afterAll(async () => {
    await cleanup();
  });

  it('creates a topic, produces and reads records, and keeps them across a graceful restart', async () => {
    const broker = await startBroker();
    const api = broker.httpUrl;
    expect((await call(`${api}/health`)).body.status).toBe('ok');
    const topic = uniqueName('http');
    expect((await call(`${api}/topics`, 'POST', { name: topic, partition_count: 3, replication_factor: 1 })).status).toBe(201);
    const keyed = await call(`${api}/topics/${topic}/records`, 'POST', [
      { key: 'user-1', value: 'one', headers: { source: 'e2e' } },
      { key: 'user-1', value: 'two' },
      { key: 'user-2', value: 'three' },
    ]);
    expect(keyed.status).toBe(200);
    const [a, b] = keyed.body as Array<{ partition: number; offset: number }>;
    expect(b!.partition).toBe(a!.partition);
    expect(b!.offset).toBe(a!.offset + 1);

    expect(await broker.stop()).toBe(0);
    await access(path.join(broker.dataDir, '.clean-shutdown'));
    await broker.restart();
    const page = await call(`${api}/topics/${topic}/partitions/${a!.partition}/records?offset=${a!.offset}`);
    expect(page.body.records.slice(0, 2).map((r: { key: string; value: string }) => [r.key, r.value])).toEqual([
      ['user-1', 'one'],
      ['user-1', 'two'],
    ]);
    expect(page.body.records[0].headers).toEqual([{ key: 'source', value: 'e2e' }]);
    const wm = await call(`${api}/topics/${topic}/partitions/${a!.partition}/watermarks`);
    expect(wm.body.high).toBeGreaterThanOrEqual(2);
    const list = await call(`${api}/topics`);
    expect(list.body).toContainEqual({ name: topic, partition_count: 3, replication_factor: 1 });
    const doc = await call(`${api}/openapi.json`);
    expect(doc.body.openapi).toBe('3.1.0');
  });
});
