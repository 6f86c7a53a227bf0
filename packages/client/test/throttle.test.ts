/**
 * The client honours a broker's throttle_ms (quotas, KIP-219): once an answer
 * carries one, nothing more is sent on that connection until it has passed
 * (requests are held, in order), and other connections are not affected.
 */
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { SUPPORTED_API_VERSIONS, decodeRequest, encodeResponse, type RequestBody } from '@mq/protocol/wire';
import { Connection } from '../src/connection.js';

/** A broker that answers metadata with `throttleMs` on the first answer only, and notes when each request arrived. */
async function throttlingBroker(throttleMs: number) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', perMessageDeflate: false });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const arrivals: number[] = [];
  let throttled = false;
  wss.on('connection', (ws) => {
    ws.on('message', (data: Buffer) => {
      const frame = decodeRequest(data);
      const body = frame.body as RequestBody;
      if (body === 'handshake') {
        ws.send(encodeResponse({ correlationId: frame.correlationId, handshake: { brokerId: 1, clusterId: 'fake', apiVersions: [...SUPPORTED_API_VERSIONS], maxFrameBytes: 1 << 20 } }));
        return;
      }
      arrivals.push(Date.now());
      const t = throttled ? 0 : throttleMs;
      throttled = true;
      ws.send(encodeResponse({ correlationId: frame.correlationId, throttleMs: t, metadata: { brokers: [], topics: [] } }));
    });
  });
  const address = `127.0.0.1:${(wss.address() as AddressInfo).port}`;
  return { address, arrivals, close: () => new Promise<void>((r) => wss.close(() => r())) };
}

const opts = (address: string) => ({ address, clientId: 'test', connectTimeoutMs: 2000, requestTimeoutMs: 5000, maxResponseBytes: 1 << 20 });

describe('throttle_ms', () => {
  it('holds the next requests of the connection until the throttle time has passed, in order', async () => {
    const b = await throttlingBroker(400);
    const conn = await Connection.open(opts(b.address));
    try {
      const first = Date.now();
      await conn.request('metadata', { topics: [] });
      expect(conn.throttledUntilMs).toBeGreaterThanOrEqual(first + 400);
      const answers = await Promise.all([1, 2, 3].map(() => conn.request('metadata', { topics: [] })));
      expect(answers.length).toBe(3);
      // Nothing after the first arrived before its throttle time had passed.
      for (const at of b.arrivals.slice(1)) expect(at).toBeGreaterThanOrEqual(b.arrivals[0]! + 380);
      // Once it has passed, requests go at once again.
      const sent = Date.now();
      await conn.request('metadata', { topics: [] });
      expect(b.arrivals[b.arrivals.length - 1]! - sent).toBeLessThan(300);
    } finally {
      conn.close();
      await b.close();
    }
  });

  it('a held request its caller aborted, or that timed out, is never written once the throttle time has passed', async () => {
    const b = await throttlingBroker(800);
    const conn = await Connection.open(opts(b.address));
    try {
      await conn.request('metadata', { topics: [] });
      const abort = new AbortController();
      const aborted = conn.request('metadata', { topics: [] }, { signal: abort.signal });
      const timedOut = conn.request('metadata', { topics: [] }, { timeoutMs: 200 });
      const kept = conn.request('metadata', { topics: [] });
      abort.abort();
      await expect(aborted).rejects.toMatchObject({ code: 'ABORTED' });
      await expect(timedOut).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT' });
      await kept;
      // The first request and the one still wanted: the two given up on never reached the broker.
      expect(b.arrivals).toHaveLength(2);
    } finally {
      conn.close();
      await b.close();
    }
  });

  it('a held request fails with the connection when it closes', async () => {
    const b = await throttlingBroker(10_000);
    const conn = await Connection.open(opts(b.address));
    try {
      await conn.request('metadata', { topics: [] });
      const held = conn.request('metadata', { topics: [] });
      conn.close();
      await expect(held).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    } finally {
      await b.close();
    }
  });
});
