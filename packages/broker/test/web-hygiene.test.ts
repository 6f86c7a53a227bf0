/**
 * Browser and HTTP hygiene (issue 17), against a real broker on real sockets:
 *  - a WebSocket upgrade with a browser Origin that is not allowed is refused
 *    with 403 and one log line; without an Origin (Node clients) or from the
 *    broker's own HTTP origin or a listed one it is accepted;
 *  - CORS: preflights from allowed origins are answered, others get 403 and no
 *    Access-Control-Allow-Origin; a cross-origin POST (the no-cors attack) and a
 *    non-JSON body are refused before anything is created;
 *  - request heads are bounded (header count and size: 431) on both ports;
 *  - listening beyond loopback needs allow.insecure=true.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startBroker } from '../src/index.js';
import { upgrade } from '../src/test-support/net.js';
import { httpJson, startTestBroker, topicName, type LogLine, type TestBroker } from './helpers.js';

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One HTTP request with exactly these headers (fetch would add or forbid some). */
function raw(port: number, method: string, urlPath: string, headers: Record<string, string> = {}, body?: string): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: urlPath, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends a raw request head and returns the status line's code. */
function rawHead(port: number, head: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.write(head));
    let got = '';
    s.on('data', (c: Buffer) => {
      got += c.toString('latin1');
    });
    s.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
      if (m) resolve(Number(m[1]));
      else reject(new Error(`no HTTP answer: ${JSON.stringify(got.slice(0, 100))}`));
    });
    s.on('error', reject);
  });
}

const EVIL = 'http://evil.example:8000';
const refusals = (t: TestBroker, re: RegExp) => t.lines.filter((l) => re.test(l.msg));

describe('WebSocket Origin check (default: own origin only)', () => {
  let t: TestBroker;
  beforeAll(async () => {
    t = await startTestBroker();
  });
  afterAll(async () => t.cleanup());

  it('accepts an upgrade without an Origin header (Node clients, tools)', async () => {
    expect(await upgrade(t.broker.port)).toBe(101);
  });

  it('refuses a browser origin that is not allowed with 403 and one log line', async () => {
    const before = refusals(t, /ws\.allowed\.origins/).length;
    expect(await upgrade(t.broker.port, { origin: EVIL })).toBe(403);
    expect(await upgrade(t.broker.port, { origin: 'null' })).toBe(403);
    // The client port's own origin is not the HTTP API's.
    expect(await upgrade(t.broker.port, { origin: `http://127.0.0.1:${t.broker.port}` })).toBe(403);
    const lines = refusals(t, /ws\.allowed\.origins/).slice(before);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({ level: 40, origin: EVIL });
  });

  it("allows the broker's own HTTP origin, under each loopback name", async () => {
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      expect(await upgrade(t.broker.port, { origin: `http://${host}:${t.broker.httpPort}` })).toBe(101);
    }
  });
});

describe('WebSocket Origin check with ws.allowed.origins', () => {
  it('a listed origin is allowed (normalised: case, default port, trailing slash), others refused; * allows any', async () => {
    const t = await startTestBroker({ 'ws.allowed.origins': 'http://App.Test:5173/, https://console.test:443' });
    try {
      expect(await upgrade(t.broker.port, { origin: 'http://app.test:5173' })).toBe(101);
      expect(await upgrade(t.broker.port, { origin: 'https://console.test' })).toBe(101);
      expect(await upgrade(t.broker.port, { origin: 'http://app.test:5174' })).toBe(403);
      expect(await upgrade(t.broker.port, { origin: 'https://app.test:5173' })).toBe(403);
      await t.restart({ 'ws.allowed.origins': '*' });
      expect(await upgrade(t.broker.port, { origin: EVIL })).toBe(101);
    } finally {
      await t.cleanup();
    }
  });

  it('an entry that is not an origin is INVALID_CONFIG', async () => {
    await expect(startTestBroker({ 'ws.allowed.origins': 'http://app.test:5173/console' })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('ws.allowed.origins') });
    await expect(startTestBroker({ 'http.cors.allowed.origins': 'app.test' })).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
  });
});

describe('HTTP: CORS, JSON bodies, header bounds', () => {
  let t: TestBroker;
  const APP = 'http://app.test:5173';
  beforeAll(async () => {
    t = await startTestBroker({ 'http.cors.allowed.origins': APP, 'http.max.headers': '40', 'http.max.header.bytes': '4096' });
  });
  afterAll(async () => t.cleanup());
  const exists = async (name: string) => (await httpJson(`${t.httpUrl}/topics/${name}`)).status === 200;

  it('answers a preflight from an allowed origin (and the own one) with what it may send', async () => {
    for (const origin of [APP, `http://localhost:${t.broker.httpPort}`]) {
      const r = await raw(t.broker.httpPort, 'OPTIONS', '/topics', { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' });
      expect(r.status).toBe(204);
      expect(r.headers['access-control-allow-origin']).toBe(origin);
      expect(String(r.headers['access-control-allow-methods']).split(', ').sort()).toEqual(['GET', 'POST']);
      expect(r.headers['access-control-allow-headers']).toBe('content-type');
      expect(r.headers.vary).toBe('origin');
    }
  });

  it('refuses a preflight from another origin with 403, a typed error and no Access-Control-Allow-Origin', async () => {
    const r = await raw(t.broker.httpPort, 'OPTIONS', '/topics', { origin: EVIL, 'access-control-request-method': 'POST' });
    expect(r.status).toBe(403);
    expect(r.headers['access-control-allow-origin']).toBeUndefined();
    expect(r.body).toEqual({ error: { code: 'INVALID_REQUEST', message: expect.stringContaining(EVIL), retriable: false } });
  });

  it('GETs carry Access-Control-Allow-Origin for allowed origins only', async () => {
    expect((await raw(t.broker.httpPort, 'GET', '/topics', { origin: APP })).headers['access-control-allow-origin']).toBe(APP);
    const other = await raw(t.broker.httpPort, 'GET', '/topics', { origin: EVIL });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect((await raw(t.broker.httpPort, 'GET', '/topics')).headers['access-control-allow-origin']).toBeUndefined();
  });

  it("refuses the no-cors attack: a cross-origin text/plain POST /topics creates nothing (403), and one log line", async () => {
    const name = topicName('nocors');
    const before = t.lines.filter((l) => l.msg === 'http request refused').length;
    const r = await raw(t.broker.httpPort, 'POST', '/topics', { origin: EVIL, 'content-type': 'text/plain;charset=UTF-8' }, JSON.stringify({ name, partition_count: 1 }));
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('INVALID_REQUEST');
    // Without a body too (a no-cors POST needs none to reach a route).
    expect((await raw(t.broker.httpPort, 'POST', '/topics', { origin: EVIL })).status).toBe(403);
    expect((await raw(t.broker.httpPort, 'DELETE', '/topics/x', { origin: EVIL })).status).toBe(403);
    const lines = t.lines.filter((l) => l.msg === 'http request refused').slice(before);
    expect(lines).toHaveLength(3);
    expect(await exists(name)).toBe(false);
    expect(lines[0]).toMatchObject({ status: 403, method: 'POST', path: '/topics' });
  });

  it('a POST body that is not application/json is 415 with a typed error, before any side effect', async () => {
    const name = topicName('plain');
    const body = JSON.stringify({ name, partition_count: 1 });
    for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const r = await raw(t.broker.httpPort, 'POST', '/topics', type ? { 'content-type': type } : {}, body);
      expect(r.status).toBe(415);
      expect(r.body).toEqual({ error: { code: 'INVALID_REQUEST', message: expect.stringContaining('application/json'), retriable: false } });
    }
    expect(await exists(name)).toBe(false);
    // The same body as JSON works, from an allowed origin and without one.
    expect((await raw(t.broker.httpPort, 'POST', '/topics', { origin: APP, 'content-type': 'application/json; charset=utf-8' }, body)).status).toBe(201);
    expect(await exists(name)).toBe(true);
  });

  it('bounds the header count and the head size (431), and still serves the next request', async () => {
    const many = Object.fromEntries(Array.from({ length: 41 }, (_, i) => [`x-h${i}`, 'v']));
    const r = await raw(t.broker.httpPort, 'GET', '/health', many);
    expect(r.status).toBe(431);
    expect(r.body.error.message).toContain('http.max.headers');
    expect((await raw(t.broker.httpPort, 'GET', '/health', Object.fromEntries(Object.entries(many).slice(0, 30)))).status).toBe(200);
    expect(await rawHead(t.broker.httpPort, `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(5000)}\r\n\r\n`)).toBe(431);
    expect(t.lines.some((l) => l.msg === 'refused a request head over http.max.header.bytes' && l.status === 431)).toBe(true);
    // The WebSocket upgrade has the same bounds.
    expect(await upgrade(t.broker.port, many)).toBe(431);
    expect(await rawHead(t.broker.port, `GET / HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(5000)}\r\n\r\n`)).toBe(431);
    expect((await httpJson(`${t.httpUrl}/health`)).status).toBe(200);
  });
});

describe('safe by default: listening beyond loopback', () => {
  async function start(host: string, config: Record<string, string> = {}) {
    const dataDir = await mkdtemp(path.join(tmpdir(), 'mq-exposure-'));
    const lines: LogLine[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        for (const l of chunk.toString('utf8').split('\n')) if (l) lines.push(JSON.parse(l) as LogLine);
        cb();
      },
    });
    const logger = pino({ level: 'info' }, sink);
    const cleanup = () => rm(dataDir, { recursive: true, force: true });
    try {
      const broker = await startBroker({ dataDir, host, port: 0, httpPort: 0, config: { 'offsets.topic.num.partitions': '1', ...config } }, { logger });
      return { broker, lines, cleanup: async () => (await broker.close(), await cleanup()) };
    } catch (err) {
      await cleanup();
      throw err;
    }
  }

  it('refuses 0.0.0.0 and a non-loopback Raft voter address without allow.insecure=true', async () => {
    await expect(start('0.0.0.0')).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringMatching(/0\.0\.0\.0.*allow\.insecure=true/) });
    await expect(start('::')).rejects.toMatchObject({ code: 'INVALID_CONFIG' });
    await expect(start('127.0.0.1', { 'controller.quorum.voters': '1@192.0.2.7:19093' })).rejects.toMatchObject({ code: 'INVALID_CONFIG', message: expect.stringContaining('Raft listener on 192.0.2.7') });
  });

  it('with allow.insecure=true it starts and warns at every start', async () => {
    const b = await start('0.0.0.0', { 'allow.insecure': 'true' });
    try {
      expect((await httpJson(`http://127.0.0.1:${b.broker.httpPort}/health`)).status).toBe(200);
      expect(b.lines.filter((l) => l.level === 40 && /^INSECURE/.test(l.msg))).toHaveLength(1);
    } finally {
      await b.cleanup();
    }
  });

  it('on loopback it says that only this machine can connect', async () => {
    const b = await start('127.0.0.1');
    try {
      expect(b.lines.filter((l) => /loopback only/.test(l.msg))).toHaveLength(1);
      expect(b.lines.some((l) => /^INSECURE/.test(l.msg))).toBe(false);
    } finally {
      await b.cleanup();
    }
  });
});
