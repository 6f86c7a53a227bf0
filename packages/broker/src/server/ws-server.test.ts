/** A WebSocket listener without an origin list (the inter-broker port): every browser (an Origin header) is refused at the upgrade. */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { freePort, upgrade } from '../test-support/net.js';
import { WsServer } from './ws-server.js';

it('the inter-broker listener (no origin list) refuses any Origin, own-looking ones too, and accepts peers (no Origin)', async () => {
  const msgs: string[] = [];
  const logger = pino({ level: 'info' }, new Writable({ write: (c: Buffer, _e, cb) => (msgs.push((JSON.parse(c.toString()) as { msg: string }).msg), cb()) }));
  const server = new WsServer(
    {
      host: '127.0.0.1',
      port: await freePort(),
      maxFrameBytes: 1 << 20,
      idleMs: 60_000,
      setupTimeoutMs: 5_000,
      frameTimeoutMs: 5_000,
      maxHeaderBytes: 16_384,
      maxHeaders: 100,
      limits: { maxInFlight: 4, maxFetchesInFlight: 1, maxBufferedBytes: 1 << 20, maxRequestEntries: 100 },
    },
    {},
    logger,
  );
  const port = await server.listen();
  try {
    expect(await upgrade(port, { origin: `http://127.0.0.1:${port}` })).toBe(403);
    expect(await upgrade(port, { origin: 'http://localhost:9080' })).toBe(403);
    expect(msgs.filter((m) => m === 'refused a WebSocket upgrade from a browser on the inter-broker port')).toHaveLength(2);
    expect(await upgrade(port)).toBe(101);
  } finally {
    await server.close(0);
  }
});
