/**
 * Transactions on a real broker (startBroker, real files and sockets) with
 * the client library: commit and abort visibility for read_committed and
 * read_uncommitted consumers, the last stable offset holding back an open
 * transaction, zombie fencing by a new instance, the coordinator's timeout
 * abort, bad input (typed errors, nothing changed) and the state surviving
 * a restart (the coordinator finishes nothing twice; an open transaction is
 * still open, then aborted by the new instance).
 */
import { MqClient, type Producer } from '@mq/client';
import { encodeBatchSync } from '@mq/protocol/batch';
import { errorNumber } from '@mq/protocol/errors';
import { startTestBroker, TestClient, topicName, waitFor, type TestBroker } from './helpers.js';

const TXN_CONFIG = { 'transaction.state.log.num.partitions': '2', 'transaction.abort.timed.out.transaction.cleanup.interval.ms': '100' };

let t: TestBroker;
let client: MqClient;
afterEach(async () => {
  await client?.close().catch(() => undefined);
  await t?.cleanup();
});

async function setup(topicPartitions = 2): Promise<string> {
  t = await startTestBroker(TXN_CONFIG);
  client = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}`, clientId: 'txn-test' });
  const topic = topicName('txn');
  await client.admin().createTopic(topic, { numPartitions: topicPartitions, replicationFactor: 1 });
  return topic;
}

/** Everything a consumer with `isolationLevel` reads from every partition of `topic`, until `expected` records or `ms` passed. */
async function readAll(topic: string, partitions: number, isolationLevel: 'read_committed' | 'read_uncommitted', expected: number, ms = 3000): Promise<string[]> {
  const c = client.consumer({ isolationLevel, autoOffsetReset: 'earliest', maxWaitMs: 100 });
  c.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: 0 })));
  const out: string[] = [];
  const deadline = Date.now() + ms;
  try {
    while (Date.now() < deadline && out.length < expected) {
      for (const r of await c.poll(200)) out.push(r.value!.toString());
    }
    // A little longer: nothing more may come.
    for (const r of await c.poll(300)) out.push(r.value!.toString());
  } finally {
    await c.close();
  }
  return out.sort();
}

function txProducer(id: string, extra: { transactionTimeoutMs?: number } = {}): Producer {
  return client.producer({ transactionalId: id, lingerMs: 0, ...extra });
}

describe('transactions on one broker', () => {
  it('a committed transaction is visible to read_committed, an aborted one only to read_uncommitted; markers are never records', async () => {
    const topic = await setup();
    const p = txProducer('tx-visibility');
    await p.initTransactions();
    await p.beginTransaction();
    await Promise.all([p.send(topic, { key: 'a', value: 'c1', partition: 0 }), p.send(topic, { value: 'c2', partition: 1 })]);
    await p.commitTransaction();
    await p.transaction(async (tx) => {
      await tx.send(topic, { value: 'c3', partition: 0 });
    });
    await p.beginTransaction();
    await p.send(topic, { value: 'x1', partition: 0 });
    await p.send(topic, { value: 'x2', partition: 1 });
    await p.abortTransaction();
    await expect(
      p.transaction(async (tx) => {
        await tx.send(topic, { value: 'x3', partition: 1 });
        throw new Error('the application failed');
      }),
    ).rejects.toThrow('the application failed');
    await p.transaction(async (tx) => {
      await tx.send(topic, { value: 'c4', partition: 1 });
    });
    expect(await readAll(topic, 2, 'read_committed', 4)).toEqual(['c1', 'c2', 'c3', 'c4']);
    // __transaction_state exists now and is internal: not listed, not writable by producers.
    expect(await client.admin().listTopics()).not.toContain('__transaction_state');
    await expect(client.producer().send('__transaction_state', { value: 'x' })).rejects.toMatchObject({ code: expect.any(String) });
    expect(await readAll(topic, 2, 'read_uncommitted', 7)).toEqual(['c1', 'c2', 'c3', 'c4', 'x1', 'x2', 'x3']);
    await p.close();
  });

  it('an open transaction holds read_committed consumers at its first offset (the LSO) until it ends', async () => {
    const topic = await setup(1);
    const plain = client.producer();
    await plain.send(topic, { value: 'before' });
    const p = txProducer('tx-lso');
    await p.beginTransaction();
    await p.send(topic, { value: 'open' });
    await plain.send(topic, { value: 'after' }); // committed, but behind the open transaction
    expect(await readAll(topic, 1, 'read_committed', 2, 800)).toEqual(['before']);
    expect(await readAll(topic, 1, 'read_uncommitted', 3)).toEqual(['after', 'before', 'open']);
    await p.commitTransaction();
    expect(await readAll(topic, 1, 'read_committed', 3)).toEqual(['after', 'before', 'open']);
    await p.close();
    await plain.close();
  });

  it('a new instance with the same transactional id fences the old one; its open transaction is aborted', async () => {
    const topic = await setup(1);
    const zombie = txProducer('tx-fence');
    await zombie.beginTransaction();
    await zombie.send(topic, { value: 'zombie-1' });
    const fresh = txProducer('tx-fence');
    await fresh.initTransactions();
    // The zombie's open transaction was aborted by the new instance's InitProducerId.
    await expect(zombie.send(topic, { value: 'zombie-2' })).rejects.toMatchObject({ code: expect.stringMatching(/INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/) });
    await expect(zombie.commitTransaction()).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
    await expect(zombie.beginTransaction()).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
    await fresh.transaction(async (tx) => {
      await tx.send(topic, { value: 'fresh' });
    });
    expect(await readAll(topic, 1, 'read_committed', 1)).toEqual(['fresh']);
    expect(await readAll(topic, 1, 'read_uncommitted', 2)).toEqual(['fresh', 'zombie-1']);
    await fresh.close();
    await zombie.close().catch(() => undefined);
  });

  it('offsets sent in a transaction become the group\'s only when it commits', async () => {
    const topic = await setup(1);
    const group = topicName('txn-group');
    const committed = async (): Promise<number> => {
      try {
        const d = await client.groups().describeGroup(group);
        return d.offsets.find((o) => o.topic === topic && o.partition === 0)?.committedOffset ?? -1;
      } catch (err) {
        if ((err as { code?: string }).code === 'GROUP_ID_NOT_FOUND') return -1;
        throw err;
      }
    };
    const p = txProducer('tx-offsets');
    await p.beginTransaction();
    await p.sendOffsetsToTransaction([{ topic, partition: 0, offset: 0 }], { groupId: group });
    await p.send(topic, { value: 'r1' });
    await p.send(topic, { value: 'r2' });
    await p.sendOffsetsToTransaction([{ topic, partition: 0, offset: 2 }], { groupId: group });
    expect(await committed()).toBe(-1);
    await p.commitTransaction();
    await waitFor(async () => (await committed()) === 2, 3000);
    await p.beginTransaction();
    await p.sendOffsetsToTransaction([{ topic, partition: 0, offset: 1 }], { groupId: group });
    await p.abortTransaction();
    expect(await committed()).toBe(2);
    // The coordinator's state survives a restart: committed offsets stay, the aborted ones never apply.
    await client.close();
    await t.restart({ ...TXN_CONFIG });
    client = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}`, clientId: 'txn-test' });
    expect(await committed()).toBe(2);
  });

  it('bad input: typed errors, nothing changed', async () => {
    const topic = await setup(1);
    const p = txProducer('tx-bad');
    await expect(p.send(topic, { value: 'outside' })).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    await expect(p.commitTransaction()).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    await p.initTransactions();
    await expect(p.send(topic, { value: 'outside' })).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    await expect(p.abortTransaction()).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    await p.beginTransaction();
    await expect(p.beginTransaction()).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    await p.abortTransaction();
    const plain = client.producer();
    await expect(plain.beginTransaction()).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
    expect(() => client.producer({ transactionalId: 'x', idempotent: false })).toThrow(expect.objectContaining({ code: 'INVALID_CONFIG' }));

    // Over the wire: the coordinator refuses unknown partitions (all or nothing), a wrong producer id, a stale epoch, a commit without begin.
    const c = await TestClient.connect(t.url);
    const find = await c.request({ findCoordinator: { key: 'tx-wire', keyType: 1 } });
    expect(find.findCoordinator!.errorCode).toBe(0);
    const init = (await c.request({ initProducerId: { transactionalId: 'tx-wire', transactionTimeoutMs: 10_000 } })).initProducerId!;
    expect(init.errorCode).toBe(0);
    const base = { transactionalId: 'tx-wire', producerId: init.producerId, producerEpoch: init.producerEpoch };
    const add = (topics: Array<{ name: string; partitions: number[] }>, over = {}) => c.request({ addPartitionsToTxn: { ...base, ...over, topics } }).then((r) => r.addPartitionsToTxn!);
    expect(await add([{ name: topic, partitions: [0, 5] }])).toMatchObject({ errorCode: errorNumber('UNKNOWN_TOPIC_OR_PARTITION') });
    expect(await add([{ name: topicName('missing'), partitions: [0] }])).toMatchObject({ errorCode: errorNumber('UNKNOWN_TOPIC_OR_PARTITION') });
    expect(await add([{ name: topic, partitions: [0] }], { producerId: Number(init.producerId) + 1000 })).toMatchObject({ errorCode: errorNumber('INVALID_PRODUCER_ID_MAPPING') });
    expect((await c.request({ endTxn: { ...base, committed: true } })).endTxn).toMatchObject({ errorCode: errorNumber('INVALID_TXN_STATE') });
    const tooLong = (await c.request({ initProducerId: { transactionalId: 'tx-wire', transactionTimeoutMs: 999_999_999 } })).initProducerId!;
    expect(tooLong.errorCode).toBe(errorNumber('INVALID_TRANSACTION_TIMEOUT'));
    const again = (await c.request({ initProducerId: { transactionalId: 'tx-wire', transactionTimeoutMs: 10_000 } })).initProducerId!;
    expect(again.producerEpoch).toBe(init.producerEpoch + 1);
    expect(await add([{ name: topic, partitions: [0] }])).toMatchObject({ errorCode: errorNumber('PRODUCER_FENCED') });
    // Markers are the coordinator's: refused on the client port, and control batches are refused in a produce.
    const markers = await c.request({ writeTxnMarkers: { markers: [{ producerId: init.producerId, producerEpoch: 0, committed: true, topics: [{ name: topic, partitions: [0] }] }] } });
    expect(markers.errorCode).toBe(errorNumber('INVALID_REQUEST'));
    // A transactional batch in a produce that names no transactional id is refused: otherwise any writer could
    // open a transaction no coordinator knows and hold read_committed readers at its first offset for ever.
    const sneaky = encodeBatchSync([{ value: 'sneaky' }], { producerId: Number(again.producerId), producerEpoch: again.producerEpoch, baseSequence: 0, transactional: true });
    const refused = await c.request({ produce: { acks: -1, timeoutMs: 5000, topics: [{ name: topic, partitions: [{ partition: 0, records: sneaky }] }] } });
    expect(refused.produce!.topics[0]!.partitions[0]!.errorCode).toBe(errorNumber('INVALID_RECORD'));
    const lso = await c.request({ listOffsets: { isolationLevel: 1, topics: [{ name: topic, partitions: [{ partition: 0, timestamp: -1 }] }] } });
    expect(lso.listOffsets!.topics[0]!.partitions[0]!).toMatchObject({ errorCode: 0, offset: 0 });
    await c.close();
    expect(await readAll(topic, 1, 'read_uncommitted', 1, 500)).toEqual([]);
    await p.close();
    await plain.close();
  });

  it('the coordinator aborts a transaction open past its timeout and fences its producer', async () => {
    const topic = await setup(1);
    const p = txProducer('tx-timeout', { transactionTimeoutMs: 300 });
    await p.beginTransaction();
    await p.send(topic, { value: 'abandoned' });
    await waitFor(() => t.lines.some((l) => l.msg === 'aborting a transaction open past its timeout'), 5000);
    await expect(p.commitTransaction()).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
    const plain = client.producer();
    await plain.send(topic, { value: 'later' });
    expect(await readAll(topic, 1, 'read_committed', 1)).toEqual(['later']);
    await plain.close();
    await p.close().catch(() => undefined);
  });

  it('a restart keeps the transaction state, the open transaction and the aborted index', async () => {
    const topic = await setup(1);
    const p = txProducer('tx-restart');
    await p.transaction(async (tx) => {
      await tx.send(topic, { value: 'committed' });
    });
    await p.beginTransaction();
    await p.send(topic, { value: 'aborted' });
    await p.abortTransaction();
    await p.beginTransaction();
    await p.send(topic, { value: 'open' });
    await client.close();
    await t.restart({ ...TXN_CONFIG });
    client = new MqClient({ bootstrap: `127.0.0.1:${t.broker.port}`, clientId: 'txn-test' });
    // Still open: read_committed stops before it.
    expect(await readAll(topic, 1, 'read_committed', 2, 800)).toEqual(['committed']);
    const next = txProducer('tx-restart');
    await next.initTransactions(); // aborts the open transaction of the previous instance
    expect(await readAll(topic, 1, 'read_committed', 1)).toEqual(['committed']);
    expect(await readAll(topic, 1, 'read_uncommitted', 3)).toEqual(['aborted', 'committed', 'open']);
    await next.close();
  });
});
