/**
 * Real headless Chromium for e2e tests: Debian's `chromium` (CI installs it
 * in .ci/run; no browser download), driven by playwright-core, with a page
 * served from a local HTTP server that holds an esbuild bundle of @mq/client
 * made exactly as packages/client/scripts/bundle-browser.mjs makes it.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../../tools/free-port.mjs';
import { bundleBrowser } from '../../packages/client/scripts/bundle-browser.mjs';
import { REPO_ROOT } from './harness.js';

/** The Chromium binary: $CHROMIUM_PATH, else Debian's. */
export function chromiumPath(): string {
  const candidates = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`no Chromium at ${candidates.join(', ')} (install it: apt-get install -y chromium, or set CHROMIUM_PATH)`);
  return found;
}

export interface BrowserPage {
  readonly page: Page;
  /** What the page printed to its console and its uncaught errors, for failure messages. */
  readonly log: string[];
  close(): Promise<void>;
}

/**
 * Bundles `entry` (ES module source importing '@mq/client', resolved from
 * e2e/) for browsers, serves it with a page that loads it, and opens that page
 * in headless Chromium. Resolves once the page's module has run. `port`: the
 * page's server port (its origin is http://127.0.0.1:<port>), so a broker can
 * be started allowing that origin first; default: a free one.
 */
export async function openBundlePage(entry: string, port?: number): Promise<BrowserPage> {
  const code: string = await bundleBrowser({ contents: entry, resolveDir: path.join(REPO_ROOT, 'e2e'), minify: true });
  const html = '<!doctype html><meta charset="utf-8"><title>mq browser client</title><script type="module" src="/app.js"></script>';
  return openPage({ '/': { type: 'text/html', body: html }, '/app.js': { type: 'text/javascript', body: code } }, port);
}

/**
 * Serves `files` (path -> content) from a local HTTP server on `port` (default:
 * a free one) and opens `/` in headless Chromium; resolves once the page set
 * `globalThis.mqReady = true`.
 */
export async function openPage(files: Record<string, { type: string; body: string }>, port?: number): Promise<BrowserPage> {
  const server: Server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (file) res.writeHead(200, { 'content-type': file.type }).end(file.body);
    else res.writeHead(404).end();
  });
  const listenPort = port ?? (await freePort());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(listenPort, '127.0.0.1', resolve);
  });
  let browser: Browser | undefined;
  try {
    // --no-sandbox: CI and these machines run as root, where Chromium's sandbox refuses to start.
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'], timeout: 30_000 });
    const page = await browser.newPage();
    const log: string[] = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(`http://127.0.0.1:${listenPort}/`);
    await page.waitForFunction(() => (globalThis as { mqReady?: boolean }).mqReady === true, undefined, { timeout: 10_000 });
    const opened = browser;
    return {
      page,
      log,
      async close() {
        await opened.close();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      },
    };
  } catch (err) {
    await browser?.close();
    server.close();
    throw err;
  }
}

/**
 * Opens `url` (a page some server of the test serves, e.g. a broker's /console) in headless Chromium at
 * the given viewport size; resolves once the page has loaded. `context.httpCredentials`: what the browser answers
 * an HTTP Basic challenge with (as a user typing them into its prompt); `context.ignoreHTTPSErrors`: accept a
 * certificate of a test CA (https:// and wss://).
 */
export async function openUrl(
  url: string,
  viewport = { width: 1280, height: 900 },
  context: { httpCredentials?: { username: string; password: string }; ignoreHTTPSErrors?: boolean } = {},
): Promise<BrowserPage> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'], timeout: 30_000 });
  try {
    const page = await browser.newPage({ viewport, ...context });
    const log: string[] = [];
    page.on('console', (m) => log.push(`console.${m.type()}: ${m.text()}`));
    page.on('pageerror', (e) => log.push(`pageerror: ${e.message}`));
    await page.goto(url);
    return { page, log, close: () => browser.close() };
  } catch (err) {
    await browser.close();
    throw err;
  }
}
