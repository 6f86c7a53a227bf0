/**
 * Issue 22, slow and silent connections: slowloris connections were all
 * still open after 20 s. Each way of never sending a complete frame is
 * closed within a bound: a socket that never upgrades
 * (connection.setup.timeout.ms), HTTP upgrade headers trickling in, an
 * upgraded connection that never sends a frame, and a WebSocket frame whose
 * bytes trickle in (connection.frame.timeout.ms). A client that behaves is
 * served throughout.
 */
import { connect, type Socket } from 'node:net';
import { startTestBroker, TestClient, type TestBroker } from './helpers.js';

const SETUP_MS = 500;
const FRAME_MS = 1000;

describe('slow and silent connections', () => {
  let t: TestBroker;
  let good: TestClient;
  let keepBusy: NodeJS.Timeout;

  beforeAll(async () => {
    t = await startTestBroker({ 'connection.setup.timeout.ms': String(SETUP_MS), 'connection.frame.timeout.ms': String(FRAME_MS) });
    good = await TestClient.connect(t.url);
    keepBusy = setInterval(() => void good.request({ metadata: {} }).catch(() => undefined), 200);
  });

  afterAll(async () => {
    clearInterval(keepBusy);
    // The well-behaved client sent a frame every 200 ms: it was never closed.
    expect((await good.request({ metadata: {} })).metadata).toBeDefined();
    await good.close();
    await t.cleanup();
  });

  /** Opens a raw TCP socket to the broker (its HTTP API port with `http`); resolves with the ms until the broker ends it. */
  async function rawSocket(onOpen: (s: Socket) => void, port = t.broker.port): Promise<number> {
    const s = connect(port, '127.0.0.1');
    s.on('error', () => undefined);
    await new Promise<void>((resolve) => s.once('connect', () => resolve()));
    const started = Date.now();
    onOpen(s);
    await new Promise<void>((resolve) => s.once('close', () => resolve()));
    return Date.now() - started;
  }

  it('a socket that never sends anything is destroyed after connection.setup.timeout.ms', async () => {
    const ms = await rawSocket(() => undefined);
    expect(ms).toBeGreaterThanOrEqual(SETUP_MS - 50);
    expect(ms).toBeLessThan(SETUP_MS + 2000);
  });

  it('HTTP upgrade headers trickling in: destroyed after connection.setup.timeout.ms', async () => {
    let timer: NodeJS.Timeout | undefined;
    const ms = await rawSocket((s) => {
      const request = `GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n`;
      let i = 0;
      timer = setInterval(() => {
        if (i < request.length && !s.destroyed) s.write(request[i++]!);
      }, 50);
    });
    clearInterval(timer);
    expect(ms).toBeLessThan(SETUP_MS + 2000);
  });

  it('an upgraded connection that never sends a frame is closed with 1008 after connection.frame.timeout.ms', async () => {
    const c = await TestClient.connect(t.url);
    const started = Date.now();
    const closed = await c.closed;
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/no frame within 1000 ms/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(FRAME_MS - 100);
    expect(Date.now() - started).toBeLessThan(FRAME_MS + 2000);
  });

  it('a WebSocket frame whose bytes trickle in is closed after connection.frame.timeout.ms', async () => {
    const c = await TestClient.connect(t.url);
    // One complete frame first, so only the trickling one can be the reason.
    expect((await c.request({ metadata: {} })).metadata).toBeDefined();
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    // A masked binary frame announcing 100 bytes of payload, then one byte every 100 ms.
    socket.write(Buffer.from([0x82, 0x80 | 100, 1, 2, 3, 4]));
    const trickle = setInterval(() => {
      if (!socket.destroyed) socket.write(Buffer.from([0]));
    }, 100);
    const started = Date.now();
    const closed = await c.closed;
    clearInterval(trickle);
    expect(closed.reason).toMatch(/a frame not completed within 1000 ms/);
    expect(Date.now() - started).toBeLessThan(FRAME_MS + 2000);
  });

  describe('on the HTTP API port', () => {
    /** Writes `text` one character every 50 ms for as long as the socket is open. */
    function trickle(s: Socket, text: string): NodeJS.Timeout {
      let i = 0;
      return setInterval(() => {
        if (i < text.length && !s.destroyed) s.write(text[i++]!);
      }, 50);
    }

    it('a socket that never sends a request is destroyed after connection.setup.timeout.ms', async () => {
      const ms = await rawSocket(() => undefined, t.broker.httpPort);
      expect(ms).toBeLessThan(SETUP_MS + 2000);
    });

    it('request headers trickling in: destroyed after connection.setup.timeout.ms', async () => {
      let timer: NodeJS.Timeout | undefined;
      const ms = await rawSocket((s) => (timer = trickle(s, `GET /topics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ${'a'.repeat(200)}\r\n`)), t.broker.httpPort);
      clearInterval(timer);
      expect(ms).toBeLessThan(SETUP_MS + 2000);
    });

    it('a request body trickling in: destroyed after connection.frame.timeout.ms', async () => {
      let timer: NodeJS.Timeout | undefined;
      const ms = await rawSocket((s) => {
        s.write(`POST /topics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n`);
        timer = trickle(s, `{"name":"${'x'.repeat(480)}"}`);
      }, t.broker.httpPort);
      clearInterval(timer);
      expect(ms).toBeGreaterThanOrEqual(FRAME_MS - 100);
      expect(ms).toBeLessThan(FRAME_MS + 2000);
    });

    it('still answers a request that arrives in time', async () => {
      const res = await fetch(`${t.httpUrl}/topics`);
      expect(res.status).toBe(200);
    });
  });
});
