/**
 * The browser transport (src/transport/native-websocket.ts) run on Node with
 * `ws`'s WebSocket class, which has the WHATWG API a browser's has
 * (addEventListener, binaryType, send, close): the whole client over it
 * against the fake broker, and its limits and failures. e2e/browser-client
 * runs the same code in real Chromium.
 */
import net from 'node:net';
import WebSocket from 'ws';
import { freePort } from '../../../tools/free-port.mjs';
import { Connection } from '../src/connection.js';
import { MqClient } from '../src/index.js';
import { connectNativeWebSocket, type NativeWebSocketConstructor } from '../src/transport/native-websocket.js';
import type { ConnectFn } from '../src/connection.js';
import { startFakeBroker, type FakeBroker } from './fake-broker.js';

const WhatwgWebSocket = WebSocket as unknown as NativeWebSocketConstructor;
const connect: ConnectFn = (options, signal) => connectNativeWebSocket(options, signal, WhatwgWebSocket);
const opts = (address: string) => ({ address, clientId: 'test', connectTimeoutMs: 2000, requestTimeoutMs: 2000, maxResponseBytes: 1 << 20 });

let broker: FakeBroker;
beforeEach(async () => {
  broker = await startFakeBroker({ topics: { one: 2 } });
});
afterEach(async () => {
  await broker.close();
});

describe('connectNativeWebSocket', () => {
  it('carries a producer and a consumer end to end (binary frames in, Buffers out)', async () => {
    const client = new MqClient({ bootstrap: broker.address }, { connect });
    const producer = client.producer({ lingerMs: 0 });
    const sent = await Promise.all(
      Array.from({ length: 20 }, (_, i) => producer.send('one', { partition: i % 2, key: `k${i}`, value: `v${i}`, headers: { h: 'é' } })),
    );
    expect(sent.filter((m) => m.partition === 0).map((m) => m.offset)).toEqual([...Array(10).keys()]);
    const consumer = client.consumer({ autoOffsetReset: 'earliest' });
    consumer.assign([0, 1].map((partition) => ({ topic: 'one', partition })));
    const got: string[] = [];
    while (got.length < 20) for (const r of await consumer.poll(500)) got.push(`${r.key}=${r.value}:${r.headers[0]!.value}`);
    expect(got.sort()).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}=v${i}:é`).sort());
    await client.close();
  });

  it('reconnects after the broker drops the connection', async () => {
    const client = new MqClient({ bootstrap: broker.address, retry: { initialDelayMs: 10, maxDelayMs: 50 } }, { connect });
    const producer = client.producer({ lingerMs: 0 });
    await producer.send('one', { partition: 0, value: 'a' });
    broker.dropConnections();
    const m = await producer.send('one', { partition: 0, value: 'b' });
    expect(m.offset).toBe(1);
    await client.close();
  });

  it('fails a connection whose answer is over maxResponseBytes with CONNECTION_ERROR', async () => {
    const conn = await Connection.open({ ...opts(broker.address), maxResponseBytes: 1024 }, undefined, connect);
    const many = Array.from({ length: 200 }, (_, i) => `a-long-topic-name-to-fill-the-answer-${i}`);
    await expect(conn.request('metadata', { topics: many })).rejects.toMatchObject({ code: 'CONNECTION_ERROR' });
    expect(conn.closed).toBe(true);
  });

  it('refuses with a typed, retriable CONNECTION_ERROR where nothing listens', async () => {
    const port = await freePort();
    const err = await Connection.open(opts(`127.0.0.1:${port}`), undefined, connect).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONNECTION_ERROR', retriable: true });
    expect((err as Error).message).toContain(`127.0.0.1:${port}`);
  });

  it('gives up after connectTimeoutMs on a server that never answers the upgrade', async () => {
    const silent = net.createServer(() => undefined);
    const port = await freePort();
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    try {
      const started = Date.now();
      const err = await Connection.open({ ...opts(`127.0.0.1:${port}`), connectTimeoutMs: 300 }, undefined, connect).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'CONNECTION_ERROR' });
      expect((err as Error).message).toContain('no answer within 300 ms');
      expect(Date.now() - started).toBeLessThan(2_000);
    } finally {
      silent.close();
    }
  });

  it('says so when the platform has no WebSocket', async () => {
    await expect(connectNativeWebSocket(opts(broker.address), undefined, undefined)).rejects.toMatchObject({ code: 'CONNECTION_ERROR' });
  });

  it('an aborted open rejects with ABORTED', async () => {
    const ac = new AbortController();
    const p = connectNativeWebSocket(opts(broker.address), ac.signal, WhatwgWebSocket);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' });
  });
});
