/**
 * The idempotent producer against a real broker over the wire (raw frames,
 * no client library): InitProducerId hands out ids that survive restarts,
 * the same batch sent twice is stored once and answered with the same
 * offset, a gap in sequences is OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch
 * is INVALID_PRODUCER_EPOCH, and the state survives a restart.
 * (The SIGKILL variants run against broker processes in e2e/idempotent-producer.test.ts.)
 */
import { decodeBatchSync, encodeBatchSync, iterateBatches } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { createTopic, startTestBroker, TestClient, topicName, type TestBroker } from './helpers.js';

let t: TestBroker;
afterEach(async () => {
  await t.cleanup();
});

function batch(pid: number, seq: number, values: string[], epoch = 0): Buffer {
  return encodeBatchSync(
    values.map((value) => ({ value })),
    { producerId: pid, producerEpoch: epoch, baseSequence: seq },
  );
}

async function produce(
  c: TestClient,
  name: string,
  records: Buffer,
  acks = -1,
  apiVersion = 1,
): Promise<{ errorCode: number; errorMessage: string; baseOffset: number; batchBaseOffsets: number[] }> {
  const r = await c.request({ apiVersion, produce: { acks, topics: [{ name, partitions: [{ partition: 0, records }] }] } });
  const p = r.produce!.topics[0]!.partitions[0]!;
  return { errorCode: p.errorCode, errorMessage: p.errorMessage, baseOffset: Number(p.baseOffset), batchBaseOffsets: p.batchBaseOffsets.map(Number) };
}

async function values(c: TestClient, name: string): Promise<string[]> {
  const f = await c.request({ fetch: { topics: [{ name, partitions: [{ partition: 0, fetchOffset: 0 }] }] } });
  const buf = Buffer.from(f.fetch!.topics[0]!.partitions[0]!.records);
  return [...iterateBatches(buf)].flatMap((s) => decodeBatchSync(buf, s.position).records.map((r) => `${r.offset}:${r.value}`));
}

async function initProducerId(c: TestClient, transactionalId = ''): Promise<{ errorCode: number; errorMessage: string; producerId: number; producerEpoch: number }> {
  const r = await c.request({ initProducerId: { transactionalId } });
  const p = r.initProducerId!;
  return { errorCode: p.errorCode, errorMessage: p.errorMessage, producerId: Number(p.producerId), producerEpoch: p.producerEpoch };
}

describe('idempotent producer on one broker', () => {
  it('InitProducerId hands out new ids with epoch 0, never reused after a restart; transactional ids go to their coordinator', async () => {
    t = await startTestBroker();
    let c = await TestClient.connect(t.url);
    const a = await initProducerId(c);
    const b = await initProducerId(c);
    expect(a).toMatchObject({ errorCode: 0, producerEpoch: 0 });
    expect(b.producerId).toBe(a.producerId + 1);
    // A transactional id goes to its transaction coordinator (test/transactions.test.ts): none before FindCoordinator key type 1 creates __transaction_state.
    const tx = await initProducerId(c, 'my-tx');
    expect(tx.errorCode).toBe(errorNumber('NOT_COORDINATOR'));
    await c.close();
    await t.restart();
    c = await TestClient.connect(t.url);
    const after = await initProducerId(c);
    expect(after.producerId).toBeGreaterThan(b.producerId);
    await c.close();
  });

  it('the same batch twice: one copy in the log and the same offset answered', async () => {
    t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('idem-dup');
    await createTopic(c, name, 1);
    const { producerId } = await initProducerId(c);
    await produce(c, name, encodeBatchSync([{ value: 'plain' }]));
    const first = await produce(c, name, batch(producerId, 0, ['a', 'b']));
    const again = await produce(c, name, batch(producerId, 0, ['a', 'b']));
    expect(first).toMatchObject({ errorCode: 0, baseOffset: 1 });
    expect(again).toMatchObject({ errorCode: 0, baseOffset: 1 });
    // acks=1 and an older batch among the last five: still the original offset.
    await produce(c, name, batch(producerId, 2, ['c']));
    expect(await produce(c, name, batch(producerId, 0, ['a', 'b']), 1)).toMatchObject({ errorCode: 0, baseOffset: 1 });
    expect(await values(c, name)).toEqual(['0:plain', '1:a', '2:b', '3:c']);
    await c.close();
  });

  it('a gap in sequences is OUT_OF_ORDER_SEQUENCE_NUMBER, an old epoch INVALID_PRODUCER_EPOCH, an unknown id UNKNOWN_PRODUCER_ID; none is written', async () => {
    t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('idem-order');
    await createTopic(c, name, 1);
    const { producerId } = await initProducerId(c);
    expect(await produce(c, name, batch(producerId, 0, ['a'], 1))).toMatchObject({ errorCode: 0 });
    const gap = await produce(c, name, batch(producerId, 2, ['c'], 1));
    expect(gap.errorCode).toBe(errorNumber('OUT_OF_ORDER_SEQUENCE_NUMBER'));
    expect(gap.errorMessage).toContain('expected 1');
    const old = await produce(c, name, batch(producerId, 1, ['b'], 0));
    expect(old.errorCode).toBe(errorNumber('INVALID_PRODUCER_EPOCH'));
    const unknown = await produce(c, name, batch(producerId + 100, 4, ['x']));
    expect(unknown.errorCode).toBe(errorNumber('UNKNOWN_PRODUCER_ID'));
    expect(await produce(c, name, batch(producerId, 1, ['b'], 1))).toMatchObject({ errorCode: 0, baseOffset: 1 });
    expect(await values(c, name)).toEqual(['0:a', '1:b']);
    await c.close();
  });

  it('several batches of one partition in one request are checked in order', async () => {
    t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('idem-multi');
    await createTopic(c, name, 1);
    const { producerId } = await initProducerId(c);
    const two = Buffer.concat([batch(producerId, 0, ['a', 'b']), batch(producerId, 2, ['c'])]);
    expect(await produce(c, name, two)).toMatchObject({ errorCode: 0, baseOffset: 0 });
    expect(await produce(c, name, two)).toMatchObject({ errorCode: 0, baseOffset: 0 });
    const bad = Buffer.concat([batch(producerId, 3, ['d']), batch(producerId, 5, ['f'])]);
    expect((await produce(c, name, bad)).errorCode).toBe(errorNumber('OUT_OF_ORDER_SEQUENCE_NUMBER'));
    expect(await values(c, name)).toEqual(['0:a', '1:b', '2:c']);
    await c.close();
  });

  it('regression (issue 12): a retry that gained a batch after another producer wrote answers each batch its own offsets (v1), and is refused to a v0 request', async () => {
    t = await startTestBroker();
    const c = await TestClient.connect(t.url);
    const name = topicName('idem-gained');
    await createTopic(c, name, 1);
    const { producerId } = await initProducerId(c);
    const b1 = batch(producerId, 0, ['a']);
    expect(await produce(c, name, b1)).toMatchObject({ errorCode: 0, baseOffset: 0, batchBaseOffsets: [] });
    await produce(c, name, encodeBatchSync([{ value: 'other-1' }, { value: 'other-2' }]));
    const retry = Buffer.concat([b1, batch(producerId, 1, ['b', 'c'])]);
    expect(await produce(c, name, retry)).toMatchObject({ errorCode: 0, baseOffset: 0, batchBaseOffsets: [0, 3] });
    // A v0 client would resolve b, c at 1-2 (another producer's records) from one base offset: it gets no offsets at all.
    const v0 = await produce(c, name, retry, -1, 0);
    expect(v0).toMatchObject({ errorCode: errorNumber('UNSUPPORTED_VERSION'), baseOffset: -1 });
    expect(v0.errorMessage).toContain('upgrade the client to produce v1');
    expect(await values(c, name)).toEqual(['0:a', '1:other-1', '2:other-2', '3:b', '4:c']);
    await c.close();
  });

  it('the producer state survives a clean restart: a retry after it is still a duplicate', async () => {
    t = await startTestBroker();
    let c = await TestClient.connect(t.url);
    const name = topicName('idem-restart');
    await createTopic(c, name, 1);
    const { producerId } = await initProducerId(c);
    await produce(c, name, batch(producerId, 0, ['a']));
    await produce(c, name, batch(producerId, 1, ['b', 'c']));
    await c.close();
    await t.restart();
    c = await TestClient.connect(t.url);
    expect(await produce(c, name, batch(producerId, 1, ['b', 'c']))).toMatchObject({ errorCode: 0, baseOffset: 1 });
    expect((await produce(c, name, batch(producerId, 4, ['e']))).errorCode).toBe(errorNumber('OUT_OF_ORDER_SEQUENCE_NUMBER'));
    expect(await produce(c, name, batch(producerId, 3, ['d']))).toMatchObject({ errorCode: 0, baseOffset: 3 });
    expect(await values(c, name)).toEqual(['0:a', '1:b', '2:c', '3:d']);
    await c.close();
  });
});
