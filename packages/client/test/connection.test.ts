import { encodeRequest } from '@mq/protocol/wire';
import { freePort } from '../../../tools/free-port.mjs';
import { Connection } from '../src/connection.js';
import { FramePool } from '../src/producer/frame-pool.js';
import { MqClient } from '../src/index.js';
import { startFakeBroker, type FakeBroker } from './fake-broker.js';

let broker: FakeBroker;
beforeEach(async () => {
  broker = await startFakeBroker({ topics: { one: 1 } });
});
afterEach(async () => {
  await broker.close();
});

const opts = (address: string) => ({ address, clientId: 'test', connectTimeoutMs: 2000, requestTimeoutMs: 200, maxResponseBytes: 1 << 20 });


describe('Connection', () => {
  it('handshakes, negotiates versions and matches many requests in flight by correlation id', async () => {
    const conn = await Connection.open(opts(broker.address));
    expect(conn.brokerId).toBe(1);
    expect(conn.versionOf('produce')).toBe(1); // v1: per-batch offsets in the answer
    const all = await Promise.all(Array.from({ length: 50 }, (_, i) => conn.request('metadata', { topics: i % 2 ? ['one'] : ['x'] })));
    all.forEach((r, i) => expect(r.topics![0]!.name).toBe(i % 2 ? 'one' : 'x'));
    conn.close();
  });

  it('calls onWritten once the frame is written (before the answer), once per request, and not when encode is never reached', async () => {
    const conn = await Connection.open(opts(broker.address));
    const written: number[] = [];
    const frames: Buffer[] = [];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        conn
          .requestEncoded(
            'metadata',
            (correlationId, apiVersion, clientId) => {
              const f = Buffer.from(encodeRequest({ correlationId, apiVersion, clientId, metadata: { topics: ['one'] } }));
              frames.push(f);
              return f;
            },
            { onWritten: () => written.push(i) },
          )
          .then((r) => {
            // the write callback came before the answer to that write
            expect(written).toContain(i);
            return r;
          }),
      ),
    );
    expect(answers).toHaveLength(20);
    expect(written.sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // fire and forget: resolved once written, and onWritten came first
    let ffWritten = false;
    await conn.requestEncoded(
      'metadata',
      (correlationId, apiVersion, clientId) => encodeRequest({ correlationId, apiVersion, clientId, metadata: { topics: [] } }),
      { expectResponse: false, onWritten: () => (ffWritten = true) },
    );
    expect(ffWritten).toBe(true);
    conn.close();
    let late = 0;
    await expect(
      conn.requestEncoded('metadata', () => Buffer.alloc(1), { onWritten: () => late++ }),
    ).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
    expect(late).toBe(0);
  });

  it('a frame given back on onWritten and reused at once is never the one a queued write still sends (unmasked, socket corked)', async () => {
    // Unmasked frames are written straight from the caller's memory. Cork the socket so that every
    // write waits in the stream: a frame handed back too early would be overwritten by the next request.
    const conn = await Connection.open({ ...opts(broker.address), maskFrames: false });
    const pool = new FramePool(8);
    const socket = (conn as unknown as { ws: { _socket: { cork(): void; uncork(): void } } }).ws._socket;
    socket.cork();
    const topics = Array.from({ length: 6 }, (_, i) => `topic-${i}`);
    const answers: Array<Promise<{ topics?: Array<{ name?: string | null }> | null }>> = [];
    for (const topic of topics) {
      let frame: Buffer | undefined;
      answers.push(conn.requestEncoded(
        'metadata',
        (correlationId, apiVersion, clientId) => {
          const bytes = encodeRequest({ correlationId, apiVersion, clientId, metadata: { topics: [topic] } });
          frame = pool.acquire(bytes.length);
          frame.set(bytes);
          return frame.subarray(0, bytes.length);
        },
        { onWritten: () => pool.release(frame!) },
      ));
      await new Promise((r) => setImmediate(r)); // a turn of the event loop between requests
    }
    expect(pool.outstanding).toBe(6); // nothing written yet: nothing given back
    socket.uncork();
    const got = await Promise.all(answers);
    expect(got.map((r) => r.topics![0]!.name)).toEqual(topics);
    expect(pool.outstanding).toBe(0);
    conn.close();
  });

  it('times a request out with REQUEST_TIMED_OUT (retriable) and drops the connection', async () => {
    const conn = await Connection.open(opts(broker.address));
    broker.holdProduce();

    await expect(conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] })).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT', retriable: true });
    expect(conn.inFlight).toBe(0);
    // The connection is dropped (as Kafka does), so the next request reconnects.
    expect(conn.closed).toBe(true);
    conn.close();
  });

  it('abandon fails a request at once; the request stays pending until answered or timed out, as any other', async () => {
    const conn = await Connection.open(opts(broker.address));
    broker.holdProduce();
    let correlationId = 0;
    const request = conn.requestEncoded('produce', (id, apiVersion, clientId) => {
      correlationId = id;
      return encodeRequest({ correlationId: id, apiVersion, clientId, produce: { acks: 1, timeoutMs: 10, topics: [] } });
    });
    const moved = new Error('moved');
    conn.abandon(correlationId, moved);
    conn.abandon(correlationId, new Error('twice'));
    await expect(request).rejects.toBe(moved);
    expect(conn.inFlight).toBe(1);
    // Its timeout (200 ms) still replaces the connection; nothing reaches the caller a second time.
    await new Promise<void>((resolve) => conn.onClose(() => resolve()));
    expect(conn.closed).toBe(true);
    expect(conn.inFlight).toBe(0);
  });

  it('times out a short request sent after a long one (one deadline timer per connection, re-armed earlier)', async () => {
    const conn = await Connection.open(opts(broker.address));
    broker.holdProduce();
    const long = conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] }, { timeoutMs: 10_000 });
    long.catch(() => undefined);
    const started = Date.now();
    await expect(conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] }, { timeoutMs: 30 })).rejects.toMatchObject({
      code: 'REQUEST_TIMED_OUT',
      message: expect.stringContaining('within 30 ms'),
    });
    expect(Date.now() - started).toBeLessThan(2000);
    // The timed-out request takes the connection down with the long one.
    await expect(long).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
  });

  it('times out a request sent after earlier ones were answered (the timer re-arms for the next deadline)', async () => {
    const conn = await Connection.open({ ...opts(broker.address), requestTimeoutMs: 60 });
    // Answered requests first: the timer armed for the first one must still catch a later one.
    await conn.request('metadata', { topics: ['one'] });
    await new Promise((r) => setTimeout(r, 30));
    await conn.request('metadata', { topics: ['one'] });
    broker.holdProduce();
    await expect(conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] })).rejects.toMatchObject({ code: 'REQUEST_TIMED_OUT' });
    expect(conn.closed).toBe(true);
  });

  it('aborts a request with its AbortSignal', async () => {
    const conn = await Connection.open(opts(broker.address));
    broker.holdProduce();
    const ac = new AbortController();
    const p = conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] }, { signal: ac.signal, timeoutMs: 10_000 });
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'ABORTED' });
    expect(conn.inFlight).toBe(0);
    conn.close();
  });

  it('fails pending requests with CONNECTION_CLOSED when the broker goes away', async () => {
    const conn = await Connection.open(opts(broker.address));
    broker.holdProduce();
    const p = conn.request('produce', { acks: 1, timeoutMs: 10, topics: [] }, { timeoutMs: 10_000 });
    broker.dropConnections();
    await expect(p).rejects.toMatchObject({ code: 'CONNECTION_CLOSED', retriable: true });
    expect(conn.closed).toBe(true);
  });

  it('says what to do when no broker listens', async () => {
    const port = await freePort();
    await expect(Connection.open(opts(`127.0.0.1:${port}`))).rejects.toMatchObject({
      code: 'CONNECTION_ERROR',
      message: `cannot connect to broker at 127.0.0.1:${port}: ECONNREFUSED (is the broker running? start one with: mq broker start)`,
    });
  });

  it('the client gives up on an unreachable bootstrap after its retries', async () => {
    const port = await freePort();
    const client = new MqClient({ bootstrap: `127.0.0.1:${port}`, retry: { retries: 2, initialDelayMs: 1, maxDelayMs: 2 } });
    await expect(client.admin().listTopics()).rejects.toMatchObject({ code: 'CONNECTION_ERROR' });
    await client.close();
  });

  it('asks another broker when one answers that it is cut off (BROKER_NOT_AVAILABLE), and keeps asking it last for a while', async () => {
    const other = await startFakeBroker({ topics: { one: 1 }, brokerId: 2 });
    try {
      const client = new MqClient({ bootstrap: `${broker.address},${other.address}`, retry: { retries: 3, initialDelayMs: 1, maxDelayMs: 2 } });
      broker.failNext('metadata', 'BROKER_NOT_AVAILABLE', 1);
      expect(await client.admin().listTopics()).toEqual(['one']);
      expect(broker.seen.metadata).toBe(1);
      expect(other.seen.metadata).toBe(1);
      // The cut-off broker is still connected, but the next any-broker request goes to the other one.
      await client.admin().listTopics();
      expect(broker.seen.metadata).toBe(1);
      expect(other.seen.metadata).toBe(2);
      await client.close();
    } finally {
      await other.close();
    }
  });

  it('rejects a malformed bootstrap address', () => {
    expect(() => new MqClient({ bootstrap: 'http://x:y:z' })).toThrow(/is not host:port/);
    expect(() => new MqClient({ bootstrap: '' })).toThrow(/at least one/);
  });

  it('works with unmasked (all-zero key) frames when asked', async () => {
    const conn = await Connection.open({ ...opts(broker.address), maskFrames: false });
    const r = await conn.request('metadata', { topics: ['one'] });
    expect(r.topics![0]!.name).toBe('one');
    conn.close();
  });
});
