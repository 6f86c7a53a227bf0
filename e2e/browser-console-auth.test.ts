/**
 * The web console's live tail with authentication (issue 17), in real headless Chromium (Debian's) against a real
 * broker process with authentication.enabled, authorization.enabled and ACLs. The browser logs in to the console
 * with HTTP Basic (the browser's own prompt, answered here by playwright's httpCredentials); the tail then logs in
 * to the client port as the same user (SASL OAUTHBEARER with a token from POST /tokens): a user allowed to read the
 * topic sees its records, live; a user who may describe the topic but not read it sees the broker's refusal
 * (TOPIC_AUTHORIZATION_FAILED) and no record. On a broker whose listeners speak TLS only, the page (https://) tails
 * over wss://. Neither the password nor the token appears in a WebSocket URL or the
 * broker's log. Before, the tail did not log in, and a user who may not describe the cluster never learned
 * the client port (GET /cluster): all three tests failed.
 */
import { readFileSync } from 'node:fs';
import { MqClient, type Acl } from '@mq/client';
import { openUrl, type BrowserPage } from './src/browser.js';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';
import { makePki } from './src/pki.js';

const ADMIN = { username: 'admin', password: 'admin-secret' };
const READER = { username: 'reader', password: 'reader-pw-4d1b' };
const STRANGER = { username: 'stranger', password: 'stranger-pw-77ac' };

let broker: BrokerProcess;
let admin: MqClient;
const topic = uniqueName('tail-auth');
const pages: BrowserPage[] = [];
/** Tokens the pages got from POST /tokens (the tail's logins). */
const tokens: string[] = [];

const allow = (principal: string, operation: Acl['operation']): Acl => ({ principal, resourceType: 'topic', resourceName: topic, operation, permission: 'allow' });

beforeAll(async () => {
  broker = await startBroker({ args: ['authentication.enabled=true', 'authorization.enabled=true', 'super.users=User:admin'].flatMap((c) => ['--config-set', c]) });
  const first = new MqClient({ bootstrap: broker.bootstrap });
  await first.admin().createUser(ADMIN.username, ADMIN.password);
  await first.close();
  admin = new MqClient({ bootstrap: broker.bootstrap, sasl: ADMIN });
  for (const u of [READER, STRANGER]) await admin.admin().createUser(u.username, u.password, { mechanisms: ['SCRAM-SHA-256'], iterations: 4096 });
  await admin.admin().createTopic(topic, { numPartitions: 1 });
  await admin.admin().createAcls([allow('User:reader', 'read'), allow('User:stranger', 'describe')]);
  const producer = admin.producer({ lingerMs: 0 });
  await producer.send(topic, { key: 'before', value: 'produced before the page opened', partition: 0 });
  await producer.close();
}, 90_000);

afterAll(async () => {
  for (const p of pages) await p.close().catch(() => undefined);
  await admin?.close({ timeoutMs: 2_000 });
  await cleanup();
});

/** The console's page of the topic, opened by `user` (Basic credentials given to the browser's prompt). */
async function openTopicPage(user: { username: string; password: string }, httpUrl = broker.httpUrl, ignoreHTTPSErrors = false): Promise<{ page: BrowserPage; wsUrls: string[] }> {
  const page = await openUrl(`${httpUrl}/console#/topics/${topic}`, undefined, { httpCredentials: user, ignoreHTTPSErrors });
  pages.push(page);
  const wsUrls: string[] = [];
  page.page.on('websocket', (ws) => wsUrls.push(ws.url()));
  page.page.on('response', (r) => {
    if (new URL(r.url()).pathname === '/tokens' && r.status() === 200) void r.json().then((b: { token: string }) => tokens.push(b.token), () => undefined);
  });
  await page.page.reload();
  try {
    await page.page.waitForSelector('tr[data-partition="0"]', { timeout: 15_000 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\npage log:\n${page.log.join('\n')}`);
  }
  return { page, wsUrls };
}

describe('the console live tail logs in as the console user (headless Chromium, SCRAM users, Basic, ACLs)', () => {
  it('a user allowed to read the topic sees its records in the tail, also those produced while the page is open', async () => {
    const { page, wsUrls } = await openTopicPage(READER);
    const p = page.page;
    try {
      await p.waitForSelector('tr.record[data-partition="0"][data-offset="0"]', { timeout: 15_000 });
    } catch (err) {
      const shown = await p.locator('[data-testid="tail"] .error').allInnerTexts();
      throw new Error(`${(err as Error).message}\ntail error: ${shown.join(' | ')}\npage log:\n${page.log.join('\n')}`);
    }
    const producer = admin.producer({ lingerMs: 0 });
    await producer.send(topic, { key: 'live', value: 'produced while the page is open', partition: 0 });
    await producer.close();
    await p.waitForSelector('tr.record[data-partition="0"][data-offset="1"]', { timeout: 15_000 });
    expect(await p.locator('tr.record[data-offset="1"] .value').first().innerText()).toBe('produced while the page is open');
    // The tail's connection logged in as the reader, with a token the broker issued.
    await waitFor(() => broker.output.some((l) => l.includes('"msg":"authenticated"') && l.includes('"mechanism":"OAUTHBEARER"') && l.includes('"principal":"User:reader"')), {
      timeout: 5_000,
      message: 'an OAUTHBEARER login of User:reader in the broker log',
    });
    expect(wsUrls.length).toBeGreaterThan(0);
    for (const u of wsUrls) expect(u).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/?$/);
  });

  it('a user who may describe the topic but not read it: the tail shows the refusal and no record', async () => {
    const { page } = await openTopicPage(STRANGER);
    const p = page.page;
    // The broker's TOPIC_AUTHORIZATION_FAILED message, as the client reports it.
    await waitFor(async () => (await p.locator('[data-testid="tail"] .error').allInnerTexts()).join(' ').includes('User:stranger may not read topic'), {
      timeout: 15_000,
      message: `the tail showing the refusal (page log: ${page.log.join(' | ')})`,
    }).catch(async (err) => {
      throw new Error(`${(err as Error).message}; tail error: ${(await p.locator('[data-testid="tail"] .error').allInnerTexts()).join(' | ')}`);
    });
    expect(await p.locator('tr.record').count()).toBe(0);
    // It logged in (as the stranger) and was refused by the ACLs: an audit line for its read. The broker's log reaches
    // this process through a pipe, possibly after the answer reached the page: wait for the lines.
    await waitFor(() => broker.output.some((l) => l.includes('"msg":"authenticated"') && l.includes('"principal":"User:stranger"')), {
      timeout: 5_000,
      message: 'a login of User:stranger in the broker log',
    });
    await waitFor(
      () => broker.output.some((l) => l.includes('"msg":"authorization denied"') && l.includes('"principal":"User:stranger"') && l.includes('"operation":"read"')),
      { timeout: 5_000, message: "an audit line refusing User:stranger's read" },
    );
  });

  it('no password or token in the broker log', () => {
    expect(tokens.length).toBeGreaterThanOrEqual(2);
    for (const secret of [READER.password, STRANGER.password, ADMIN.password, ...tokens]) expect(broker.output.filter((l) => l.includes(secret))).toEqual([]);
  });
});

describe('the console live tail on a TLS-only broker with authentication', () => {
  it('the page over https:// tails over wss:// as the console user', async () => {
    const pki = await makePki();
    const server = pki.issue('server', 'localhost', 'DNS:localhost,IP:127.0.0.1');
    const secure = await startBroker({
      args: [`tls.cert.file=${server.cert}`, `tls.key.file=${server.key}`, 'authentication.enabled=true', 'authorization.enabled=true', 'super.users=User:admin'].flatMap((c) => ['--config-set', c]),
    });
    const tls = { ca: readFileSync(pki.ca) };
    const first = new MqClient({ bootstrap: `localhost:${secure.port}`, tls });
    await first.admin().createUser(ADMIN.username, ADMIN.password);
    await first.close();
    const a = new MqClient({ bootstrap: `localhost:${secure.port}`, tls, sasl: ADMIN });
    try {
      await a.admin().createUser(READER.username, READER.password, { mechanisms: ['SCRAM-SHA-256'], iterations: 4096 });
      await a.admin().createTopic(topic, { numPartitions: 1 });
      await a.admin().createAcls([allow('User:reader', 'read')]);
      const producer = a.producer({ lingerMs: 0 });
      await producer.send(topic, { key: 'tls', value: 'over TLS', partition: 0 });
      await producer.close();
      const { page, wsUrls } = await openTopicPage(READER, `https://127.0.0.1:${secure.httpPort}`, true);
      try {
        await page.page.waitForSelector('tr.record[data-partition="0"][data-offset="0"]', { timeout: 15_000 });
      } catch (err) {
        const shown = await page.page.locator('[data-testid="tail"] .error').allInnerTexts();
        throw new Error(`${(err as Error).message}\ntail error: ${shown.join(' | ')}\npage log:\n${page.log.join('\n')}`);
      }
      expect(await page.page.locator('tr.record[data-offset="0"] .value').first().innerText()).toBe('over TLS');
      expect(wsUrls.length).toBeGreaterThan(0);
      for (const u of wsUrls) expect(u).toMatch(/^wss:\/\/127\.0\.0\.1:\d+\/?$/);
    } finally {
      await a.close({ timeoutMs: 2_000 });
    }
  });
});
