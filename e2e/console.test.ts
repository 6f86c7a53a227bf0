/**
 * The web console (issue 18) in real headless Chromium (Debian's) against a real broker process: the pages
 * render the broker's real state, the live tail (the browser client over the client port) shows records
 * produced during the test, the produce form stores a record, the create-topic form creates one, and a
 * group's lag chart moves as a slow consumer catches up; the group's offsets are reset from the page.
 * Screenshots of each page go to $MQ_CONSOLE_SCREENSHOTS (default: a temporary directory).
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MqClient } from '@mq/client';
import { openUrl, type BrowserPage } from './src/browser.js';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

let broker: BrokerProcess;
let browser: BrowserPage;
let client: MqClient;
let shots: string;

beforeAll(async () => {
  broker = await startBroker();
  client = new MqClient({ bootstrap: broker.bootstrap, clientId: 'console-test' });
  shots = process.env.MQ_CONSOLE_SCREENSHOTS ?? (await mkdtemp(path.join(tmpdir(), 'mq-console-shots-')));
  browser = await openUrl(`${broker.httpUrl}/console`);
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await client?.close({ timeoutMs: 2_000 });
  await cleanup();
});

/** Navigates the page to a console route and waits for `selector`; on failure the page's log is in the error. */
async function show(route: string, selector: string): Promise<void> {
  try {
    await browser.page.goto(`${broker.httpUrl}/console#${route}`);
    await browser.page.waitForSelector(selector, { timeout: 15_000 });
  } catch (err) {
    throw new Error(`${(err as Error).message}\npage log:\n${browser.log.join('\n')}`);
  }
}

const text = (selector: string) => browser.page.locator(selector).first().innerText();

describe('the web console at /console (headless Chromium, real broker)', () => {
  const topic = uniqueName('orders');
  const groupId = uniqueName('billing');

  it('serves the page with a same-origin content security policy and keeps it out of the API document', async () => {
    const res = await fetch(`${broker.httpUrl}/console`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    expect(res.headers.get('content-security-policy')).toMatch(/default-src 'self'/);
    expect((await fetch(`${broker.httpUrl}/console/nope.js`)).status).toBe(404);
    const doc = (await (await fetch(`${broker.httpUrl}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/console'))).toBe(false);
  });

  it('the cluster page shows this broker alive as the controller', async () => {
    await show('/', 'tr[data-broker="1"]');
    expect(await text('[data-testid="controller"]')).toBe('broker 1');
    expect(await text('tr[data-broker="1"]')).toMatch(/alive/);
    expect(await text('[data-testid="offline"]')).toBe('0');
    await browser.page.screenshot({ path: path.join(shots, 'console-cluster.png'), fullPage: true });
  });

  it('a topic page shows partitions and watermarks, tails records produced meanwhile, and the form produces one', async () => {
    await client.admin().createTopic(topic, { numPartitions: 2 });
    const producer = client.producer({ lingerMs: 0 });
    await producer.send(topic, { key: 'before', value: JSON.stringify({ n: 0 }), partition: 0 });
    await show(`/topics/${topic}`, 'tr[data-partition="1"]');
    await waitFor(async () => (await text('tr[data-partition="0"] [data-field="high"]')) === '1', { timeout: 10_000 });
    // the leader's replica size, from GET /log-dirs (every broker's replicas: here the one broker)
    await waitFor(async () => /^\d+(\.\d+)? (B|KiB)$/.test(await text('tr[data-partition="0"] [data-field="size"]')), { timeout: 10_000 });
    expect(await text('tr[data-partition="0"] [data-field="replica-sizes"]')).toMatch(/^1: \d/);
    // the leader's produce bytes/s over the last complete 10 s window (0 until one has passed)
    expect(await text('tr[data-partition="0"] [data-field="bytes-in"]')).toMatch(/^\d+(\.\d+)? (B|KiB)$/);
    // the tail starts a few records back: the record produced before the page opened is there
    await browser.page.waitForSelector('tr.record[data-partition="0"][data-offset="0"]', { timeout: 15_000 });
    // records produced while the page is open arrive through the browser client
    for (let i = 1; i <= 5; i++) await producer.send(topic, { key: `k${i}`, value: JSON.stringify({ n: i, item: 'tea' }), headers: { source: 'test' }, partition: i % 2 });
    await browser.page.waitForSelector('tr.record[data-partition="1"][data-offset="2"]', { timeout: 15_000 });
    expect(await browser.page.locator('tr.record').count()).toBe(6);
    expect(await text('tr.record[data-partition="1"][data-offset="0"] .value')).toBe('{"n":1,"item":"tea"}');
    await browser.page.selectOption('[data-testid="tail-mode"]', 'json');
    expect(await text('tr.record[data-partition="1"][data-offset="0"] .value')).toBe('{\n  "n": 1,\n  "item": "tea"\n}');
    await browser.page.selectOption('[data-testid="tail-mode"]', 'hex');
    expect(await text('tr.record[data-partition="0"][data-offset="0"] .value')).toMatch(/^7b 22 6e 22/);
    await browser.page.selectOption('[data-testid="tail-mode"]', 'text');

    // the produce form stores a record (HTTP API); the tail shows it
    await browser.page.fill('[data-testid="produce"] input[name="key"]', 'from-console');
    await browser.page.fill('[data-testid="produce"] input[name="value"]', 'hello from the console');
    await browser.page.fill('[data-testid="produce"] input[name="headers"]', 'via=console');
    await browser.page.click('[data-testid="produce"] button');
    await browser.page.waitForSelector('[data-testid="produce-result"]', { timeout: 10_000 });
    const ack = /partition (\d+), offset (\d+)/.exec(await text('[data-testid="produce-result"]'));
    expect(ack).not.toBeNull();
    await browser.page.waitForSelector(`tr.record[data-partition="${ack![1]}"][data-offset="${ack![2]}"]`, { timeout: 15_000 });
    expect(await text(`tr.record[data-partition="${ack![1]}"][data-offset="${ack![2]}"]`)).toMatch(/hello from the console[\s\S]*via=console/);
    await browser.page.screenshot({ path: path.join(shots, 'console-topic.png'), fullPage: true });
  });

  it('the topics page lists topics and its form creates one', async () => {
    await show('/topics', `tr[data-topic="${topic}"]`);
    const created = uniqueName('created');
    await browser.page.fill('[data-testid="create-topic"] input[name="name"]', created);
    await browser.page.fill('[data-testid="create-topic"] input[name="partitions"]', '4');
    await browser.page.click('[data-testid="create-topic"] button');
    await browser.page.waitForSelector(`tr[data-topic="${created}"]`, { timeout: 15_000 });
    const listed = (await (await fetch(`${broker.httpUrl}/topics/${created}`)).json()) as { partition_count: number };
    expect(listed.partition_count).toBe(4);
    // a bad name is refused with the API's error, shown on the page
    await browser.page.fill('[data-testid="create-topic"] input[name="name"]', 'bad name!');
    await browser.page.click('[data-testid="create-topic"] button');
    await waitFor(async () => /INVALID_TOPIC/.test(await text('[data-testid="create-topic"] .result')), { timeout: 10_000 });
  });

  it("a group's page shows members and lag, and the lag chart moves as a slow consumer catches up; reset from the page", async () => {
    const producer = client.producer({ lingerMs: 5 });
    await Promise.all(Array.from({ length: 120 }, (_, i) => producer.send(topic, { value: `r${i}`, partition: i % 2 })));
    // the group exists with everything still to read: commit offset 0 from outside first
    const admin = await fetch(`${broker.httpUrl}/groups/${groupId}/offsets`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ offsets: [0, 1].map((partition) => ({ topic, partition, offset: 0 })) }),
    });
    expect(admin.status).toBe(200);
    await show(`/groups/${groupId}`, '[data-testid="total-lag"]');
    const startLag = Number((await text('[data-testid="total-lag"]')).replace(/,/g, ''));
    expect(startLag).toBeGreaterThanOrEqual(120);

    // 10 records a poll, committed after each poll: the lag falls in steps the page's 2 s refresh can see
    const consumer = client.consumer({ groupId, maxPollRecords: 10, autoCommitIntervalMs: 100, sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500 });
    consumer.subscribe([topic]);
    const stop = new AbortController();
    const running = consumer.run({ signal: stop.signal, eachMessage: () => new Promise((r) => setTimeout(r, 40)) });
    // the chart's last sample falls to 0 while samples accumulate; the members table shows the consumer
    await waitFor(async () => (await browser.page.locator('[data-testid="members"] tbody tr').count()) === 1, { timeout: 30_000 });
    const chart = browser.page.locator('.chart');
    const seen = new Set<number>();
    await waitFor(
      async () => {
        seen.add(Number(await chart.getAttribute('data-last-total')));
        return seen.has(0);
      },
      { timeout: 60_000, interval: 500 },
    );
    expect([...seen].some((v) => v > 0 && v < startLag)).toBe(true); // it moved through values in between
    expect(Number(await chart.getAttribute('data-samples'))).toBeGreaterThan(2);
    expect(await browser.page.locator('.chart canvas').count()).toBeGreaterThan(0);
    await browser.page.screenshot({ path: path.join(shots, 'console-group.png'), fullPage: true });
    stop.abort();
    await running;
    await consumer.close();

    // the group is empty now: reset it to earliest from the page; the lag is back
    await waitFor(async () => (await text('[data-testid="group-state"]')) === 'Empty', { timeout: 20_000 });
    await browser.page.click('[data-testid="reset-offsets"] button');
    await browser.page.waitForSelector('[data-testid="reset-result"]', { timeout: 10_000 });
    expect(await text('[data-testid="reset-result"]')).toMatch(/reset 2 partitions to earliest/);
    await waitFor(async () => Number((await text('[data-testid="total-lag"]')).replace(/,/g, '')) >= 120, { timeout: 10_000 });
  }, 150_000);
});
