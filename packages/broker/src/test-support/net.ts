/**
 * Small helpers for the broker's tests (src/**\/*.test.ts and test/): a free
 * loopback port, a poll-until-true wait and a raw WebSocket upgrade. Not part of the published package.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';

/** A TCP port on 127.0.0.1, below the ephemeral range, that was free a moment ago (see tools/free-port.mjs). */
export { freePort } from '../../../../tools/free-port.mjs';

/** Resolves with fn's first truthy result (so a `T | null` condition yields a `T`). */
export async function waitFor<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A WebSocket upgrade request on 127.0.0.1:`port`; resolves with 101 when upgraded, else the HTTP status of the refusal. */
export function upgrade(port: number, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port,
      path: '/',
      agent: false,
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve(101);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

