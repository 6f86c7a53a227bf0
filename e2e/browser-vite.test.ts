/**
 * @mq/client built by Vite (issue 18: "esbuild and Vite build it with no stubs"): a page importing the client
 * as published (e2e/fixtures/vite-app) is built by Vite's own API with no plugins, aliases or polyfills; Vite
 * must not externalize any Node module for browser compatibility (its warning when a `node:` import or a
 * Node-only package is reachable). The built page then runs in headless Chromium (Debian's) and produces and
 * consumes a record against a real broker over the browser's WebSocket.
 */
import { spawnSync } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { freePort } from '../tools/free-port.mjs';
import { openPage, type BrowserPage } from './src/browser.js';
import { cleanup, makeTempDir, REPO_ROOT, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';

const VITE_BIN = path.join(REPO_ROOT, 'node_modules', 'vite', 'bin', 'vite.js');

let broker: BrokerProcess;
let browser: BrowserPage | undefined;

afterAll(async () => {
  await browser?.close();
  await cleanup();
});

it('Vite builds a page with @mq/client, no Node module externalized, and the page produces and consumes in Chromium', async () => {
  const outDir = await makeTempDir('mq-vite-');
  // Vite's CLI in its own process (rolldown's native binding refuses objects made inside jest's VM context).
  const vite = spawnSync(process.execPath, [VITE_BIN, 'build', path.join(REPO_ROOT, 'e2e', 'fixtures', 'vite-app'), '--outDir', outDir, '--emptyOutDir', '--logLevel', 'warn'], {
    encoding: 'utf8',
    timeout: 90_000,
  });
  expect({ status: vite.status, stderr: vite.stderr }).toEqual({ status: 0, stderr: expect.any(String) });
  const said = `${vite.stdout}\n${vite.stderr}`;
  expect(said).not.toMatch(/externalized for browser compatibility/);
  expect(said).not.toMatch(/\bnode:[a-z]/);

  const files: Record<string, { type: string; body: string }> = {};
  const assets = await readdir(path.join(outDir, 'assets'));
  let js = 0;
  let gz = 0;
  for (const a of assets) {
    const body = await readFile(path.join(outDir, 'assets', a), 'utf8');
    if (a.endsWith('.js')) {
      js += Buffer.byteLength(body);
      gz += gzipSync(body, { level: 9 }).length;
    }
    files[`/assets/${a}`] = { type: a.endsWith('.js') ? 'text/javascript' : 'text/css', body };
  }
  files['/'] = { type: 'text/html', body: await readFile(path.join(outDir, 'index.html'), 'utf8') };
  console.log(`Vite bundle of @mq/client: ${(js / 1024).toFixed(1)} KiB minified, ${(gz / 1024).toFixed(1)} KiB gzip`);

  const pagePort = await freePort();
  broker = await startBroker({ args: ['--config-set', `ws.allowed.origins=http://127.0.0.1:${pagePort}`] });
  browser = await openPage(files, pagePort);
  const topic = uniqueName('vite');
  const got = await browser.page.evaluate(
    async ({ bootstrap, topic }) => {
      const { MqClient } = (globalThis as unknown as { mq: { MqClient: new (o: object) => any } }).mq;
      const mq = new MqClient({ bootstrap, clientId: 'vite-page' });
      await mq.admin().createTopic(topic, { numPartitions: 1 });
      const producer = mq.producer({ lingerMs: 0 });
      const ack = await producer.send(topic, { key: 'k', value: 'built by vite' });
      const consumer = mq.consumer({ autoOffsetReset: 'earliest' });
      consumer.assign([{ topic, partition: 0 }]);
      let records: Array<{ offset: number; value: Uint8Array | null }> = [];
      for (let i = 0; i < 20 && records.length === 0; i++) records = await consumer.poll(500);
      await mq.close();
      return { ack, offset: records[0]?.offset, value: records[0]?.value ? new TextDecoder().decode(records[0].value) : null };
    },
    { bootstrap: broker.bootstrap, topic },
  );
  expect(got).toEqual({ ack: { topic, partition: 0, offset: 0 }, offset: 0, value: 'built by vite' });
}, 120_000);
