/**
 * @mq/client in a real browser: headless Chromium (Debian's package) loads an
 * esbuild bundle of the client (`--platform=browser`, no stubs) from a local
 * page and, against a real broker over the browser's own WebSocket,
 *  1. produces and consumes records (strings, bytes, headers) that a Node
 *     client also reads and writes; gzip works both ways (the browser's own
 *     CompressionStream), codecs without a browser build are refused;
 *  2. joins a consumer group together with a Node consumer: each gets one of
 *     the topic's two partitions and reads its records;
 *  3. survives a broker crash and restart on the same ports: sends made while
 *     the broker is down are delivered, and the group keeps consuming;
 *  4. publishes the client's diagnostics events to subscribers in the page.
 */
import { MqClient, type ConsumerRecord, type GroupConsumer } from '@mq/client';
import { compressionOf, iterateBatches } from '@mq/protocol/batch';
import { TestClient } from '../packages/broker/test/wire-client.js';
import { freePort } from '../tools/free-port.mjs';
import { openBundlePage, type BrowserPage } from './src/browser.js';
import { cleanup, startBroker, uniqueName, waitFor, type BrokerProcess } from './src/harness.js';

const ENTRY = `
import { MqClient, isMqError, subscribeDiagnostics, unsubscribeDiagnostics, DIAGNOSTICS_CHANNELS } from '@mq/client';
globalThis.mq = { MqClient, isMqError, subscribeDiagnostics, unsubscribeDiagnostics, DIAGNOSTICS_CHANNELS };
globalThis.mqReady = true;
`;

/** What a record looks like once it has crossed page.evaluate (plain data). */
interface SeenRecord {
  partition: number;
  offset: number;
  key: number[] | null;
  value: string | null;
  headers: Array<[string, string | null]>;
  valueIsUint8Array: boolean;
}

let broker: BrokerProcess;
let browser: BrowserPage;
let node: MqClient;
const nodeGroup: { consumer?: GroupConsumer; got: ConsumerRecord[]; stop: boolean; loop?: Promise<void> } = { got: [], stop: false };

const retry = { initialDelayMs: 50, maxDelayMs: 500, retries: 100 };
const groupTimeouts = { sessionTimeoutMs: 6_000, heartbeatIntervalMs: 500, rebalanceTimeoutMs: 5_000 };

beforeAll(async () => {
  // The page's origin is another port than the broker's: the broker must allow it (ws.allowed.origins).
  const pagePort = await freePort();
  broker = await startBroker({ port: await freePort(), httpPort: await freePort(), args: ['--config-set', `ws.allowed.origins=http://127.0.0.1:${pagePort}`] });
  node = new MqClient({ bootstrap: broker.bootstrap, clientId: 'node', retry });
  browser = await openBundlePage(ENTRY, pagePort);
}, 60_000);

afterAll(async () => {
  nodeGroup.stop = true;
  await nodeGroup.loop?.catch(() => undefined);
  await browser?.close();
  await node?.close({ timeoutMs: 2_000 });
  await cleanup();
});

/** Runs `fn` in the page; on failure the page's console is part of the error. */
async function inPage<A, R>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
  try {
    return (await browser.page.evaluate(fn as (arg: unknown) => Promise<unknown>, arg)) as R;
  } catch (err) {
    throw new Error(`${(err as Error).message}\npage log:\n${browser.log.join('\n')}`);
  }
}

describe('@mq/client in headless Chromium', () => {
  const topic = uniqueName('browser');
  const groupTopic = uniqueName('browser-group');
  const groupId = uniqueName('browser-group');

  it('produces and consumes records, readable and writable from Node as well', async () => {
    await node.admin().createTopic(topic, { numPartitions: 1 });
    await node.admin().createTopic(groupTopic, { numPartitions: 2 });
    const np = node.producer({ lingerMs: 0 });
    for (let i = 0; i < 3; i++) await np.send(topic, { key: `n${i}`, value: `from node ${i}`, headers: { origin: 'node' } });

    const result = await inPage(
      async ({ bootstrap, topic, retry }) => {
        const g = globalThis as any;
        const client = new g.mq.MqClient({ bootstrap, clientId: 'chromium', retry });
        await client.connect();
        const producer = client.producer({ lingerMs: 0 });
        g.state = { client, producer };
        const offsets: number[] = [];
        for (let i = 0; i < 4; i++) {
          const m = await producer.send(topic, { key: `b${i}`, value: `from chromium ${i}`, headers: { origin: 'chromium' } });
          offsets.push(m.offset);
        }
        const bin = await producer.send(topic, { key: new Uint8Array([1, 2, 3]), value: new Uint8Array([0, 255, 128]) });
        offsets.push(bin.offset);
        const consumer = client.consumer({ autoOffsetReset: 'earliest' });
        consumer.assign([{ topic, partition: 0 }]);
        const got: any[] = [];
        const deadline = Date.now() + 15_000;
        while (got.length < 8 && Date.now() < deadline) {
          for (const r of await consumer.poll(500)) {
            got.push({
              partition: r.partition,
              offset: r.offset,
              key: r.key ? Array.from(r.key) : null,
              value: r.value ? (r.offset === bin.offset ? Array.from(r.value).join(',') : r.value.toString()) : null,
              headers: r.headers.map((h: any) => [h.key, h.value ? h.value.toString() : null]),
              valueIsUint8Array: r.value instanceof Uint8Array,
            });
          }
        }
        await consumer.close();
        return { offsets, got: got as SeenRecord[], hasNodeBuffer: typeof g.Buffer !== 'undefined' };
      },
      { bootstrap: broker.bootstrap, topic, retry },
    );

    expect(result.hasNodeBuffer).toBe(false); // a real browser page: no Node globals leaked in
    expect(result.offsets).toEqual([3, 4, 5, 6, 7]);
    expect(result.got.map((r) => r.value)).toEqual([
      'from node 0',
      'from node 1',
      'from node 2',
      'from chromium 0',
      'from chromium 1',
      'from chromium 2',
      'from chromium 3',
      '0,255,128',
    ]);
    expect(result.got.map((r) => r.offset)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(result.got[0]!.headers).toEqual([['origin', 'node']]);
    expect(result.got[7]!.key).toEqual([1, 2, 3]);
    expect(result.got.every((r) => r.valueIsUint8Array)).toBe(true);

    // Node reads what the browser wrote, byte for byte.
    const nc = node.consumer({ autoOffsetReset: 'earliest' });
    nc.assign([{ topic, partition: 0, offset: 3 }]);
    const read: ConsumerRecord[] = [];
    await waitFor(async () => (read.push(...(await nc.poll(200))), read.length >= 5), { timeout: 10_000, message: 'node reading the browser records' });
    expect(read.slice(0, 4).map((r) => [r.key?.toString(), r.value?.toString(), r.headers.map((h) => `${h.key}=${h.value}`)])).toEqual(
      [0, 1, 2, 3].map((i) => [`b${i}`, `from chromium ${i}`, ['origin=chromium']]),
    );
    expect([...read[4]!.key!]).toEqual([1, 2, 3]);
    expect([...read[4]!.value!]).toEqual([0, 255, 128]);
    await nc.close();
  });

  it('publishes the diagnostics events in the page: request start/end and produced batches reach subscribers', async () => {
    const topic = uniqueName('browser-diag'); // its own topic: the other cases count offsets in theirs
    await node.admin().createTopic(topic, { numPartitions: 1 });
    const result = await inPage(
      async ({ bootstrap, topic }) => {
        const g = globalThis as any;
        const { MqClient, subscribeDiagnostics, unsubscribeDiagnostics, DIAGNOSTICS_CHANNELS: ch } = g.mq;
        const events: Array<{ channel: string; api?: string; topic?: string; records?: number; durationMs?: number }> = [];
        const listener = (m: any, name: string) => events.push({ channel: name, api: m.api, topic: m.topic, records: m.records, durationMs: m.durationMs });
        for (const name of [ch.requestStart, ch.requestEnd, ch.produceBatch]) subscribeDiagnostics(name, listener);
        const mq = new MqClient({ bootstrap, clientId: 'browser-diag' });
        await mq.producer({ lingerMs: 0 }).send(topic, { value: 'observed' });
        await mq.close();
        for (const name of [ch.requestStart, ch.requestEnd, ch.produceBatch]) unsubscribeDiagnostics(name, listener);
        return events;
      },
      { bootstrap: broker.bootstrap, topic },
    );
    expect(result).toEqual(expect.arrayContaining([
      expect.objectContaining({ channel: 'mq:client:request:start', api: 'produce' }),
      expect.objectContaining({ channel: 'mq:client:request:end', api: 'produce', durationMs: expect.any(Number) }),
      expect.objectContaining({ channel: 'mq:client:produce:batch', topic, records: 1 }),
    ]));
  });

  it('compresses with gzip (the browser own streams) both ways; refuses codecs with no browser build with UNSUPPORTED_COMPRESSION', async () => {
    const gz = uniqueName('browser-gzip');
    const lz4 = uniqueName('browser-lz4');
    await node.admin().createTopic(gz, { numPartitions: 1 });
    await node.admin().createTopic(lz4, { numPartitions: 1 });
    const gzp = node.producer({ lingerMs: 0, compression: 'gzip' });
    await gzp.send(gz, { value: 'gzip from node '.repeat(20) });
    await gzp.close();
    const lzp = node.producer({ lingerMs: 0, compression: 'lz4' });
    await lzp.send(lz4, { value: 'lz4 from node' });
    await lzp.close();
    const result = await inPage(
      async ({ gz, lz4 }) => {
        const g = globalThis as any;
        const seen = (err: any) => ({ code: err.code, retriable: err.retriable, message: err.message });
        const producer = g.state.client.producer({ lingerMs: 0, compression: 'gzip' });
        const sent = await producer.send(gz, { value: 'gzip from chromium '.repeat(20) });
        await producer.close();
        const read = async (topic: string) => {
          const consumer = g.state.client.consumer({ autoOffsetReset: 'earliest' });
          consumer.assign([{ topic, partition: 0 }]);
          const values: string[] = [];
          let error: unknown;
          const deadline = Date.now() + 10_000;
          while (values.length < 2 && !error && Date.now() < deadline) {
            try {
              for (const r of await consumer.poll(500)) values.push(r.value.toString());
            } catch (err) {
              error = seen(err);
            }
          }
          await consumer.close();
          return { values, error };
        };
        let refused: unknown;
        try {
          g.state.client.producer({ compression: 'lz4' });
        } catch (err) {
          refused = seen(err);
        }
        return { sentOffset: sent.offset, gzip: await read(gz), lz4: await read(lz4), refused };
      },
      { gz, lz4 },
    );
    expect(result.sentOffset).toBe(1);
    expect(result.gzip).toEqual({ values: ['gzip from node '.repeat(20), 'gzip from chromium '.repeat(20)] });
    expect(result.refused).toMatchObject({ code: 'UNSUPPORTED_COMPRESSION', retriable: false, message: expect.stringContaining('lz4 compression is not available in browsers') });
    expect(result.lz4.values).toEqual([]);
    expect(result.lz4.error).toMatchObject({ code: 'UNSUPPORTED_COMPRESSION', message: expect.stringContaining('lz4 compression is not available in browsers') });
    // The log holds the browser's batch gzip-compressed, and Node reads it.
    expect(await codecsInLog(gz)).toEqual(['gzip', 'gzip']);
    const nc = node.consumer({ autoOffsetReset: 'earliest' });
    nc.assign([{ topic: gz, partition: 0, offset: 1 }]);
    const got: ConsumerRecord[] = [];
    await waitFor(async () => (got.push(...(await nc.poll(200))), got.length >= 1), { timeout: 10_000, message: 'node reading the browser gzip record' });
    expect(got[0]!.value!.toString()).toBe('gzip from chromium '.repeat(20));
    await nc.close();
  });

  it('joins a consumer group with a Node consumer: each gets a partition and reads it', async () => {
    // The Node member, polling in the background.
    const consumer = node.consumer({ groupId, autoOffsetReset: 'earliest', ...groupTimeouts });
    consumer.subscribe([groupTopic]);
    nodeGroup.consumer = consumer;
    nodeGroup.loop = (async () => {
      while (!nodeGroup.stop) nodeGroup.got.push(...(await consumer.poll(200)));
    })();
    await waitFor(() => consumer.assignment().length === 2, { timeout: 20_000, message: 'node member owning both partitions' });

    // The browser member, polling in the page.
    await inPage(
      ({ groupTopic, groupId, groupTimeouts }) => {
        const g = globalThis as any;
        const consumer = g.state.client.consumer({ groupId, autoOffsetReset: 'earliest', ...groupTimeouts });
        consumer.subscribe([groupTopic]);
        g.state.group = { consumer, got: [] as Array<{ partition: number; value: string }>, stop: false, errors: [] as string[] };
        const s = g.state.group;
        s.loop = (async () => {
          while (!s.stop) {
            try {
              for (const r of await consumer.poll(200)) s.got.push({ partition: r.partition, value: r.value.toString() });
            } catch (err) {
              s.errors.push(String(err));
            }
          }
        })();
      },
      { groupTopic, groupId, groupTimeouts },
    );

    const browserAssignment = () => inPage(() => (globalThis as any).state.group.consumer.assignment().map((tp: any) => tp.partition) as number[], null);
    await waitFor(async () => (await browserAssignment()).length === 1 && consumer.assignment().length === 1, {
      timeout: 30_000,
      message: 'one partition each',
    });
    const mine = (await browserAssignment())[0]!;
    const theirs = consumer.assignment()[0]!.partition;
    expect(new Set([mine, theirs])).toEqual(new Set([0, 1]));

    await produceTo(groupTopic, 'before');
    const values = await waitForGroupRecords('before');
    expect(values.browser.every((r) => r.partition === mine)).toBe(true);
    expect(values.browser.map((r) => r.value).sort()).toEqual(expected(mine, 'before'));
    expect(values.node.filter((r) => r.value.startsWith('before')).every((r) => r.partition === theirs)).toBe(true);
  });

  it('survives a broker restart on the same ports: sends made while it is down are delivered, the group goes on', async () => {
    await broker.kill();
    // Sends while the broker is down wait (retrying the connection) instead of failing.
    await inPage(
      ({ topic }) => {
        const g = globalThis as any;
        g.state.pending = [0, 1, 2].map((i) => g.state.producer.send(topic, { value: `while down ${i}` }));
      },
      { topic },
    );
    await broker.restart();
    const offsets = await inPage(async () => (await Promise.all((globalThis as any).state.pending)).map((m: any) => m.offset) as number[], null);
    // (in any order: retried batches of a non-idempotent producer may be reordered)
    expect([...offsets].sort((a, b) => a - b)).toEqual([8, 9, 10]);

    const nc = node.consumer({ autoOffsetReset: 'earliest' });
    nc.assign([{ topic, partition: 0, offset: 8 }]);
    const read: ConsumerRecord[] = [];
    await waitFor(async () => (read.push(...(await nc.poll(200))), read.length >= 3), { timeout: 10_000, message: 'records sent while down' });
    expect(read.map((r) => r.value?.toString()).sort()).toEqual(['while down 0', 'while down 1', 'while down 2']);
    await nc.close();

    // The group consumes what is produced after the restart, the browser member included.
    await produceTo(groupTopic, 'after');
    const values = await waitForGroupRecords('after', 45_000);
    expect(values.browser.some((r) => r.value.startsWith('after'))).toBe(true);
    const errors = await inPage(() => (globalThis as any).state.group.errors as string[], null);
    expect(errors).toEqual([]);
  });
});

/** The compression codec of every batch in partition 0 of `topic`, read over the raw wire. */
async function codecsInLog(topic: string): Promise<string[]> {
  const c = await TestClient.connect(`ws://${broker.bootstrap}`);
  try {
    const r = await c.request({ fetch: { maxBytes: 1 << 20, topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] } });
    const buf = Buffer.from(r.fetch!.topics[0]!.partitions[0]!.records);
    return [...iterateBatches(buf)].map((span) => compressionOf(span.header));
  } finally {
    await c.close();
  }
}

/** Ten records to each of the group topic's two partitions, values `${tag}-p${partition}-${i}`. */
async function produceTo(groupTopic: string, tag: string): Promise<void> {
  const p = node.producer({ lingerMs: 0 });
  await Promise.all([0, 1].flatMap((partition) => Array.from({ length: 10 }, (_, i) => p.send(groupTopic, { partition, value: `${tag}-p${partition}-${i}` }))));
  await p.close();
}

function expected(partition: number, tag: string): string[] {
  return Array.from({ length: 10 }, (_, i) => `${tag}-p${partition}-${i}`).sort();
}

/** Waits until the two members together have read every `tag` record; returns what each read. */
async function waitForGroupRecords(tag: string, timeout = 20_000) {
  const all = [...expected(0, tag), ...expected(1, tag)];
  let browserGot: Array<{ partition: number; value: string }> = [];
  await waitFor(
    async () => {
      browserGot = await browser.page.evaluate(() => [...(globalThis as any).state.group.got] as Array<{ partition: number; value: string }>);
      const seen = new Set([...browserGot.map((r) => r.value), ...nodeGroup.got.map((r) => r.value!.toString())]);
      return all.every((v) => seen.has(v));
    },
    { timeout, interval: 200, message: `the group reading every ${tag} record` },
  );
  return {
    browser: browserGot.filter((r) => r.value.startsWith(tag)),
    node: nodeGroup.got.map((r) => ({ partition: r.partition, value: r.value!.toString() })),
  };
}
