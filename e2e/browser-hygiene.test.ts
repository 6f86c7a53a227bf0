/**
 * Browser hygiene (issue 17) in real headless Chromium (Debian's) against a
 * real broker process. Two pages on other local origins (127.0.0.1, other
 * ports): one the broker does not know, one it allows (ws.allowed.origins,
 * http.cors.allowed.origins).
 *  - From the unknown origin, the attack of the issue: a `fetch(..., {mode:
 *    'no-cors'})` POST /topics (text/plain body) creates no topic; a CORS
 *    read gets nothing; a WebSocket to the broker never opens.
 *  - From the allowed origin: a JSON POST (after its preflight) creates a
 *    topic, the answer is readable, and a WebSocket opens.
 */
import { freePort } from '../tools/free-port.mjs';
import { openPage, type BrowserPage } from './src/browser.js';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

const HTML = '<!doctype html><meta charset="utf-8"><title>a page</title><script>globalThis.mqReady = true;</script>';

let broker: BrokerProcess;
let evil: BrowserPage;
let allowed: BrowserPage;
let allowedOrigin: string;

beforeAll(async () => {
  const [evilPort, allowedPort] = [await freePort(), await freePort()];
  allowedOrigin = `http://127.0.0.1:${allowedPort}`;
  broker = await startBroker({
    port: await freePort(),
    httpPort: await freePort(),
    args: ['--config-set', `ws.allowed.origins=${allowedOrigin}`, '--config-set', `http.cors.allowed.origins=${allowedOrigin}`],
  });
  evil = await openPage({ '/': { type: 'text/html', body: HTML } }, evilPort);
  allowed = await openPage({ '/': { type: 'text/html', body: HTML } }, allowedPort);
}, 60_000);

afterAll(async () => {
  await evil?.close();
  await allowed?.close();
  await cleanup();
});

async function topicExists(name: string): Promise<boolean> {
  const res = await fetch(`${broker.httpUrl}/topics/${name}`);
  await res.arrayBuffer();
  return res.status === 200;
}

async function inPage<A, R>(page: BrowserPage, fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  try {
    return (await page.page.evaluate(fn as (arg: unknown) => Promise<unknown>, arg)) as R;
  } catch (err) {
    throw new Error(`${(err as Error).message}\npage log:\n${page.log.join('\n')}`);
  }
}

describe('browser hygiene in headless Chromium', () => {
  it('a page from another origin: the no-cors POST creates no topic, a CORS read and a WebSocket are refused', async () => {
    const name = uniqueName('nocors');
    const result = await inPage(
      evil,
      async ({ api, ws, name }) => {
        // Opens a WebSocket; 'open', or 'refused' when it fails or closes first.
        const probe = (u: string) =>
          new Promise<string>((resolve) => {
            const sock = new WebSocket(u);
            sock.onopen = () => {
              sock.close();
              resolve('open');
            };
            sock.onerror = () => resolve('refused');
            sock.onclose = () => resolve('refused');
          });
        // The attack: an opaque request the page cannot read, but which used to create the topic.
        const opaque = await fetch(`${api}/topics`, { method: 'POST', mode: 'no-cors', body: JSON.stringify({ name, partition_count: 1 }) });
        // The same with a declared text/plain type, and a form-encoded one.
        await fetch(`${api}/topics`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ name, partition_count: 1 }) });
        await fetch(`${api}/topics`, { method: 'POST', mode: 'no-cors', body: new URLSearchParams({ name }) });
        let read = 'readable';
        try {
          await (await fetch(`${api}/topics`)).json();
        } catch (err) {
          read = `blocked: ${(err as Error).name}`;
        }
        const wsResult = await probe(ws);
        return { opaqueType: opaque.type, read, ws: wsResult };
      },
      { api: broker.httpUrl, ws: `ws://127.0.0.1:${broker.port}`, name },
    );
    expect({ ...result, topicCreated: await topicExists(name) }).toEqual({ opaqueType: 'opaque', read: 'blocked: TypeError', ws: 'refused', topicCreated: false });
    // The broker said why, once per refusal.
    await waitFor(() => broker.output.some((l) => l.includes('ws.allowed.origins')), { message: 'no WebSocket refusal logged' });
    expect(broker.output.filter((l) => l.includes('"msg":"http request refused"') && l.includes('"status":403') && l.includes('"path":"/topics"'))).toHaveLength(3);
  });

  it('a page from an allowed origin creates a topic with a JSON POST, reads the answer and opens a WebSocket', async () => {
    const name = uniqueName('allowed');
    const result = await inPage(
      allowed,
      async ({ api, ws, name }) => {
        // Opens a WebSocket; 'open', or 'refused' when it fails or closes first.
        const probe = (u: string) =>
          new Promise<string>((resolve) => {
            const sock = new WebSocket(u);
            sock.onopen = () => {
              sock.close();
              resolve('open');
            };
            sock.onerror = () => resolve('refused');
            sock.onclose = () => resolve('refused');
          });
        const res = await fetch(`${api}/topics`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, partition_count: 2 }) });
        const body = (await res.json()) as { name: string; partition_count: number };
        const list = (await (await fetch(`${api}/topics`)).json()) as unknown;
        const wsResult = await probe(ws);
        return { status: res.status, body: { name: body.name, partition_count: body.partition_count }, listed: Array.isArray(list) || typeof list === 'object', ws: wsResult };
      },
      { api: broker.httpUrl, ws: `ws://127.0.0.1:${broker.port}`, name },
    );
    expect(result).toEqual({ status: 201, body: { name, partition_count: 2 }, listed: true, ws: 'open' });
    expect(await topicExists(name)).toBe(true);
  });
});
