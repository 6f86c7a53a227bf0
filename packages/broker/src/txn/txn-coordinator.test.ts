/**
 * The transaction coordinator with an in-memory `__transaction_state` and a
 * scripted marker writer (a unit test: the real markers, logs and failover
 * run in test/transactions.test.ts and e2e/transactions.test.ts). The
 * scenarios: two-phase completion across a coordinator failover (prepared
 * in the log, markers not yet written: the next coordinator writes them and
 * completes), a failed state write changing nothing, fencing, and the
 * timeout abort.
 */
import { ManualTime, silentLogger } from '@mq/protocol/components';
import { MqError } from '@mq/protocol/errors';
import { MemoryOffsetsLog } from '../group/offsets-log.js';
import { TxnCoordinator, type TopicPartition, type TxnMarker } from './txn-coordinator.js';

function setup(log = new MemoryOffsetsLog(1), time = new ManualTime(), expirationMs?: number) {
  const markers: TxnMarker[] = [];
  let failMarkers = 0;
  let nextPid = 100;
  const c = new TxnCoordinator(
    { partitionCount: 1, maxTimeoutMs: 60_000, abortCheckIntervalMs: 100, offsetsPartitionCount: () => 1, ...(expirationMs ? { expirationMs } : {}) },
    {
      log,
      allocateProducerId: async () => nextPid++,
      writeMarkers: async (m): Promise<TopicPartition[]> => {
        if (failMarkers > 0) {
          failMarkers--;
          return m.partitions; // leaders unavailable: retried
        }
        markers.push(m);
        return [];
      },
      partitionProblem: (topic, partition) => (topic === 'orders' && partition < 2 ? undefined : new MqError('UNKNOWN_TOPIC_OR_PARTITION', `no ${topic}-${partition}`)),
      clock: time.clock,
      timers: time,
      logger: silentLogger,
    },
  );
  return { c, log, time, markers, failMarkers: (n: number) => (failMarkers = n) };
}

/** Lets queued promise reactions and due timers run. */
async function settle(time: ManualTime, ms = 0): Promise<void> {
  for (let i = 0; i < 20; i++) {
    await new Promise((r) => setImmediate(r));
    if (ms > 0) time.advance(ms / 20);
  }
}

const orders0 = { topic: 'orders', partition: 0 };
const orders1 = { topic: 'orders', partition: 1 };

test('a coordinator that takes over a prepared commit writes its markers and completes it', async () => {
  const a = setup();
  await a.c.loadPartition(0);
  const { producerId, producerEpoch } = await a.c.initProducerId('tx', 10_000);
  const req = { transactionalId: 'tx', producerId, producerEpoch };
  await a.c.addPartitions(req, [orders0, orders1]);
  a.failMarkers(1000); // every leader unreachable: PrepareCommit is in the log, no marker is written
  const ending = a.c.endTxn(req, true, 50);
  await settle(a.time, 200);
  await ending; // answered: the decision is durable
  expect(a.c.describe('tx')?.state).toBe('PrepareCommit');
  expect(a.markers).toEqual([]);
  // Failover: this coordinator loses the partition; another loads the same log.
  a.c.unloadPartition(0);
  a.c.close();
  const b = setup(a.log, a.time);
  await b.c.loadPartition(0);
  await settle(b.time, 100);
  expect(b.markers).toEqual([{ producerId, producerEpoch, committed: true, partitions: [orders0, orders1] }]);
  expect(b.c.describe('tx')?.state).toBe('CompleteCommit');
  // A retried EndTxn(commit) of the client succeeds; an abort of the committed transaction does not.
  await expect(b.c.endTxn(req, true)).resolves.toBeUndefined();
  await expect(b.c.endTxn(req, false)).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
  b.c.close();
});

test('a state write that fails changes nothing; bad partitions add none', async () => {
  const s = setup();
  await s.c.loadPartition(0);
  const { producerId, producerEpoch } = await s.c.initProducerId('tx', 10_000);
  const req = { transactionalId: 'tx', producerId, producerEpoch };
  await expect(s.c.addPartitions(req, [orders0, { topic: 'orders', partition: 7 }])).rejects.toMatchObject({ code: 'UNKNOWN_TOPIC_OR_PARTITION' });
  expect(s.c.describe('tx')?.state).toBe('Empty');
  s.log.failNext();
  await expect(s.c.addPartitions(req, [orders0])).rejects.toMatchObject({ code: 'STORAGE_ERROR' });
  expect(s.c.describe('tx')).toMatchObject({ state: 'Empty', partitions: [] });
  await s.c.addPartitions(req, [orders0]);
  expect(s.c.describe('tx')).toMatchObject({ state: 'Ongoing', partitions: [orders0] });
  s.c.close();
});

test('a new instance fences the old: the open transaction is aborted with a bumped epoch, the old epoch refused', async () => {
  const s = setup();
  await s.c.loadPartition(0);
  const first = await s.c.initProducerId('tx', 10_000);
  const old = { transactionalId: 'tx', ...first };
  await s.c.addPartitions(old, [orders0]);
  const second = await s.c.initProducerId('tx', 10_000);
  expect(second.producerId).toBe(first.producerId);
  expect(second.producerEpoch).toBeGreaterThan(first.producerEpoch + 1);
  expect(s.markers).toEqual([{ producerId: first.producerId, producerEpoch: first.producerEpoch + 1, committed: false, partitions: [orders0] }]);
  await expect(s.c.addPartitions(old, [orders1])).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
  await expect(s.c.endTxn(old, true)).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
  await expect(s.c.endTxn({ transactionalId: 'tx', ...second }, true)).rejects.toMatchObject({ code: 'INVALID_TXN_STATE' });
  s.c.close();
});

test('a transaction open past its timeout is aborted and its producer fenced', async () => {
  const s = setup();
  await s.c.loadPartition(0);
  const id = await s.c.initProducerId('tx', 1000);
  const req = { transactionalId: 'tx', ...id };
  await s.c.addPartitions(req, [orders0]);
  await settle(s.time, 900);
  expect(s.c.describe('tx')?.state).toBe('Ongoing');
  await settle(s.time, 400);
  expect(s.c.describe('tx')?.state).toBe('CompleteAbort');
  expect(s.markers).toEqual([{ producerId: id.producerId, producerEpoch: id.producerEpoch + 1, committed: false, partitions: [orders0] }]);
  await expect(s.c.endTxn(req, true)).rejects.toMatchObject({ code: 'PRODUCER_FENCED' });
  s.c.close();
});

test('requests for ids this coordinator does not load are refused; a timeout over the maximum too', async () => {
  const s = setup();
  await expect(s.c.initProducerId('tx', 1000)).rejects.toMatchObject({ code: 'NOT_COORDINATOR' });
  await s.c.loadPartition(0);
  await expect(s.c.initProducerId('tx', 60_001)).rejects.toMatchObject({ code: 'INVALID_TRANSACTION_TIMEOUT' });
  await expect(s.c.addPartitions({ transactionalId: 'nobody', producerId: 1, producerEpoch: 0 }, [orders0])).rejects.toMatchObject({ code: 'INVALID_PRODUCER_ID_MAPPING' });
  s.c.close();
});

test('an idle transactional id expires (a tombstone in the log); one with an open transaction does not', async () => {
  const s = setup(new MemoryOffsetsLog(1), new ManualTime(), 5_000);
  await s.c.loadPartition(0);
  const idle = await s.c.initProducerId('idle', 60_000);
  const busy = await s.c.initProducerId('busy', 60_000);
  await s.c.addPartitions({ transactionalId: 'busy', ...busy }, [orders0]);
  await settle(s.time, 6_000);
  expect(s.c.describe('idle')).toBeUndefined();
  expect(s.c.describe('busy')?.state).toBe('Ongoing');
  // Another coordinator loading the same log does not know it either.
  const b = setup(s.log, s.time, 5_000);
  await b.c.loadPartition(0);
  expect(b.c.describe('idle')).toBeUndefined();
  expect(b.c.describe('busy')?.state).toBe('Ongoing');
  // Its next InitProducerId starts afresh at epoch 0 with a freshly allocated id (a known id would get its epoch bumped).
  expect(idle.producerEpoch).toBe(0);
  const again = await b.c.initProducerId('idle', 60_000);
  expect(again.producerEpoch).toBe(0);
  s.c.close();
  b.c.close();
});
