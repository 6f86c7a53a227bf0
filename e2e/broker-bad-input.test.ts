/**
 * Every bad input of issue 3 against a real broker process: each gets an
 * error response (or a close with a reason where no correlation id is
 * readable); the broker keeps answering everyone and loses nothing.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { decodeBatchSync, encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { cleanup, makeTempDir, startBroker, uniqueName, type BrokerProcess } from './src/harness.js';
import { TestClient } from '../packages/broker/test/wire-client.js';

const MAX_FRAME = 256 * 1024;

describe('bad input against a running broker', () => {
  let broker: BrokerProcess;
  let url: string;
  let topic: string;
  let watcher: TestClient;

  beforeAll(async () => {
    const dir = await makeTempDir('mq-e2e-cfg-');
    const config = path.join(dir, 'broker.properties');
    await writeFile(config, `max.frame.bytes=${MAX_FRAME}\nmessage.max.bytes=65536\n`);
    broker = await startBroker({ args: ['--config', config] });
    url = `ws://${broker.bootstrap}`;
    watcher = await TestClient.connect(url);
    topic = uniqueName('bad');
    const r = await watcher.request({ createTopics: { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1 }] } });
    expect(r.createTopics!.results[0]!.errorCode).toBe(0);
    const p = await watcher.request({ produce: { acks: -1, topics: [{ name: topic, partitions: [{ partition: 0, records: encodeBatchSync([{ value: 'precious' }]) }] }] } });
    expect(p.produce!.topics[0]!.partitions[0]!.baseOffset).toBe(0);
  });

  afterEach(async () => {
    // The broker still answers on an existing connection and the record written first is intact.
    const f = await watcher.request({ fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
    const p = f.fetch!.topics[0]!.partitions[0]!;
    expect(p.errorCode).toBe(0);
    expect(decodeBatchSync(Buffer.from(p.records), 0).records[0]!.value!.toString()).toBe('precious');
    expect(broker.exited).toBe(false);
  });

  afterAll(async () => {
    await watcher.close();
    await cleanup();
  });

  const produceErr = async (c: TestClient, records: Buffer, acks = 1, name = topic, partition = 0) => {
    const r = await c.request({ produce: { acks, topics: [{ name, partitions: [{ partition, records }] }] } });
    return r.produce!.topics[0]!.partitions[0]!.errorCode;
  };

  it('a frame that does not decode: closed with 1007 and a reason', async () => {
    const c = await TestClient.connect(url);
    c.sendRaw(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]));
    const closed = await c.closed;
    expect(closed.code).toBe(1007);
    expect(closed.reason.length).toBeGreaterThan(0);
  });

  it('a frame over max.frame.bytes: closed with 1009', async () => {
    const c = await TestClient.connect(url);
    c.sendRaw(Buffer.alloc(MAX_FRAME + 1));
    expect((await c.closed).code).toBe(1009);
  });

  it('an unknown API: INVALID_REQUEST; an unsupported version: UNSUPPORTED_VERSION', async () => {
    const c = await TestClient.connect(url);
    c.sendRaw(Buffer.from([0x08, 0x2a, 0x9a, 0x06, 0x00]));
    await new Promise((r) => c.ws.once('message', r));
    expect(c.unmatched[0]).toMatchObject({ correlationId: 42, errorCode: errorNumber('INVALID_REQUEST') });
    expect((await c.request({ apiVersion: 1000, fetch: {} })).errorCode).toBe(errorNumber('UNSUPPORTED_VERSION'));
    await c.close();
  });

  it('a batch with a bad CRC or a lying length: CORRUPT_MESSAGE; too large: RECORD_TOO_LARGE', async () => {
    const c = await TestClient.connect(url);
    const flipped = encodeBatchSync([{ value: 'abc' }]);
    flipped[flipped.length - 1]! ^= 1;
    expect(await produceErr(c, flipped)).toBe(errorNumber('CORRUPT_MESSAGE'));
    const lying = encodeBatchSync([{ value: 'abc' }]);
    lying.writeInt32BE(1_000_000, 8);
    expect(await produceErr(c, lying)).toBe(errorNumber('CORRUPT_MESSAGE'));
    expect(await produceErr(c, encodeBatchSync([{ value: Buffer.alloc(100_000) }]))).toBe(errorNumber('RECORD_TOO_LARGE'));
    await c.close();
  });

  it('negative and absurd offsets: OFFSET_OUT_OF_RANGE', async () => {
    const c = await TestClient.connect(url);
    for (const fetchOffset of [-1, 2 ** 50]) {
      const f = await c.request({ fetch: { topics: [{ name: topic, partitions: [{ partition: 0, fetchOffset }] }] } });
      expect(f.fetch!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('OFFSET_OUT_OF_RANGE'));
    }
    await c.close();
  });

  it('an invalid topic name: INVALID_TOPIC; acks other than 0/1/all: INVALID_REQUIRED_ACKS', async () => {
    const c = await TestClient.connect(url);
    const created = await c.request({ createTopics: { topics: [{ name: 'no spaces allowed', numPartitions: 1 }] } });
    expect(created.createTopics!.results[0]!.errorCode).toBe(errorNumber('INVALID_TOPIC'));
    expect(await produceErr(c, encodeBatchSync([{ value: 'x' }]), 1, '../../etc')).toBe(errorNumber('INVALID_TOPIC'));
    expect(await produceErr(c, encodeBatchSync([{ value: 'x' }]), 7)).toBe(errorNumber('INVALID_REQUIRED_ACKS'));
    await c.close();
  });

  it('bad HTTP input: JSON errors with the right status', async () => {
    const post = (p: string, body: string) =>
      fetch(`${broker.httpUrl}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const notJson = await post('/topics', '{');
    expect(notJson.status).toBe(400);
    expect(((await notJson.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    expect((await post('/topics/missing-topic/records', '{"value":"x"}')).status).toBe(404);
    expect((await post('/topics', JSON.stringify({ name: topic }))).status).toBe(409);
    expect((await fetch(`${broker.httpUrl}/topics/${topic}/partitions/0/records?offset=-3`)).status).toBe(400);
  });
});

describe('a slow client against a running broker', () => {
  afterAll(async () => {
    await cleanup();
  });

  it('a client that stops reading does not make the broker buffer without bound', async () => {
    const rss = async () => {
      const text = await (await fetch(`${broker.httpUrl}/metrics`)).text();
      return Number(/^process_resident_memory_bytes (\d+)$/m.exec(text)![1]);
    };
    // 1 MiB of data to fetch again and again.
    const broker = await startBroker();
    const url = `ws://${broker.bootstrap}`;
    const writer = await TestClient.connect(url);
    const name = uniqueName('slow');
    await writer.request({ createTopics: { topics: [{ name, numPartitions: 1, replicationFactor: 1 }] } });
    for (let i = 0; i < 32; i++) {
      await writer.request({ produce: { acks: 1, topics: [{ name, partitions: [{ partition: 0, records: encodeBatchSync([{ value: Buffer.alloc(32 * 1024, i) }]) }] }] } });
    }
    await writer.close();
    const before = await rss();
    // The slow client asks for 400 x 1 MiB (400 MiB of responses) and reads none of it.
    const slow = await TestClient.connect(url);
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    const n = 400;
    const pending = Array.from({ length: n }, () =>
      slow.request({ fetch: { maxBytes: 1 << 20, topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0, partitionMaxBytes: 1 << 20 }] }] } }, 60_000),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const during = await rss();
    // Bounded: the send buffer limit plus a few fetches in flight, far below the 400 MiB asked for.
    expect(during - before).toBeLessThan(150 * 1024 * 1024);
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const responses = await Promise.all(pending);
    // Every response arrives, each with about 1 MiB of whole batches.
    expect(responses.every((r) => r.fetch!.topics[0]!.partitions[0]!.records.length > 900 * 1024)).toBe(true);
    await slow.close();
  });
});
