import { encodeBatchSync } from '@mq/protocol/batch';
import type { Socket } from 'node:net';
import { createTopic, startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

describe('backpressure', () => {
  let t: TestBroker;
  afterEach(async () => {
    await t.cleanup();
  });

  it('stops reading from a client that does not read its responses, and loses nothing when it resumes', async () => {
    t = await startTestBroker({ 'connection.max.buffered.bytes': String(256 * 1024) });
    const c = await TestClient.connect(t.url);
    const name = topicName('bp');
    await createTopic(c, name, 1);
    const value = Buffer.alloc(60_000, 7);
    for (let i = 0; i < 4; i++) {
      await c.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value }]) }] }] } });
    }
    // The client stops reading its socket, then asks for ~24 MB of fetch responses.
    const socket = (c.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const n = 100;
    const all = Array.from({ length: n }, () =>
      c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 300_000 }] }] } }, 30_000),
    );
    await waitFor(() => t.lines.some((l) => l.msg === 'client is not reading: paused reading its requests'), 10_000);
    // Meanwhile another client is served normally.
    const other = await TestClient.connect(t.url);
    const md = await other.request({ metadata: { topics: [name] } });
    expect(md.metadata!.topics[0]!.errorCode).toBe(0);
    await other.close();
    socket.resume();
    const responses = await Promise.all(all);
    expect(responses).toHaveLength(n);
    for (const r of responses) expect(r.fetch!.topics[0]!.partitions[0]!.records.length).toBeGreaterThan(200_000);
    await waitFor(() => t.lines.some((l) => l.msg === 'client drained: reading its requests again'), 5000);
    await c.close();
  });

  it("does not reuse a fetch's read buffer while the response still waits in a slow client's socket", async () => {
    // Fetch responses are written from pooled read buffers, released when the
    // socket has written them: the responses held back for a paused client
    // must come out intact while another client's fetches cycle the pool.
    t = await startTestBroker();
    const slow = await TestClient.connect(t.url);
    const fast = await TestClient.connect(t.url);
    const a = topicName('pool-a');
    const b = topicName('pool-b');
    await createTopic(slow, a, 1);
    await createTopic(slow, b, 1);
    for (let i = 0; i < 8; i++) {
      await slow.request({ produce: { acks: 1, topics: [{ name: a, partitions: [{ partition: 0, records: encodeBatchSync([{ value: Buffer.alloc(100_000, 0xaa) }]) }] }] } });
      await slow.request({ produce: { acks: 1, topics: [{ name: b, partitions: [{ partition: 0, records: encodeBatchSync([{ value: Buffer.alloc(100_000, 0xbb) }]) }] }] } });
    }
    const fetchOf = (name: string) => ({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1024 * 1024 }] }] } });
    const expected = Buffer.from((await slow.request(fetchOf(a))).fetch!.topics[0]!.partitions[0]!.records);
    expect(expected.length).toBeGreaterThan(700_000);
    const socket = (slow.ws as unknown as { _socket: Socket })._socket;
    socket.pause();
    const held = Array.from({ length: 20 }, () => slow.request(fetchOf(a), 30_000));
    // Give the broker time to read and write (into the paused socket) every held response.
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 40; i++) {
      const other = (await fast.request(fetchOf(b))).fetch!.topics[0]!.partitions[0]!.records;
      expect(other.length).toBe(expected.length);
    }
    socket.resume();
    for (const r of await Promise.all(held)) {
      expect(Buffer.compare(Buffer.from(r.fetch!.topics[0]!.partitions[0]!.records), expected)).toBe(0);
    }
    await slow.close();
    await fast.close();
  });

  it('runs at most max.in.flight.requests.per.connection requests at once', async () => {
    t = await startTestBroker({ 'max.in.flight.requests.per.connection': '2' });
    const c = await TestClient.connect(t.url);
    const name = topicName('inflight');
    await createTopic(c, name, 1);
    const started = Date.now();
    // Ten long polls of 150 ms each, two at a time: about 750 ms in all.
    await Promise.all(
      Array.from({ length: 10 }, () =>
        c.request({ fetch: { maxWaitMs: 150, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } }),
      ),
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(700);
    await c.close();
  });
});

describe('idle connections', () => {
  it('closes a connection that sent nothing for connections.max.idle.ms', async () => {
    const t = await startTestBroker({ 'connections.max.idle.ms': '1000' });
    const idle = await TestClient.connect(t.url);
    const busy = await TestClient.connect(t.url);
    const started = Date.now();
    const keepBusy = setInterval(() => void busy.request({ metadata: {} }).catch(() => undefined), 200);
    const closed = await idle.closed;
    clearInterval(keepBusy);
    expect(closed.code).toBe(1001);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect((await busy.request({ metadata: {} })).metadata).toBeDefined();
    await busy.close();
    await t.cleanup();
  });
});

describe('fetch concurrency', () => {
  it('builds at most max.in.flight.fetches.per.connection fetches at once, while other requests go on', async () => {
    const t = await startTestBroker({ 'max.in.flight.fetches.per.connection': '1' });
    const c = await TestClient.connect(t.url);
    const name = topicName('fetches');
    await createTopic(c, name, 1);
    const started = Date.now();
    const polls = Array.from({ length: 3 }, () =>
      c.request({ fetch: { maxWaitMs: 200, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } }),
    );
    await Promise.all(polls);
    // One at a time: three waits of 200 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(580);
    // A metadata request sent while a long poll runs is answered first.
    const poll = c.request({ fetch: { maxWaitMs: 500, minBytes: 1, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    const t0 = Date.now();
    await c.request({ metadata: {} });
    expect(Date.now() - t0).toBeLessThan(400);
    await poll;
    await c.close();
    await t.cleanup();
  });
});
