import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';
import { frameHeader, ownedFrameWriter } from './owned-frame-writer.js';

/** A real ws server (which refuses unmasked client frames) collecting every binary message it receives. */
async function server(): Promise<{ url: string; received: Buffer[]; close(): Promise<void> }> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, maxPayload: 8 * 1024 * 1024 });
  await once(wss, 'listening');
  const received: Buffer[] = [];
  wss.on('connection', (s) => s.on('message', (data: Buffer) => received.push(Buffer.from(data))));
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => wss.close(() => resolve())),
  };
}

async function open(url: string): Promise<WebSocket> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await once(ws, 'open');
  return ws;
}

const until = async (ok: () => boolean): Promise<void> => {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
};

describe('ownedFrameWriter', () => {
  it('is available on the ws version in use (a ws upgrade that renames its internals fails here)', async () => {
    const s = await server();
    const ws = await open(s.url);
    try {
      expect(ownedFrameWriter(ws)).toBeDefined();
    } finally {
      ws.terminate();
      await s.close();
    }
  });

  it('delivers every message intact across the three length encodings, masking the given bytes in place', async () => {
    const s = await server();
    const ws = await open(s.url);
    try {
      const write = ownedFrameWriter(ws)!;
      const sizes = [0, 1, 31, 32, 125, 126, 65535, 65536, 1024 * 1024 + 3];
      const originals = sizes.map((n) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff)));
      const given = originals.map((b) => Buffer.from(b));
      const written: (Error | undefined)[] = [];
      // Interleaved with ws's own send(): frames stay whole and in order.
      for (const [i, b] of given.entries()) {
        write(b, (err) => written.push(err));
        if (i === 3) ws.send(Buffer.from('between'), { binary: true });
      }
      await until(() => s.received.length === sizes.length + 1);
      const expected = [...originals.slice(0, 4), Buffer.from('between'), ...originals.slice(4)];
      expect(s.received.map((b) => b.length)).toEqual(expected.map((b) => b.length));
      for (const [i, b] of expected.entries()) expect(s.received[i]!.equals(b)).toBe(true);
      expect(written).toEqual(sizes.map(() => undefined));
      // The writer owned the bytes: masked with a random key, the large ones no longer read as they were.
      expect(given.at(-1)!.equals(originals.at(-1)!)).toBe(false);
    } finally {
      ws.terminate();
      await s.close();
    }
  });

  it('hands a closed socket to ws.send(), which reports the failure', async () => {
    const s = await server();
    const ws = await open(s.url);
    const write = ownedFrameWriter(ws)!;
    ws.close();
    await once(ws, 'close');
    const err = await new Promise<Error | undefined>((resolve) => write(Buffer.from('late'), resolve));
    expect(err).toBeInstanceOf(Error);
    await s.close();
  });

  it('is undefined when ws does not have the internals it relies on', () => {
    expect(ownedFrameWriter({ readyState: 1 } as unknown as WebSocket)).toBeUndefined();
  });

  it('encodes the header of each length class with the mask bit and key', () => {
    const key = Buffer.from([1, 2, 3, 4]);
    expect([...frameHeader(5, key)]).toEqual([0x82, 0x85, 1, 2, 3, 4]);
    expect([...frameHeader(300, key)]).toEqual([0x82, 0xfe, 0x01, 0x2c, 1, 2, 3, 4]);
    expect([...frameHeader(0x10000, key)]).toEqual([0x82, 0xff, 0, 0, 0, 0, 0, 1, 0, 0, 1, 2, 3, 4]);
  });
});
