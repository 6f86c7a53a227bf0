import net from 'node:net';
import { dialRefused } from './refused-probe.js';

describe('dialRefused', () => {
  it('is true for a port nothing listens on, false for one that accepts', async () => {
    const server = net.createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      expect(await dialRefused('127.0.0.1', port)).toBe(false);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(await dialRefused('127.0.0.1', port)).toBe(true);
  });
});
